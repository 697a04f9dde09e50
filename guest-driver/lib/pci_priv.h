/* SPDX-License-Identifier: MIT */
/*
 * Shared by the PCI transport's files: pci.c (the device, channels, DMA
 * buffers) and pci_file.c (share files by file descriptor).
 */
#ifndef LIBVGMEM_PCI_PRIV_H
#define LIBVGMEM_PCI_PRIV_H

#include <stdint.h>
#include <uapi/vgmem_guest.h>

/* The message vgmem_pci_error() returns next (this thread). */
void vgmem_pci_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ioctl(2) as 0 or -errno, retried on EINTR. */
int vgmem_pci_ioctl(int fd, unsigned long req, void *arg);

/* VGMEM_GIOC_MAP_FD on the device file devfd. */
int vgmem_pci_map_fd(int devfd, int fd, uint64_t offset, uint64_t length,
		     uint32_t flags, uint64_t *va);
/*
 * A FILE_MAP command (share id and path) carried out as the driver wants
 * it: the file opened on the mount bound to the share's tag, then
 * MAP_FD. Fills cmd->status and, on success, cmd->file_map.va.
 */
void vgmem_pci_map_path(int devfd, struct vgmem_ctrl *cmd);

#endif /* LIBVGMEM_PCI_PRIV_H */
