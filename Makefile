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
# Every pkg-config module named here must have a 'pkgconfig' line in
# scripts/deps.list (tests/unit/test_deps.sh records the calls through
# PKG_CONFIG and fails on any module without one).
PKG_CONFIG ?= pkg-config
DRM_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdrm 2>/dev/null || echo -I/usr/include/libdrm)
# Include paths: the tree's root (its own headers by their path from it:
# "lib/util/size.h", "host-module/user/host.h"), host-module/ (what is
# compiled into the kernel modules names its headers from there, "core/vg.h",
# as Kbuild's -I$(src) has it), include/ (the ABIs as <uapi/NAME.h>) and
# guest-driver/include (<libvgmem.h>, as a tenant's program includes it).
# No source includes another folder's header by a ../ path.
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -D_GNU_SOURCE -I. -Iinclude \
	-Ihost-module -Iguest-driver/include \
	$(DRM_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP
# Warnings the module build (W=1) gives, so portable code fails here first.
PORTABLE_CFLAGS := -Wmissing-prototypes -Wold-style-definition -Wvla
PLAIN_OPT := -O2
ASAN_OPT := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
# ThreadSanitizer (make tsan): its own variant, as it cannot be combined
# with ASan.
TSAN_OPT := -O1 -fsanitize=thread -fno-omit-frame-pointer
LDLIBS := -ljansson -lpthread -lm
TEST_LDLIBS := -lcmocka $(LDLIBS)

# ---- sources -------------------------------------------------------------------
CORE_SRCS := $(filter-out host-module/os/os_kernel.c, \
	$(wildcard host-module/os/*.c host-module/core/*.c host-module/core/lrc/*.c \
	host-module/sim/*.c))
GUEST_SRCS := $(wildcard guest-driver/lib/*.c)
HOST_SRCS := $(wildcard host-module/user/*.c host-module/user/models/*.c)
SIM_SRCS := $(wildcard tools/vgmem-sim/*.c)
# Its request-trace reader: also linked by its unit test and fuzzer.
SIM_TRACE_SRCS := tools/vgmem-sim/reqtrace.c
# Its oracle's engine (Belady's MIN over chunks): pure C, tested alone.
SIM_ORACLE_SRCS := tools/vgmem-sim/oracle.c
# The tool without its main(), for the tests of its models.
SIM_LIB_SRCS := $(filter-out tools/vgmem-sim/main.c,$(SIM_SRCS))
# vgmem-guest: main() alone in vgmem-guest.c; integration tests link the rest.
# It links libvgmem (and lib/util, plain C it uses) alone: what a tenant
# installs. vgmem-guest-inproc is the same tool with the in-process host
# (tools/vgmem-guest-inproc/: --inproc), whose inproc.c the integration
# tests link too.
GUEST_TOOL_SRCS := $(wildcard guest-driver/tools/*.c)
GUEST_TOOL_SUPPORT := $(filter-out guest-driver/tools/vgmem-guest.c,$(GUEST_TOOL_SRCS))
INPROC_TOOL_SRCS := $(wildcard tools/vgmem-guest-inproc/*.c)
INPROC_TOOL_SUPPORT := $(filter-out tools/vgmem-guest-inproc/main.c,$(INPROC_TOOL_SRCS))
POLICY_SRCS := $(wildcard policy/*.c)
# lib/util: leaf helpers in plain C with no dependencies (the size parser,
# the guest-physical range allocator), linked by everything through
# LIB_NAMES; libvgmem needs it, and nothing host-side, for its VFIO RAM.
UTIL_SRCS := $(wildcard lib/util/*.c)
# mgmtd: main() alone in main.c. The REST side (rest*, metrics*, openapi*,
# sse*) is its own library so REST tests can link it over a fake model;
# the model side (everything else, with libvgnl for the netlink backend)
# is libmgmtd. Tests named test_mgmtd_* link both (and libvgnl), test_rest_*
# the REST library alone (they bring their own model).
MGMTD_REST_SRCS := $(wildcard mgmtd/rest*.c mgmtd/metrics*.c mgmtd/openapi*.c mgmtd/sse*.c)
MGMTD_SRCS := $(filter-out mgmtd/main.c $(MGMTD_REST_SRCS),$(wildcard mgmtd/*.c))
MGMTD_MAIN := $(wildcard mgmtd/main.c)
MGMTD_PKGS := libvirt sqlite3 libxml-2.0 libmicrohttpd jansson libcurl libnl-genl-3.0 zlib
MGMTD_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(MGMTD_PKGS) 2>/dev/null)
MGMTD_LDLIBS := $(shell $(PKG_CONFIG) --libs $(MGMTD_PKGS) 2>/dev/null)
UNIT_MAINS := $(wildcard tests/unit/test_*.c)
UNIT_SUPPORT := $(filter-out $(UNIT_MAINS),$(wildcard tests/unit/*.c))
INTEG_MAINS := $(wildcard tests/integration/test_*.c)
INTEG_SUPPORT := $(filter-out $(INTEG_MAINS),$(wildcard tests/integration/*.c)) \
	$(GUEST_TOOL_SUPPORT) $(INPROC_TOOL_SUPPORT)
BENCH_MAINS := $(wildcard tests/bench/bench_*.c)
BENCH_SUPPORT := $(filter-out $(BENCH_MAINS),$(wildcard tests/bench/*.c))

# lib/vgnl: libvgnl, the netlink family's userspace library on
# libnl-genl-3, linked by the vgmem-nl tool (tools/vgmem-nl/, its main
# alone), mgmtd's netlink backend, its unit test, the fuzzer and the VM's
# vgnl-check. Built by their own rules (libnl flags); the library's unit
# test lives in tests/unit/vgnl/, out of the reach of the tests/unit/test_*.c
# wildcard, as it needs libnl and nothing else.
NL_CFLAGS := $(shell $(PKG_CONFIG) --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS := $(shell $(PKG_CONFIG) --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)
NL_LIB_SRCS := $(wildcard lib/vgnl/*.c)
NL_TOOL_SRCS := tools/vgmem-nl/vgmem-nl.c
NL_TEST_SRCS := tests/unit/vgnl/test_vgnl.c
NL_VM_CHECK_SRCS := tests/vm/progs/vgnl-check.c

LIB_NAMES := vghost vgmem vgcore	# link order: host needs guest and core
LIB_NAMES += vgpolicy			# policy/: pure C, used by mgmtd
LIB_NAMES += vgutil			# lib/util/: needs nothing, so last
obj = $(patsubst %.c,$(1)/obj/%.o,$(2))

# $(1): variant directory (build or build/asan)
define variant
$(1)/lib/libvgcore.a: $(call obj,$(1),$(CORE_SRCS)) $(CORE_SRCS)
$(1)/lib/libvgmem.a: $(call obj,$(1),$(GUEST_SRCS)) $(GUEST_SRCS)
$(1)/lib/libvghost.a: $(call obj,$(1),$(HOST_SRCS)) $(HOST_SRCS)
$(1)/lib/libvgpolicy.a: $(call obj,$(1),$(POLICY_SRCS)) $(POLICY_SRCS)
$(1)/lib/libmgmtd.a: $(call obj,$(1),$(MGMTD_SRCS)) $(MGMTD_SRCS)
$(1)/lib/libmgrest.a: $(call obj,$(1),$(MGMTD_REST_SRCS)) $(MGMTD_REST_SRCS)
$(1)/lib/libvgnl.a: $(call obj,$(1),$(NL_LIB_SRCS)) $(NL_LIB_SRCS)
$(1)/lib/libvgutil.a: $(call obj,$(1),$(UTIL_SRCS)) $(UTIL_SRCS)
$(1)_LIBS := $(foreach l,$(LIB_NAMES),$(1)/lib/lib$(l).a)
$(1)_BIN := $(if $(SIM_SRCS),$(1)/bin/vgmem-sim) \
	$(if $(GUEST_TOOL_SRCS),$(1)/bin/vgmem-guest $(1)/bin/vgmem-guest-inproc) \
	$(1)/bin/vgmem-nl \
	$(if $(MGMTD_MAIN),$(1)/bin/mgmtd)
$(1)_MGMTD_LIBS := $(1)/lib/libmgmtd.a $(1)/lib/libmgrest.a $(1)/lib/libvgnl.a
$(1)_UNIT := $(patsubst tests/unit/%.c,$(1)/tests/unit/%,$(UNIT_MAINS))
$(1)_INTEG := $(patsubst tests/integration/%.c,$(1)/tests/integration/%,$(INTEG_MAINS))
$(1)_TESTS := $$($(1)_UNIT) $$($(1)_INTEG) $(1)/tests/unit/vgnl/test_vgnl

$(1)/bin/vgmem-sim: $(call obj,$(1),$(SIM_SRCS)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $(call obj,$(1),$(SIM_SRCS)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(LDLIBS)

$(1)/bin/vgmem-guest: $(call obj,$(1),$(GUEST_TOOL_SRCS)) $(1)/lib/libvgmem.a $(1)/lib/libvgutil.a
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $(call obj,$(1),$(GUEST_TOOL_SRCS)) \
		$(1)/lib/libvgmem.a $(1)/lib/libvgutil.a $$(LDLIBS)

$(1)/bin/vgmem-guest-inproc: $(call obj,$(1),$(GUEST_TOOL_SUPPORT) $(INPROC_TOOL_SRCS)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $(call obj,$(1),$(GUEST_TOOL_SUPPORT) $(INPROC_TOOL_SRCS)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(LDLIBS)

$(1)/bin/mgmtd: $(call obj,$(1),$(MGMTD_MAIN)) $$($(1)_MGMTD_LIBS) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $(call obj,$(1),$(MGMTD_MAIN)) \
		-Wl,--start-group $$($(1)_MGMTD_LIBS) $$($(1)_LIBS) -Wl,--end-group \
		$$(MGMTD_LDLIBS) $$(LDLIBS)

# mgmtd tests: the model and the REST server with their libraries.
$(1)/tests/unit/test_mgmtd_%: $(1)/obj/tests/unit/test_mgmtd_%.o $(call obj,$(1),$(UNIT_SUPPORT)) $$($(1)_MGMTD_LIBS) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(UNIT_SUPPORT)) \
		-Wl,--start-group $$($(1)_MGMTD_LIBS) $$($(1)_LIBS) -Wl,--end-group \
		$$(MGMTD_LDLIBS) $$(TEST_LDLIBS)

$(1)/tests/integration/test_mgmtd_%: $(1)/obj/tests/integration/test_mgmtd_%.o $(call obj,$(1),$(INTEG_SUPPORT)) $$($(1)_MGMTD_LIBS) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(INTEG_SUPPORT)) \
		-Wl,--start-group $$($(1)_MGMTD_LIBS) $$($(1)_LIBS) -Wl,--end-group \
		$$(MGMTD_LDLIBS) $$(TEST_LDLIBS)

# REST tests: the REST server over the test's own (fake) model.
$(1)/tests/unit/test_rest_%: $(1)/obj/tests/unit/test_rest_%.o $(call obj,$(1),$(UNIT_SUPPORT)) $(1)/lib/libmgrest.a $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(UNIT_SUPPORT)) \
		-Wl,--start-group $(1)/lib/libmgrest.a $$($(1)_LIBS) -Wl,--end-group \
		$$(MGMTD_LDLIBS) $$(TEST_LDLIBS)

# The request-trace reader of vgmem-sim, alone.
$(1)/tests/unit/test_reqtrace: $(1)/obj/tests/unit/test_reqtrace.o $(call obj,$(1),$(SIM_TRACE_SRCS))
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ $$(TEST_LDLIBS)

# The oracle's engine of vgmem-sim, alone.
$(1)/tests/unit/test_oracle: $(1)/obj/tests/unit/test_oracle.o $(call obj,$(1),$(SIM_ORACLE_SRCS))
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ $$(TEST_LDLIBS)

# vgmem-sim's SVG writer, alone.
$(1)/tests/unit/test_svg: $(1)/obj/tests/unit/test_svg.o $(call obj,$(1),tools/vgmem-sim/svg.c)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ $$(TEST_LDLIBS) -lm

# The oracle as vgmem-sim's model, against the models played on a host.
$(1)/tests/unit/test_oracle_play: $(1)/obj/tests/unit/test_oracle_play.o $(call obj,$(1),$(SIM_LIB_SRCS)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(SIM_LIB_SRCS)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

# The replay's load and statistics, played on the host's models.
$(1)/tests/unit/test_replay: $(1)/obj/tests/unit/test_replay.o $(call obj,$(1),$(SIM_LIB_SRCS)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(SIM_LIB_SRCS)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

$(1)/tests/unit/%: $(1)/obj/tests/unit/%.o $(call obj,$(1),$(UNIT_SUPPORT)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(UNIT_SUPPORT)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

$(1)/tests/integration/%: $(1)/obj/tests/integration/%.o $(call obj,$(1),$(INTEG_SUPPORT)) $$($(1)_LIBS)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$< $(call obj,$(1),$(INTEG_SUPPORT)) \
		-Wl,--start-group $$($(1)_LIBS) -Wl,--end-group $$(TEST_LDLIBS)

$(1)/bin/vgmem-nl: $(call obj,$(1),$(NL_TOOL_SRCS)) $(1)/lib/libvgnl.a $(1)/lib/libvgutil.a
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ $$(NL_LIBS)

$(1)/tests/unit/vgnl/test_vgnl: $(call obj,$(1),$(NL_TEST_SRCS)) $(1)/lib/libvgnl.a
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ $$(NL_LIBS) -lcmocka

$(1)/obj/tools/vgmem-nl/%.o: tools/vgmem-nl/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(NL_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/lib/vgnl/%.o: lib/vgnl/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(NL_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/tests/unit/vgnl/%.o: tests/unit/vgnl/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(NL_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

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

# So is lib/util, which every program links.
$(1)/obj/lib/util/%.o: lib/util/%.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(PORTABLE_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@

$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC) $$(BASE_CFLAGS) $$(MGMTD_CFLAGS) $$(OPT_$(1)) -c $$< -o $$@
endef

OPT_$(BUILD) := $(PLAIN_OPT)
OPT_$(BUILD)/asan := $(ASAN_OPT)
# CPPFLAGS, CFLAGS (above) and LDFLAGS from the environment or the command
# line reach the plain variant: a package build passes Debian's hardening
# flags this way (debian/rules).
LDFLAGS_$(BUILD) := $(LDFLAGS)
LDFLAGS_$(BUILD)/asan := -fsanitize=address,undefined
OPT_$(BUILD)/tsan := $(TSAN_OPT)
LDFLAGS_$(BUILD)/tsan := -fsanitize=thread
$(eval $(call variant,$(BUILD)))
$(eval $(call variant,$(BUILD)/asan))
$(eval $(call variant,$(BUILD)/tsan))

# Rebuilt whole each time, so a deleted source leaves no stale member. A
# library also depends on its sources: its objects are secondary (below),
# and a missing secondary object alone never remakes a library, so a source
# new to a tree built before would be left out of it.
%.a:
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)

BENCHES := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_MAINS))
$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(call obj,$(BUILD),$(BENCH_SUPPORT)) $($(BUILD)_LIBS)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(call obj,$(BUILD),$(BENCH_SUPPORT)) \
		-Wl,--start-group $($(BUILD)_LIBS) -Wl,--end-group $(LDLIBS)

ALL_SRCS := $(MGMTD_SRCS) $(MGMTD_REST_SRCS) $(MGMTD_MAIN) $(POLICY_SRCS) $(UTIL_SRCS) $(CORE_SRCS) $(GUEST_SRCS) $(HOST_SRCS) $(SIM_SRCS) $(GUEST_TOOL_SRCS) $(INPROC_TOOL_SRCS) $(UNIT_MAINS) \
	$(UNIT_SUPPORT) $(INTEG_MAINS) $(INTEG_SUPPORT) $(BENCH_MAINS) $(BENCH_SUPPORT) \
	$(NL_LIB_SRCS) $(NL_TOOL_SRCS) $(NL_TEST_SRCS)
-include $(patsubst %.o,%.d,$(call obj,$(BUILD),$(ALL_SRCS)) $(call obj,$(BUILD)/asan,$(ALL_SRCS)) \
	$(call obj,$(BUILD)/tsan,$(ALL_SRCS)))

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
# The guest kernel driver (runs inside a VM), built against the same headers.
GUEST_MODULE_DIR := $(CURDIR)/guest-driver/kernel
GUEST_MODULE_LOG := $(BUILD)/guest-module.log

# ---- targets ------------------------------------------------------------------------
.PHONY: all asan tests check run bench module module-clean clean help deps man \
	run-tests guest-module guest-module-clean tsan module-6.12 dkms-check deb deb-check walk-check

all: $($(BUILD)_LIBS) $($(BUILD)_BIN) $($(BUILD)_TESTS)

asan: $($(BUILD)/asan_LIBS) $($(BUILD)/asan_BIN) $($(BUILD)/asan_TESTS)

tests: $($(BUILD)_TESTS) $($(BUILD)/asan_TESTS)

# As root: install what scripts/deps.list names, then check it. Otherwise
# only check, failing with the package of each thing missing: either way
# before any compiler runs.
deps:
	@if [ "$$(id -u)" = 0 ]; then scripts/install-deps.sh; \
	else scripts/check-deps.sh; fi

# A test program's time limit: a hang fails it, and a busy machine must
# not: test_deps.sh (gcc -M over every source, apt closures) took 200 s
# beside two fuzzer workers, and passed 300 s beside them and a build.
TEST_TIMEOUT ?= 900

# Runs the tests TEST_JOBS at a time (scripts/run-tests.sh: each under its
# time limit, its output printed whole as it ends, no new one started after
# a failure), and prints a closing "N passed, N failed" line counting
# cmocka test cases. Shell tests (tests/unit/test_*.sh) print cmocka's
# PASSED line too.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
SCRIPT_TESTS := $(wildcard tests/unit/test_*.sh)
RUN_TESTS_PROGS = $(SCRIPT_TESTS) $($(BUILD)_TESTS) $($(BUILD)/asan_TESTS)
run-tests:
	@set -u; log=$(BUILD)/test.log; rc=0; \
	ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		scripts/run-tests.sh -j $(TEST_JOBS) -t $(TEST_TIMEOUT) -l $$log \
		$(RUN_TESTS_PROGS) || rc=$$?; \
	passed=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $$log | awk '{s+=$$1} END {print s+0}'); \
	if [ $$rc -ne 0 ]; then \
		echo "tests: $$passed passed, $$(grep -c '^FAILED: ' $$log || true) failed"; \
		exit 1; \
	fi; \
	echo "ran $(words $(RUN_TESTS_PROGS)) test programs (shell, plain and ASan/UBSan), $(TEST_JOBS) at a time"; \
	echo "tests: $$passed passed, 0 failed" | tee $(BUILD)/test-summary

# ThreadSanitizer over the programs whose threads meet in the OS layer's
# shims (the core, the sim's engine, fault and zeroing threads, libvgmem's
# in-process transport): built in $(BUILD)/tsan and run like run-tests, the
# first race failing the run. The rest (mgmtd, REST, LRC, policy) runs its
# threads through libraries TSan would need rebuilt too, or is
# single-threaded: under TSan they would take minutes and find nothing of
# the shims'. test_lockdep inverts lock orders on purpose, which TSan's own
# deadlock detector would report; test_model_integrity (3 minutes) and
# test_fairness (1.5) are too slow under TSan for their share of coverage,
# and so is test_integrity (9-11 minutes; it passes there since the drain
# no longer fails allocations). docs/testing.md has the list's times.
TSAN_PROGS := $(addprefix tests/unit/test_,os chan ctrl ctrl_shares \
	fault_dispatch relocate relocate_batch return libvgmem_chan vfio_ctrlq \
	vfio_ram sim_aslock sim_engine sim_faults sim_mem sim_mmu \
	sim_replay_args sim_replay_errors sim_replay_many sim_replay_parked \
	sim_replay_path sim_replay_prot sim_sched model_admission model_paging \
	model_static model_swsched model_vgmem migrate_precopy migrate_files) \
	tests/integration/test_isolation
TSAN_TESTS := $(addprefix $(BUILD)/tsan/,$(TSAN_PROGS))
TSAN_OPTIONS_RUN := halt_on_error=1 exitcode=66 second_deadlock_stack=1

tsan: $(TSAN_TESTS)
	@set -u; log=$(BUILD)/tsan.log; \
	TSAN_OPTIONS=$(TSAN_OPTIONS_RUN) scripts/run-tests.sh --tsan -j $(TEST_JOBS) \
		-t $(TEST_TIMEOUT) -l $$log $(TSAN_TESTS) || exit 1; \
	passed=$$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' $$log | awk '{s+=$$1} END {print s+0}'); \
	echo "tsan: $(words $(TSAN_TESTS)) programs, $(TEST_JOBS) at a time, $$passed tests passed under ThreadSanitizer, no race reported"

# Each phase is timed; the times are printed at the end (and on failure).
# scripts/check.sh has the order, and which VM cases run on which kernel.
check:
	@MAKE="$(MAKE)" BUILD=$(BUILD) scripts/check.sh

run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	./$(BUILD)/bin/vgmem-sim compare --out $(BUILD)/run \
		--models static,admission,vgmem:policy=random,vgmem:policy=cold

bench: $(BENCHES)
	@set -e; for b in $(BENCHES); do echo "== $$b"; ./$$b; done
	@$(MAKE) --no-print-directory vm-bench

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
	@echo "module: built $(MODULE_DIR:$(CURDIR)/%=%)/vgmem.ko against $(KDIR)"

module-clean:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C $(KDIR) M=$(MODULE_DIR) clean; fi

# guest-driver/kernel/vgmem_guest.ko, the same way: any warning fails it.
guest-module:
	@if [ -z "$(KDIR)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "guest-module: no kernel headers for '$(KVER)' (set KDIR, or run scripts/install-deps.sh)"; \
		exit 1; fi
	@mkdir -p $(BUILD)
	@set -o pipefail; $(MAKE) -C $(KDIR) M=$(GUEST_MODULE_DIR) W=1 modules 2>&1 | tee $(GUEST_MODULE_LOG)
	@if grep -qi 'warning' $(GUEST_MODULE_LOG); then \
		echo "guest-module: the kernel build printed warnings:"; \
		grep -i 'warning' $(GUEST_MODULE_LOG); exit 1; fi
	@echo "guest-module: built $(GUEST_MODULE_DIR:$(CURDIR)/%=%)/vgmem_guest.ko against $(KDIR)"

guest-module-clean:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C $(KDIR) M=$(GUEST_MODULE_DIR) clean; fi

# The same modules for 6.12 from bookworm-backports, the second kernel
# vgmem runs on (docs/testing.md): scripts/fetch-kernel-6.12.sh unpacks its
# headers and image into build/kernel-6.12/ (downloaded once, cached after)
# and names them in kernel.env. Both modules build, at W=1 and failing on
# any warning as above, in kernel.env's MODSRC: a tree of links to the sources
# (host-module/, guest-driver/kernel/, include/), so the 6.1 objects in the
# checkout stay as they are (the links are made afresh each time; the
# kernel build's own files, *.mod.c among them, are never linked).
K612_ENV := $(BUILD)/kernel-6.12/kernel.env
module-6.12:
	@scripts/fetch-kernel-6.12.sh --quiet
	@set -e; . $(K612_ENV); \
	mkdir -p "$$MODSRC"; find "$$MODSRC" -type l -delete; \
	find host-module guest-driver/kernel include -type f \( -name '*.[ch]' -o -name Kbuild \) \
		! -name '*.mod.c' ! -name '.*' | \
	while read -r f; do \
		mkdir -p "$$MODSRC/$${f%/*}"; ln -s "$(CURDIR)/$$f" "$$MODSRC/$$f"; \
	done; \
	$(MAKE) --no-print-directory module guest-module KVER="$$KVER" KDIR="$$KDIR" \
		MODULE_DIR="$$MODSRC/host-module" GUEST_MODULE_DIR="$$MODSRC/guest-driver/kernel" \
		MODULE_LOG=$(BUILD)/module-6.12.log GUEST_MODULE_LOG=$(BUILD)/guest-module-6.12.log

# The operator's way: deploy/dkms/dkms-install.sh builds vgmem.ko and
# vgmem_sim.ko through DKMS for 6.1 (KVER's headers) and for 6.12 (fetched
# as above, given with --kernel-source), in a private DKMS tree under
# build/dkms-test/ (never /usr/src or /var/lib/dkms); tests/dkms/test_dkms.sh
# checks each module's vermagic, the refusal of a missing kernel source, and
# more (its header). DKMS builds from scratch, so this is its own phase of
# make check: 1.5 minutes on 2 cores, as the objects of `module` and
# `module-6.12` cannot be reused (docs/testing.md has the times).
dkms-check:
	@KVER="$(KVER)" KDIR="$(KDIR)" tests/dkms/test_dkms.sh

# The Debian packages (debian/): scripts/build-deb.sh copies the tracked
# files to build/deb/src/ and runs dpkg-buildpackage there, so the checkout
# gets no debian/ build products; the .debs land in build/deb/.
# tests/deb/test_deb.sh installs them into a debootstrapped Debian 12 root
# (cached under build/debroot/), checks DKMS's builds, the files' places
# and lintian, then purges them (make check's deb phase; docs/testing.md).
deb:
	@scripts/build-deb.sh

deb-check: deb
	@tests/deb/test_deb.sh

# docs/operations.md walked: every command block of the page runs, in order,
# on a Debian 12 root with the packages (tests/walk/walk.sh; the root is
# cached under build/walk/ on top of the deb test's, build/debroot/, the
# packages come from `make deb`; make check
# walks with the packages its deb phase built).
walk-check: deb
	@tests/walk/walk.sh

clean: module-clean guest-module-clean
	rm -rf $(BUILD)

# ---- VM tests (tests/vm/, docs/testing.md) -------------------------------------
# Programs that run inside the test VM: static (the initramfs has no libc).
# vgmem-guest is guest-driver/tools/*.c with libvgmem alone (as a tenant's
# image has it); vgmem-guest-inproc adds the in-process host (--inproc: the
# VM cases compute expected file contents with it) and every library, of
# which a static link takes only the archive members it needs.
VM_GUEST_SRCS := $(GUEST_TOOL_SRCS)
VM_INPROC_SRCS := $(GUEST_TOOL_SUPPORT) $(INPROC_TOOL_SRCS)
VM_BINS := $(if $(VM_GUEST_SRCS),$(BUILD)/vm/bin/vgmem-guest $(BUILD)/vm/bin/vgmem-guest-inproc)
VM_CFLAGS := $(BASE_CFLAGS) $(PLAIN_OPT)
VMCASE ?=

$(BUILD)/vm/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -c $< -o $@

$(BUILD)/vm/bin/vgmem-guest: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(VM_GUEST_SRCS)) $(BUILD)/lib/libvgmem.a $(BUILD)/lib/libvgutil.a
	@mkdir -p $(@D)
	$(CC) -static -o $@ $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(VM_GUEST_SRCS)) \
		$(BUILD)/lib/libvgmem.a $(BUILD)/lib/libvgutil.a $(LDLIBS)

$(BUILD)/vm/bin/vgmem-guest-inproc: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(VM_INPROC_SRCS)) $($(BUILD)_LIBS)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(VM_INPROC_SRCS)) \
		-Wl,--start-group $($(BUILD)_LIBS) -Wl,--end-group $(LDLIBS)

-include $(patsubst %.c,$(BUILD)/vm/obj/%.d,$(VM_GUEST_SRCS) $(INPROC_TOOL_SRCS))

# vgmem-nl and vgnl-check (the netlink case's helper), static against
# their own libvgnl.a (and libvgutil.a) and Debian's libnl-3.a and
# libnl-genl-3.a.
VM_NL_LIB := $(BUILD)/vm/lib/libvgnl.a $(BUILD)/vm/lib/libvgutil.a
$(BUILD)/vm/lib/libvgnl.a: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(NL_LIB_SRCS))
$(BUILD)/vm/lib/libvgutil.a: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(UTIL_SRCS))
VM_BINS += $(BUILD)/vm/bin/vgmem-nl $(BUILD)/vm/bin/vgnl-check

$(BUILD)/vm/obj/tools/vgmem-nl/%.o: tools/vgmem-nl/%.c
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) $(NL_CFLAGS) -c $< -o $@

$(BUILD)/vm/obj/lib/vgnl/%.o: lib/vgnl/%.c
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) $(NL_CFLAGS) -c $< -o $@

$(BUILD)/vm/obj/tests/vm/progs/%.o: tests/vm/progs/%.c
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) $(NL_CFLAGS) -c $< -o $@

$(BUILD)/vm/bin/vgmem-nl: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(NL_TOOL_SRCS)) $(VM_NL_LIB)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^ $(NL_LIBS) -lpthread -lm

$(BUILD)/vm/bin/vgnl-check: $(patsubst %.c,$(BUILD)/vm/obj/%.o,$(NL_VM_CHECK_SRCS)) $(VM_NL_LIB)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^ $(NL_LIBS) -lpthread -lm

-include $(patsubst %.c,$(BUILD)/vm/obj/%.d,$(NL_LIB_SRCS) $(UTIL_SRCS) $(NL_TOOL_SRCS) $(NL_VM_CHECK_SRCS))

# vgirq-check (INTx and its unmask eventfd, 32-intx): raw VFIO, no libraries.
VM_BINS += $(BUILD)/vm/bin/vgirq-check
$(BUILD)/vm/bin/vgirq-check: $(BUILD)/vm/obj/tests/vm/progs/vgirq-check.o $(BUILD)/vm/obj/tests/vm/progs/vmcheck.o
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^
-include $(BUILD)/vm/obj/tests/vm/progs/vgirq-check.d

# vgpci-touch (the vGPU's BARs from inside a nested guest, 95-real-guest):
# sysfs and mmap only, no libraries.
VM_BINS += $(BUILD)/vm/bin/vgpci-touch
$(BUILD)/vm/bin/vgpci-touch: $(BUILD)/vm/obj/tests/vm/progs/vgpci-touch.o
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^
-include $(BUILD)/vm/obj/tests/vm/progs/vgpci-touch.d

# vgmig-check (VFIO migration between two mdevs, 97-migrate): libvgmem's
# VFIO transport as the guest, raw VFIO ioctls as its VMM.
VM_BINS += $(BUILD)/vm/bin/vgmig-check
$(BUILD)/vm/bin/vgmig-check: $(BUILD)/vm/obj/tests/vm/progs/vgmig-check.o $(BUILD)/vm/obj/tests/vm/progs/vmcheck.o $(BUILD)/lib/libvgmem.a $(BUILD)/lib/libvgutil.a
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^ $(LDLIBS)
-include $(BUILD)/vm/obj/tests/vm/progs/vgmig-check.d

# vggd-check (the guest kernel driver in the nested guest): /dev/vgmem0 only.
VM_BINS += $(BUILD)/vm/bin/vggd-check
VGGD_OBJS := $(patsubst %,$(BUILD)/vm/obj/tests/vm/progs/%.o,vggd-check vggd-files vggd-lib)
$(BUILD)/vm/bin/vggd-check: $(VGGD_OBJS)
	@mkdir -p $(@D)
	$(CC) -static -o $@ $^
-include $(VGGD_OBJS:.o=.d)

.PHONY: vm-bins vm-check vm-shell vm-bench vm-check-6.12 qemu72
vm-bins: $(VM_BINS)

# Debian 12's QEMU 7.2 with qemu-patches/ (VFIO migration protocol v2):
# build/qemu72/usr/bin/qemu-system-x86_64, built once and cached. vm-check
# builds it too when a case needs it (99-migrate-guest-qemu72).
qemu72:
	@scripts/build-qemu72.sh

# Boots Debian's kernel under QEMU TCG with our modules and runs
# tests/vm/cases/*.sh (VMCASE=10-load,20-mdev-types runs only those: make
# exports it and run.sh reads it from the environment).
vm-check:
	@tests/vm/run.sh

# make check's pass on 6.12 of bookworm-backports (VM_KERNEL=6.12: run.sh
# builds the modules with make module-6.12, W=1 and warning-free, and boots
# that kernel): the cases that load the modules, run guests, take
# interrupts and hostile input and migrate (a VFIO program, with pre-copy
# and the data-size query 6.2 brought), about two minutes of VM time.
# VMCASE= picks others (VMCASE=98-migrate-guest: a real guest between two
# QEMU 10 processes, which learns the vGPU's stop-copy size from the kernel
# here, 6-7 minutes); `make vm-check VM_KERNEL=6.12` runs the whole suite.
VM612_CASES := 10-load,30-guests,32-intx,80-hostile,97-migrate
vm-check-6.12:
	@VM_KERNEL=6.12 VMCASE=$(or $(VMCASE),$(VM612_CASES)) tests/vm/run.sh

# The same VM running tests/vm/bench/*.sh instead (VMCASE= picks some);
# prints their VMBENCH lines. Benchmarks report, they never fail on timing.
vm-bench:
	@tests/vm/run.sh --bench

# The same VM with the modules loaded and a shell on the console.
vm-shell:
	@tests/vm/run.sh --shell

help:
	@echo "make            libraries, build/bin/vgmem-sim and the tests (plain)"
	@echo "make asan       the same under ASan/UBSan, in build/asan/"
	@echo "make check      install deps (as root), build all, run every test plain"
	@echo "                and under ASan/UBSan, the threaded ones under TSan (make"
	@echo "                tsan), build the modules warning-free and through DKMS (for"
	@echo "                6.1 and 6.12), run the VM suite, then build for 6.12 and"
	@echo "                run a few VM cases there"
	@echo "make tsan       build the threaded tests in build/tsan/ and run them under"
	@echo "                ThreadSanitizer (a race fails it)"
	@echo "make run        build, then vgmem-sim compare (static, admission, vgmem random and cold) --out build/run"
	@echo "make man        the man pages (docs/man/*.scd) into $(BUILD)/man"
	@echo "make deps       install scripts/deps.list (as root), then check it"
	@echo "make bench      build and run tests/bench/bench_*.c, then make vm-bench"
	@echo "make vm-bench   boot the test VM and run tests/vm/bench (VMCASE=name,...)"
	@echo "make module     build host-module/vgmem.ko (KDIR=... overrides headers)"
	@echo "make guest-module  build guest-driver/kernel/vgmem_guest.ko (the VM's driver)"
	@echo "make module-6.12   the three modules for 6.12 of bookworm-backports (fetched once)"
	@echo "make dkms-check    build the host modules through DKMS for 6.1 and 6.12 (private tree)"
	@echo "make install    mgmtd, vgmemctl, vgmem-nl, libvgmem, config, unit (PREFIX=/usr/local, DESTDIR=)"
	@echo "make install-dkms  the modules' sources for DKMS under /usr/src (DESTDIR=)"
	@echo "make deb        the Debian packages (debian/) into build/deb/"
	@echo "make deb-check  make deb, then install them in a Debian 12 root: DKMS, files, lintian, purge"
	@echo "make walk-check make deb, then walk docs/operations.md's commands on a booted Debian 12"
	@echo "make fuzz       run each fuzzer (tests/fuzz) FUZZ_SECONDS (300), FUZZERS=name,..."
	@echo "make soak       the integrity test for 10^5 relocation cycles (SOAK_CYCLES, SOAK_SECONDS)"
	@echo "make vm-check   boot the test VM and run tests/vm/cases (VMCASE=name,...;"
	@echo "                VM_KERNEL=6.12: on 6.12 of bookworm-backports)"
	@echo "make vm-check-6.12  make check's 6.12 pass: the modules for 6.12, five cases"
	@echo "make vm-shell   boot the test VM to a shell with the modules loaded"
	@echo "make qemu72     Debian 12's QEMU 7.2 with qemu-patches/ (build/qemu72, cached)"
	@echo "make clean      remove build/ and the module's products"
	@echo "make build/tests/unit/test_foo    build one test"

# ---- vgmemctl (tools/vgmemctl/) and the REST benchmark -------------------------
VGMEMCTL_SRCS := $(wildcard tools/vgmemctl/*.c)
define vgmemctl_rules
$(1)/bin/vgmemctl: $(call obj,$(1),$(VGMEMCTL_SRCS))
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_$(1)) -o $$@ $$^ -lcurl -ljansson -lncursesw
# openapi.o embeds mgmtd/openapi.json with .incbin, which -MMD cannot see.
$(1)/obj/mgmtd/openapi.o: mgmtd/openapi.json
# test_rest_vgmemctl runs the binary of its own variant.
$(1)/tests/unit/test_rest_vgmemctl: $(1)/bin/vgmemctl
# test_mgmtd_libvirtd runs the daemon and the CLI of its own variant.
$(1)/tests/integration/test_mgmtd_libvirtd: $(1)/bin/mgmtd $(1)/bin/vgmemctl
# test_mgmtd_top runs the CLI of its own variant in tmux.
$(1)/tests/integration/test_mgmtd_top: $(1)/bin/vgmemctl
# test_compare runs vgmem-sim compare of its own variant.
$(1)/tests/integration/test_compare: $(1)/bin/vgmem-sim
endef
$(eval $(call vgmemctl_rules,$(BUILD)))
$(eval $(call vgmemctl_rules,$(BUILD)/asan))
all: $(BUILD)/bin/vgmemctl
asan: $(BUILD)/asan/bin/vgmemctl
-include $(patsubst %.o,%.d,$(call obj,$(BUILD),$(VGMEMCTL_SRCS)) $(call obj,$(BUILD)/asan,$(VGMEMCTL_SRCS)))

# bench_rest: the REST server over the fake model, driven by wrk (or libcurl).
$(BUILD)/bench/bench_rest: $(BUILD)/obj/tests/bench/bench_rest.o $(call obj,$(BUILD),$(BENCH_SUPPORT)) $(BUILD)/lib/libmgrest.a $($(BUILD)_LIBS)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(call obj,$(BUILD),$(BENCH_SUPPORT)) \
		-Wl,--start-group $(BUILD)/lib/libmgrest.a $($(BUILD)_LIBS) -Wl,--end-group \
		$(MGMTD_LDLIBS) -lcurl $(LDLIBS)

# ---- guest examples (guest-driver/examples/*.c: each one program) -------------
# Linked with libvgmem (and the plain-C utilities it uses) alone, as a
# tenant's program is.
EXAMPLE_SRCS := $(wildcard guest-driver/examples/*.c)
EXAMPLES := $(patsubst guest-driver/examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))
$(BUILD)/examples/%: $(BUILD)/obj/guest-driver/examples/%.o $(BUILD)/lib/libvgmem.a $(BUILD)/lib/libvgutil.a
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(BUILD)/lib/libvgmem.a $(BUILD)/lib/libvgutil.a $(LDLIBS)
all: $(EXAMPLES)

# ---- man pages (docs/man/*.scd, scdoc) -------------------------------------------
# One source each; tests/unit/test_man.sh checks them against every --help,
# mgmtd's settings and the modules' parameters.
MAN_SRCS := $(wildcard docs/man/*.scd)
MAN_PAGES := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(MAN_SRCS))
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(@D)
	scdoc < $< > $@.tmp && mv $@.tmp $@
man: $(MAN_PAGES)
all: man
-include $(patsubst %.o,%.d,$(call obj,$(BUILD),$(EXAMPLE_SRCS)))

# ---- fuzzers (tests/fuzz/, docs/testing.md) -----------------------------------
include tests/fuzz/fuzz.mk

# ---- install, libvgmem.so (deploy/install.mk) ------------------------------------
include deploy/install.mk

# ---- soak (docs/testing.md) ----------------------------------------------------------
# The integrity test (tests/integration/test_integrity.c) until SOAK_CYCLES
# relocation cycles (suspend, copy, resume) have run, tenants submitting
# throughout; fails if SOAK_SECONDS pass first (plain build: ASan would
# slow it several times; `make run-tests` runs the same test under ASan).
SOAK_CYCLES ?= 100000
SOAK_SECONDS ?= 21600
SOAK_CHUNK ?= 2097152
SOAK_MOVES ?= 300
.PHONY: soak
soak: $(BUILD)/tests/integration/test_integrity
	VG_INTEGRITY_CYCLES=$(SOAK_CYCLES) VG_INTEGRITY_SECONDS=$(SOAK_SECONDS) \
	VG_INTEGRITY_CHUNK=$(SOAK_CHUNK) VG_INTEGRITY_MOVES=$(SOAK_MOVES) \
		./$(BUILD)/tests/integration/test_integrity
