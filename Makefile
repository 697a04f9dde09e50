# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# vgmem top-level build. Everything userspace lands in build/; sources are
# found by wildcard, so a new .c file is picked up without editing this file.
# `make help` lists the targets.

CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif
AR ?= ar

BUILD := build
.DEFAULT_GOAL := all
SHELL := /bin/bash

# ---- flags -------------------------------------------------------------------
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -D_GNU_SOURCE -I. \
	$(DRM_CFLAGS) -MMD -MP
# Warnings the module build (W=1) gives, so portable code fails here first.
PORTABLE_CFLAGS := -Wmissing-prototypes -Wold-style-definition -Wvla
PLAIN_OPT := -O2
ASAN_OPT := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDLIBS := -ljansson -lpthread -lm
TEST_LDLIBS := -lcmocka $(LDLIBS)

# ---- sources -------------------------------------------------------------------
CORE_SRCS := $(filter-out host-module/os/os_kernel.c, \
	$(wildcard host-module/os/*.c host-module/core/*.c host-module/sim/*.c))
GUEST_SRCS := $(wildcard guest-driver/lib/*.c)
HOST_SRCS := $(wildcard host-module/user/*.c)
SIM_SRCS := $(wildcard tools/vgmem-sim/*.c)
UNIT_MAINS := $(wildcard tests/unit/test_*.c)
UNIT_SUPPORT := $(filter-out $(UNIT_MAINS),$(wildcard tests/unit/*.c))
INTEG_MAINS := $(wildcard tests/integration/test_*.c)
INTEG_SUPPORT := $(filter-out $(INTEG_MAINS),$(wildcard tests/integration/*.c))
BENCH_MAINS := $(wildcard tests/bench/bench_*.c)
BENCH_SUPPORT := $(filter-out $(BENCH_MAINS),$(wildcard tests/bench/*.c))

LIB_NAMES := vghost vgmem vgcore	# link order: host needs guest and core
obj = $(patsubst %.c,$(1)/obj/%.o,$(2))

# $(1): variant directory (build or build/asan)
define variant
$(1)/lib/libvgcore.a: $(call obj,$(1),$(CORE_SRCS))
$(1)/lib/libvgmem.a: $(call obj,$(1),$(GUEST_SRCS))
$(1)/lib/libvghost.a: $(call obj,$(1),$(HOST_SRCS))
$(1)_LIBS := $(foreach l,$(LIB_NAMES),$(1)/lib/lib$(l).a)
$(1)_BIN := $(if $(SIM_SRCS),$(1)/bin/vgmem-sim)
$(1)_UNIT := $(patsubst tests/unit/%.c,$(1)/tests/unit/%,$(UNIT_MAINS))
$(1)_INTEG := $(patsubst tests/integration/%.c,$(1)/tests/integration/%,$(INTEG_MAINS))
$(1)_TESTS := $$($(1)_UNIT) $$($(1)_INTEG)

$(1)/bin/vgmem-sim: $(call obj,$(1),$(SIM_SRCS)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $(call obj,$(1),$(SIM_SRCS)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(LDLIBS)

$(1)/tests/unit/%: $(1)/obj/tests/unit/%.o $(call obj,$(1),$(UNIT_SUPPORT)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(UNIT_SUPPORT)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

$(1)/tests/integration/%: $(1)/obj/tests/integration/%.o $(call obj,$(1),$(INTEG_SUPPORT)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(INTEG_SUPPORT)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

# Portable code gets the module's extra warnings.
$(1)/obj/host-module/os/%.o: host-module/os/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(PORTABLE_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/host-module/core/%.o: host-module/core/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(PORTABLE_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/host-module/sim/%.o: host-module/sim/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(PORTABLE_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@
endef

OPT_$(BUILD) := $(PLAIN_OPT)
OPT_$(BUILD)/asan := $(ASAN_OPT)
LDFLAGS_$(BUILD) :=
LDFLAGS_$(BUILD)/asan := -fsanitize=address,undefined
$(eval $(call variant,$(BUILD)))
$(eval $(call variant,$(BUILD)/asan))

# Rebuilt whole each time, so a deleted source leaves no stale member.
%.a:
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

BENCHES := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_MAINS))
$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(call obj,$(BUILD),$(BENCH_SUPPORT)) $($(BUILD)_LIBS)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(call obj,$(BUILD),$(BENCH_SUPPORT)) \
		-Wl,--start-group $($(BUILD)_LIBS) -Wl,--end-group $(LDLIBS)

ALL_SRCS := $(CORE_SRCS) $(GUEST_SRCS) $(HOST_SRCS) $(SIM_SRCS) $(UNIT_MAINS) \
	$(UNIT_SUPPORT) $(INTEG_MAINS) $(INTEG_SUPPORT) $(BENCH_MAINS) $(BENCH_SUPPORT)
-include $(patsubst %.o,%.d,$(call obj,$(BUILD),$(ALL_SRCS)) $(call obj,$(BUILD)/asan,$(ALL_SRCS)))

# Keep objects that only pattern rules mention.
.SECONDARY:

# ---- kernel module -------------------------------------------------------------
# The headers Debian's linux-headers-amd64 points at, not the running kernel:
# these machines may run another kernel than the one the module targets.
KVER ?= $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
KDIR ?= $(firstword $(wildcard /lib/modules/$(KVER)/build \
	/usr/src/linux-headers-$(KVER)))
MODULE_DIR := $(CURDIR)/host-module
MODULE_LOG := $(BUILD)/module.log

# ---- targets ------------------------------------------------------------------------
.PHONY: all asan tests check run bench module module-clean clean help deps \
	run-tests

all: $($(BUILD)_LIBS) $($(BUILD)_BIN) $($(BUILD)_TESTS)

asan: $($(BUILD)/asan_LIBS) $($(BUILD)/asan_BIN) $($(BUILD)/asan_TESTS)

tests: $($(BUILD)_TESTS) $($(BUILD)/asan_TESTS)

deps:
	@if [ "$$(id -u)" = 0 ]; then scripts/install-deps.sh; \
	else echo "deps: not root, not installing packages"; fi

# Runs each test with a time limit, stops at the first failure, and prints
# a closing "N passed, N failed" line counting cmocka test cases.
run-tests:
	@set -u; mkdir -p $(BUILD); log=$(BUILD)/test.log; : > $$log; \
	progs=0; \
	for t in $($(BUILD)_TESTS) $($(BUILD)/asan_TESTS); do \
		echo "== $$t"; \
		ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			timeout 300 ./$$t > $$log.one 2>&1; rc=$$?; \
		cat $$log.one; cat $$log.one >> $$log; \
		if [ $$rc -ne 0 ]; then \
			[ $$rc -eq 124 ] && echo "TIMEOUT (300 s): $$t"; \
			echo "FAILED: $$t (exit $$rc)"; \
			passed=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $$log | awk '{s+=$$1} END {print s+0}'); \
			echo "tests: $$passed passed, 1 failed"; \
			exit 1; \
		fi; \
		progs=$$((progs + 1)); \
	done; \
	passed=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $$log | awk '{s+=$$1} END {print s+0}'); \
	echo "ran $$progs test programs (plain and ASan/UBSan)"; \
	echo "tests: $$passed passed, 0 failed" | tee $(BUILD)/test-summary

check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all asan
	@$(MAKE) --no-print-directory run-tests
	@$(MAKE) --no-print-directory module
	@echo "check: OK: every test passed plain and under ASan/UBSan; the module built at W=1 without warnings"
	@cat $(BUILD)/test-summary

run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/bin/vgmem-sim demo --out $(BUILD)/run

bench: $(BENCHES)
	@set -e; for b in $(BENCHES); do echo "== $$b"; ./$$b; done

# Fails on any compiler or modpost warning: the module must build clean.
module:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "module: no kernel headers for '$(KVER)' (set KDIR, or run scripts/install-deps.sh)"; \
		exit 1; fi
	@mkdir -p $(BUILD)
	@set -o pipefail; $(MAKE) -C $(KDIR) M=$(MODULE_DIR) W=1 modules 2>&1 | tee $(MODULE_LOG)
	@if grep -qi 'warning' $(MODULE_LOG); then \
		echo "module: the kernel build printed warnings:"; \
		grep -i 'warning' $(MODULE_LOG); exit 1; fi
	@echo "module: built host-module/vgmem.ko against $(KDIR)"

module-clean:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C $(KDIR) M=$(MODULE_DIR) clean; fi

clean: module-clean
	rm -rf $(BUILD)

help:
	@echo "make            libraries, build/bin/vgmem-sim and the tests (plain)"
	@echo "make asan       the same under ASan/UBSan, in build/asan/"
	@echo "make check      install deps (as root), build all, run every test plain"
	@echo "                and under ASan/UBSan, then build the module warning-free"
	@echo "make run        build, then vgmem-sim demo --out build/run"
	@echo "make bench      build and run tests/bench/bench_*.c"
	@echo "make module     build host-module/vgmem.ko (KDIR=... overrides headers)"
	@echo "make clean      remove build/ and the module's products"
	@echo "make build/tests/unit/test_foo    build one test"
