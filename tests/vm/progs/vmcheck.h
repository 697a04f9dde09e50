/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the VM suite's check programs print (tests/vm/progs): "ok: ..." per
 * check passed, "FAIL: ..." and exit status 1 at the first that fails. The
 * case scripts show these lines and go by the exit status.
 */
#ifndef VGMEM_VMCHECK_H
#define VGMEM_VMCHECK_H

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* VGMEM_VMCHECK_H */
