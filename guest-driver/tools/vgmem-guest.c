// SPDX-License-Identifier: MIT
/*
 * vgmem-guest: the guest-side test tool (docs/vgmem-guest.md), as a tenant
 * installs it: libvgmem alone, no in-process host (--inproc is in
 * vgmem-guest-inproc, tools/vgmem-guest-inproc/). Everything but main()
 * lives in vgg_*.c so tests can run the commands in-process.
 */
#include "vgg.h"

int main(int argc, char **argv)
{
	/* Lines reach a serial console or a pipe whole, even if we die later. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return vgg_main(argc, argv, stdout, stderr, NULL);
}
