// SPDX-License-Identifier: MIT
/*
 * vgmem-guest-inproc: vgmem-guest (docs/vgmem-guest.md) with its in-process
 * host, for hosts, tests and demos: the same commands and options, plus
 * --inproc (the core and the software GPU in this process, no kernel or VM
 * needed). Not for tenants' images: it carries the host.
 */
#include "inproc.h"

int main(int argc, char **argv)
{
	/* Lines reach a serial console or a pipe whole, even if we die later. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	return vgg_main(argc, argv, stdout, stderr, &vgg_inproc_host);
}
