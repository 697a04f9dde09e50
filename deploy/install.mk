# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Installing (included by the Makefile): what an operator's host and a
# tenant's image need, under DESTDIR and the usual directory variables,
# /usr/local by default. debian/rules runs the same targets with PREFIX=/usr
# and Debian's directories (docs/operations.md, "Install from packages").
#
#   make install        mgmtd, vgmemctl, vgmem-nl, libvgmem (shared library,
#                       headers, pkg-config file), their man pages, the unit,
#                       sysusers and tmpfiles entries, /etc/vgmem/mgmtd.conf,
#                       /etc/modprobe.d/vgmem.conf and the mdevctl udev rule
#   make install-dkms   the sources DKMS builds vgmem.ko and vgmem_sim.ko
#                       from, and those of the guest driver, under /usr/src
#                       (then: dkms add/build/install, or the packages do it)
#   make installable    only build what `make install` installs
#
# Nothing here writes outside $(DESTDIR); nothing runs systemd-sysusers or
# dkms: the packages' maintainer scripts (debhelper's) or the operator do.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/vgmem
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSCONFDIR ?= /etc
# systemd reads units, sysusers.d and tmpfiles.d under /usr/local/lib too;
# Debian 12's packages put units in /lib/systemd/system (debian/rules).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
DKMSSRCDIR ?= /usr/src
INSTALL ?= install

# One version for the modules, the library and the packages: dkms.conf's
# (debian/rules refuses a changelog that says otherwise).
VGMEM_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' deploy/dkms/dkms.conf)

# ---- libvgmem as a shared library ------------------------------------------------
# libvgmem.so.0: guest-driver/lib/ and the lib/util code it uses, built
# position-independent in $(BUILD)/pic. Only what libvgmem.h declares is
# exported, under the version node of guest-driver/lib/libvgmem.map
# (tests/unit/test_libvgmem_so.sh checks the two agree); the rest (the
# transports' internals, lib/util's vg_*) stays local, so it is not ABI.
# The SONAME's 0 changes when a declared function changes or goes away.
LIBVGMEM_SOMAJOR := 0
LIBVGMEM_SO := $(BUILD)/lib/libvgmem.so.$(VGMEM_VERSION)
LIBVGMEM_MAP := guest-driver/lib/libvgmem.map
PIC_SRCS := $(GUEST_SRCS) $(UTIL_SRCS)
PIC_OBJS := $(patsubst %.c,$(BUILD)/pic/obj/%.o,$(PIC_SRCS))

$(BUILD)/pic/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(PORTABLE_CFLAGS) $(PLAIN_OPT) -fPIC -c $< -o $@

