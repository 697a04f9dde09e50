# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# The fuzzers (tests/fuzz/fuzz_*.c, docs/testing.md): libFuzzer with ASan and
# UBSan, built by Debian's clang into build/fuzz/ from the same sources as the
# other variants (the `variant` rules of the Makefile with CC = clang), each
# harness linked with every library (a static link takes what it needs).
#
#   make fuzz-bins       build them
#   make fuzz            each for FUZZ_SECONDS (default 300), corpus kept in
#                        build/fuzz/corpus/NAME, crashes in build/fuzz/crash/
#   make fuzz-check      (in make check) each over its seed corpus, then a
#                        short exploration: FUZZ_CHECK_SECONDS (default 60)
#                        shared among them
#   make fuzz FUZZERS=fuzz_ctrl   only some
#   make fuzz FUZZ_RUNS=10000000  each stops after that many executions too

FUZZ_CC ?= clang
FUZZ := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
OPT_$(FUZZ) := -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)
LDFLAGS_$(FUZZ) := -fsanitize=fuzzer $(FUZZ_SAN)
# Every object and library of the variant is built by clang.
$(FUZZ)/%: CC := $(FUZZ_CC)
$(eval $(call variant,$(FUZZ)))

FUZZ_MAINS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_SUPPORT := $(filter-out $(FUZZ_MAINS),$(wildcard tests/fuzz/*.c))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_MAINS))
FUZZ_BINS := $(addprefix $(FUZZ)/bin/,$(FUZZ_NAMES))
FUZZERS ?= $(FUZZ_NAMES)

$(FUZZ)/bin/fuzz_%: $(FUZZ)/obj/tests/fuzz/fuzz_%.o $(call obj,$(FUZZ),$(FUZZ_SUPPORT) $(SIM_TRACE_SRCS)) \
		$($(FUZZ)_MGMTD_LIBS) $($(FUZZ)_LIBS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(LDFLAGS_$(FUZZ)) -o $@ $< $(call obj,$(FUZZ),$(FUZZ_SUPPORT) $(SIM_TRACE_SRCS)) \
		-Wl,--start-group $($(FUZZ)_MGMTD_LIBS) $($(FUZZ)_LIBS) -Wl,--end-group \
		$(MGMTD_LDLIBS) $(NL_LIBS) $(LDLIBS)

-include $(patsubst %.o,%.d,$(call obj,$(FUZZ),$(ALL_SRCS) $(FUZZ_MAINS) $(FUZZ_SUPPORT)))

.PHONY: fuzz fuzz-bins fuzz-check
fuzz-bins: $(FUZZ_BINS)

FUZZ_SECONDS ?= 300
FUZZ_CHECK_SECONDS ?= 60
FUZZ_RUNS ?= 0
fuzz: fuzz-bins
	@tests/fuzz/run.sh --seconds $$(( $(FUZZ_SECONDS) * $(words $(FUZZERS)) )) \
		--runs $(FUZZ_RUNS) $(FUZZERS)

fuzz-check: fuzz-bins
	@tests/fuzz/run.sh --check --seconds $(FUZZ_CHECK_SECONDS) $(FUZZERS)