# -z defs: an undefined symbol fails the link, not a tenant's program.
$(LIBVGMEM_SO): $(PIC_OBJS) $(LIBVGMEM_MAP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libvgmem.so.$(LIBVGMEM_SOMAJOR) \
		-Wl,--version-script=$(LIBVGMEM_MAP) -Wl,-z,defs -o $@ $(PIC_OBJS) -lpthread
$(BUILD)/lib/libvgmem.so.$(LIBVGMEM_SOMAJOR): $(LIBVGMEM_SO)
	ln -sf $(<F) $@
$(BUILD)/lib/libvgmem.so: $(BUILD)/lib/libvgmem.so.$(LIBVGMEM_SOMAJOR)
	ln -sf $(<F) $@
all: $(BUILD)/lib/libvgmem.so
-include $(PIC_OBJS:.o=.d)

# ---- install -------------------------------------------------------------------------
INSTALL_BINS := $(BUILD)/bin/mgmtd $(BUILD)/bin/vgmemctl $(BUILD)/bin/vgmem-nl
INSTALL_MANS := $(addprefix $(BUILD)/man/,mgmtd.8 mgmtd.conf.5 vgmemctl.8 vgmem-nl.8 vgmem.4)
# Headers a tenant's program needs: libvgmem.h and the ABI headers it
# includes (as <uapi/NAME.h>, found through the pkg-config file's -I).
INSTALL_HEADERS_UAPI := include/uapi/vgmem.h include/uapi/vgmem_guest.h include/uapi/vgmem_stats.h
# What DKMS builds from: the files host-module/Kbuild and
# guest-driver/kernel/Kbuild compile, in the repository's layout.
DKMS_HOST_FILES := host-module/Kbuild $(shell find host-module/os host-module/core \
	host-module/sim host-module/linux -name '*.[ch]' ! -name '*.mod.c' ! -name '.*' 2>/dev/null)
DKMS_GUEST_FILES := guest-driver/kernel/Kbuild $(wildcard guest-driver/kernel/*.[ch])
DKMS_GUEST_FILES := $(filter-out %.mod.c,$(DKMS_GUEST_FILES))

.PHONY: install install-dkms installable
installable: $(INSTALL_BINS) $(BUILD)/lib/libvgmem.so $(INSTALL_MANS)

install: installable
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/vgmem/uapi $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(SYSCONFDIR)/vgmem $(DESTDIR)$(SYSCONFDIR)/modprobe.d \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(BUILD)/bin/mgmtd $(BUILD)/bin/vgmem-nl $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 0755 $(BUILD)/bin/vgmemctl $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0644 $(LIBVGMEM_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIBVGMEM_SO)) $(DESTDIR)$(LIBDIR)/libvgmem.so.$(LIBVGMEM_SOMAJOR)
	ln -sf libvgmem.so.$(LIBVGMEM_SOMAJOR) $(DESTDIR)$(LIBDIR)/libvgmem.so
	$(INSTALL) -m 0644 guest-driver/include/libvgmem.h $(DESTDIR)$(INCLUDEDIR)/vgmem/
	$(INSTALL) -m 0644 $(INSTALL_HEADERS_UAPI) $(DESTDIR)$(INCLUDEDIR)/vgmem/uapi/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VGMEM_VERSION)|' guest-driver/libvgmem.pc.in \
		> $(DESTDIR)$(PKGCONFIGDIR)/libvgmem.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/libvgmem.pc
	@set -e; for p in $(INSTALL_MANS); do s=$${p##*.}; \
		echo "$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}"; \
		$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; done
	$(INSTALL) -m 0644 deploy/mgmtd.conf $(DESTDIR)$(SYSCONFDIR)/vgmem/mgmtd.conf
	$(INSTALL) -m 0644 deploy/modprobe.d/vgmem.conf $(DESTDIR)$(SYSCONFDIR)/modprobe.d/vgmem.conf
	# The unit in deploy/ names /usr/local/sbin/mgmtd (a tested source install).
	sed 's|/usr/local/sbin/mgmtd|$(SBINDIR)/mgmtd|' deploy/systemd/vgmem-mgmtd.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/vgmem-mgmtd.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/vgmem-mgmtd.service
	$(INSTALL) -m 0644 deploy/sysusers.d/vgmem.conf $(DESTDIR)$(SYSUSERSDIR)/vgmem.conf
	$(INSTALL) -m 0644 deploy/tmpfiles.d/vgmem.conf $(DESTDIR)$(TMPFILESDIR)/vgmem.conf
	$(INSTALL) -m 0644 deploy/udev/61-vgmem-mdevctl.rules $(DESTDIR)$(UDEVRULESDIR)/
	$(INSTALL) -m 0644 docs/operations.md docs/mgmtd.md docs/rest.md docs/policy.md \
		$(DESTDIR)$(DOCDIR)/

# dkms.conf goes with the sources (dkms add reads it there).
install-dkms:
	@set -e; \
	h=$(DESTDIR)$(DKMSSRCDIR)/vgmem-$(VGMEM_VERSION); \
	g=$(DESTDIR)$(DKMSSRCDIR)/vgmem-guest-$(VGMEM_VERSION); \
	for f in $(DKMS_HOST_FILES) $(wildcard include/uapi/*.h); do \
		$(INSTALL) -D -m 0644 $$f $$h/$$f; done; \
	$(INSTALL) -m 0644 deploy/dkms/dkms.conf $$h/dkms.conf; \
	for f in $(DKMS_GUEST_FILES) $(wildcard include/uapi/*.h); do \
		$(INSTALL) -D -m 0644 $$f $$g/$$f; done; \
	$(INSTALL) -m 0644 deploy/dkms/guest/dkms.conf $$g/dkms.conf; \
	echo "install-dkms: $$h and $$g"
