/* SPDX-License-Identifier: MIT */
/*
 * libvgmem: what a guest uses to drive its vGPU. Channels, buffer objects,
 * pushbuffer building, submission and completion, and the built-in
 * workloads. It speaks the ABI of include/uapi/vgmem.h over a transport:
 * the userspace host's in-process transport, a VFIO mdev (what QEMU does;
 * vgmem_open_vfio below) or, inside a VM, the guest kernel driver
 * (vgmem_open_pci below).
 *
 * All functions return 0 or a negative errno. A channel in an error state
 * (see vgmem_chan_error) fails every later call on it with -EIO.
 * Not thread-safe per channel; different channels may be used by different
 * threads.
 */
#ifndef LIBVGMEM_H
#define LIBVGMEM_H

#include <stddef.h>
#include <stdint.h>
#include <uapi/vgmem.h>
#include <uapi/vgmem_guest.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a device is reached. t is the transport's private pointer. */
struct vgmem_transport_ops {
	/* Run one control command; fills cmd->status and outputs. */
	int (*ctrl)(void *t, struct vgmem_ctrl *cmd);
	/* The channel's USERD page as the guest sees it (mapped or trapped). */
	uint32_t (*userd_read)(void *t, uint32_t chan, uint32_t off);
	void (*userd_write)(void *t, uint32_t chan, uint32_t off, uint32_t val);
	/* Guest memory the GPU can reach by guest-physical address. */
	int (*gmem_alloc)(void *t, size_t size, void **cpu, uint64_t *gpa);
	void (*gmem_free)(void *t, void *cpu, size_t size);
	/*
	 * Optional: map a file open at fd (vgmem_map_fd). NULL: the transport
	 * has no files of its own (-EOPNOTSUPP).
	 */
	int (*map_fd)(void *t, int fd, uint64_t offset, uint64_t length,
		      uint32_t flags, uint64_t *va);
};

struct vgmem_dev;
struct vgmem_chan;

int vgmem_open(const struct vgmem_transport_ops *ops, void *t,
	       struct vgmem_dev **out);
void vgmem_close(struct vgmem_dev *dev);	/* destroys its channels */
int vgmem_query(struct vgmem_dev *dev, struct vgmem_ctrl_query *q);
int vgmem_stats(struct vgmem_dev *dev, struct vgmem_vm_stats *st);

int vgmem_bo_alloc(struct vgmem_dev *dev, uint64_t size, uint64_t *va);
int vgmem_bo_alloc_at(struct vgmem_dev *dev, uint64_t size, uint64_t va);
int vgmem_bo_free(struct vgmem_dev *dev, uint64_t va);

/*
 * ---- share files (LRC file cache, guest-driver/lib/file.c) -----------------
 * A file of one of the VM's shares (a virtio-fs directory the operator gave
 * the VM, named by share_id) mapped into the GPU's address space. Kernels
 * and copies use the returned VA like a BO's. Consistency is GAIA's lazy
 * release consistency: bracket the GPU work on a map with vgmem_acquire
 * (see writes released by others: other VMs' GPUs, host processes) and
 * vgmem_release (publish this VM's writes); vgmem_file_sync then writes
 * the newest version to the file (msync). Between acquire and release the
 * GPU sees its own writes and a consistent snapshot of the rest.
 *
 * vgmem_map_file: path is relative to the share's root (no leading '/',
 * no "..", no symlink anywhere on the way); offset and length are
 * multiples of VGMEM_FILE_ALIGN (64 KiB), length not zero; flags is
 * VGMEM_FILE_RO or VGMEM_FILE_RW. On success *va is the map's GPU VA.
 * Errors: -EINVAL bad argument, -ENAMETOOLONG path of VGMEM_FILE_PATH_MAX
 * bytes or more (checked here), -ENOENT no such share or file, -EACCES the
 * path escapes the share or meets a symlink, or RW on a read-only file or
 * share, -EFBIG beyond the file, -ENOSPC no VA range, -ENOMEM.
 */
int vgmem_map_file(struct vgmem_dev *dev, uint32_t share_id, const char *path,
		   uint64_t offset, uint64_t length, uint32_t flags,
		   uint64_t *va);
/*
 * vgmem_map_fd: the same for a file the caller opened itself, inside a VM
 * on its virtio-fs mount (PCI transport): the guest driver names the
 * share by the mount's tag and the file by its path below the mount's
 * root, so a process maps only what it may open (fd open for reading for
 * VGMEM_FILE_RO, for reading and writing for VGMEM_FILE_RW). The mount
 * must be bound to its tag first (vgmem_pci_share_bind). The guest's page
 * cache of the file follows the map: vgmem_acquire first writes the
 * range's dirty pages back (what the CPU wrote, also through mmap, reaches
 * the GPU), vgmem_release, vgmem_file_sync and vgmem_unmap_file drop the
 * range's cached pages (read() sees the GPU's bytes once synced).
 * fd may be closed afterwards. Errors as vgmem_map_file, and -EBADF fd,
 * -EXDEV not on a bound virtio-fs mount, -EACCES fd's mode,
 * -EOPNOTSUPP a transport without files of its own (VFIO, in-process).
 * Over the PCI transport vgmem_map_file opens the file on the mount
 * bound to the share's tag (found in /proc/self/mountinfo) and maps it
 * this way, so programs naming share and path run unchanged in a VM.
 */
int vgmem_map_fd(struct vgmem_dev *dev, int fd, uint64_t offset,
		 uint64_t length, uint32_t flags, uint64_t *va);
/*
 * Unmap the file map starting at va. Writes not yet released are released
 * implicitly and released data reaches the host's cache first: nothing is
 * lost. -EBADF if va is not the start of a file map.
 */
int vgmem_unmap_file(struct vgmem_dev *dev, uint64_t va);
/*
 * [va, va + length) inside one file map, VGMEM_FILE_ALIGN multiples;
 * length 0: from va to the end of the map. -EBADF va in no file map,
 * -EINVAL misaligned or past the map's end.
 *
 * vgmem_acquire: later GPU accesses see every version released before it.
 * vgmem_release: publish the GPU's writes to the range since its acquire.
 *   Wait for the channel work that wrote them first (vgmem_finish).
 * vgmem_file_sync: write the newest version of the range to the file and
 *   fsync it (the guest's msync); released data only.
 */
int vgmem_acquire(struct vgmem_dev *dev, uint64_t va, uint64_t length);
int vgmem_release(struct vgmem_dev *dev, uint64_t va, uint64_t length);
int vgmem_file_sync(struct vgmem_dev *dev, uint64_t va, uint64_t length);

/*
 * The VM's shares as the host lists them (VGMEM_CTRL_SHARES): what
 * vgmem_map_file can name, by id ascending, with each share's virtio-fs
 * tag, so a file on a virtio-fs mount (whose tag the guest knows) maps
 * to a share id. vgmem_shares fills out[0..min(max, *total)) and returns
 * how many it filled (>= 0) or a negative errno; *total (if not NULL)
 * gets the number of shares. out may be NULL when max is 0 (only the
 * total). It pages through the table and starts over when the host's
 * total changes meanwhile (the operator replaced the table); -EAGAIN if
 * it keeps changing, -EIO if the host's answer is malformed.
 * vgmem_share_find: the share whose tag is tag: 0 and *id, -ENOENT if
 * none has it, -EINVAL for a tag no share can have.
 */
struct vgmem_share_info {
	uint32_t id;
	uint32_t flags;			/* VGMEM_SHARE_F_RO */
	char tag[VGMEM_SHARE_TAG_SIZE];	/* NUL-terminated; "" if none */
};

int vgmem_shares(struct vgmem_dev *dev, struct vgmem_share_info *out,
		 unsigned int max, unsigned int *total);
int vgmem_share_find(struct vgmem_dev *dev, const char *tag, uint32_t *id);

/*
 * A channel with a GPFIFO ring of entries (power of two) and pb_bytes of
 * pushbuffer space (a ring itself; 0: 64 KiB) plus a staging area of
 * staging_bytes (0: 1 MiB) for vgmem_write/vgmem_read. Binds the copy class
 * to subchannel 4 and the compute class to subchannel 1.
 */
#define VGMEM_SUBC_COMPUTE	1
#define VGMEM_SUBC_COPY		4
int vgmem_chan_create(struct vgmem_dev *dev, uint32_t entries, size_t pb_bytes,
		      size_t staging_bytes, struct vgmem_chan **out);
void vgmem_chan_destroy(struct vgmem_chan *ch);
uint32_t vgmem_chan_id(const struct vgmem_chan *ch);
/* 0 if healthy, else the enum vgmem_chan_error code and faulting address. */
uint32_t vgmem_chan_error(struct vgmem_chan *ch, uint64_t *addr);

/* Pushbuffer building: methods go into the open segment. */
void vgmem_pb_inc(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		  const uint32_t *data, unsigned int n);
void vgmem_pb_noninc(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		     const uint32_t *data, unsigned int n);
void vgmem_pb_immd(struct vgmem_chan *ch, unsigned int subc, uint32_t mthd,
		   uint16_t data);
/* Raw dwords (tests of malformed input). */
void vgmem_pb_raw(struct vgmem_chan *ch, const uint32_t *dw, unsigned int n);
/*
 * Close the open segment as one GPFIFO entry and publish it (GP_PUT).
 * *seq (if not NULL) names it for vgmem_wait. Waits for ring space.
 * Reads USERD only when the ring or the pushbuffer looks full by what the
 * last read saw, so a channel fault is reported (-EIO) by the first call
 * that reads it, a wait at the latest; once seen, every call fails.
 *
 * Waiting: a slow host is never an error. Every wait libvgmem does by
 * itself (ring or pushbuffer space, vgmem_finish, the convenience
 * operations below) lasts until the work is done or the channel faults
 * (-EIO, vgmem_chan_error() says why), with no deadline: the host may
 * pause a channel for a relocation, share the GPU, or run short of CPU,
 * and the work still completes. Only vgmem_wait() with a non-zero
 * timeout_ns returns -ETIMEDOUT, when the caller's own deadline passes
 * (the work goes on; wait again to see it finish).
 */
int vgmem_submit(struct vgmem_chan *ch, uint64_t *seq);
/* Wait until entry seq completed (GP_GET past it); timeout 0: forever. */
int vgmem_wait(struct vgmem_chan *ch, uint64_t seq, uint64_t timeout_ns);
int vgmem_finish(struct vgmem_chan *ch);	/* submit what is open, wait for all */

/*
 * Raw access for tests of hostile guests and for tools (added by libvgmem's
 * author): a control command as is (returns the transport's error or
 * cmd->status), USERD words of a channel, one arbitrary GPFIFO entry
 * (published like vgmem_submit; the open segment is left alone), and the
 * number of entries submitted so far (the last sequence).
 */
int vgmem_ctrl(struct vgmem_dev *dev, struct vgmem_ctrl *cmd);
uint32_t vgmem_chan_userd_read(struct vgmem_chan *ch, uint32_t off);
void vgmem_chan_userd_write(struct vgmem_chan *ch, uint32_t off, uint32_t val);
int vgmem_submit_entry(struct vgmem_chan *ch, uint64_t entry, uint64_t *seq);
uint64_t vgmem_chan_submitted(const struct vgmem_chan *ch);

/* Convenience operations; each submits and waits. */
int vgmem_launch(struct vgmem_chan *ch, enum vgmem_kernel k,
		 const uint32_t args[VGMEM_CP_NARGS]);
int vgmem_memset(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		 uint32_t value);
int vgmem_fill_pattern(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		       uint32_t seed);
int vgmem_checksum(struct vgmem_chan *ch, uint64_t va, uint64_t bytes,
		   uint64_t scratch_va, uint64_t *sum);
int vgmem_write(struct vgmem_chan *ch, uint64_t va, const void *buf, size_t len);
int vgmem_read(struct vgmem_chan *ch, uint64_t va, void *buf, size_t len);

/* The same FNV-1a over a pattern, computed on the CPU, to check results. */
uint64_t vgmem_pattern_checksum(uint64_t bytes, uint32_t seed);
uint64_t vgmem_fnv1a(uint64_t h, const void *buf, size_t len);
#define VGMEM_FNV_INIT	0xcbf29ce484222325ull

/* Built-in workloads: kernels that touch memory like real tenants. */
enum vgmem_workload {
	VGMEM_WL_STREAM,	/* vector add over the working set */
	VGMEM_WL_STRIDED,	/* strided reads */
	VGMEM_WL_GATHER,	/* random gather */
	VGMEM_WL_HOTCOLD,	/* 10% of the set hot, the rest touched rarely */
	VGMEM_WL_NR
};
const char *vgmem_workload_name(enum vgmem_workload w);
/*
 * Allocate a working set of ws_bytes in BOs of bo_bytes, run iters steps of
 * workload w on channel ch, free it. Deterministic for a seed.
 */
int vgmem_workload_run(struct vgmem_dev *dev, struct vgmem_chan *ch,
		       enum vgmem_workload w, uint64_t ws_bytes,
		       uint64_t bo_bytes, uint32_t iters, uint64_t seed);

/*
 * ---- VFIO transport (guest-driver/lib/vfio.c) ------------------------------
 * Opens a vGPU mediated device the way QEMU does: the mdev's IOMMU group,
 * a type1 container, guest_ram bytes of anonymous memory DMA-mapped at
 * guest-physical VGMEM_VFIO_GPA_BASE (0: VGMEM_VFIO_RAM_DEFAULT), the
 * device fd, BAR0 registers through read/write on it, the USERD pages of
 * BAR2 mapped (or read and written through the fd if the region cannot be
 * mapped), the control queue in guest memory and, if the device offers
 * one, the MSI interrupt on an eventfd (otherwise CONSUMER is polled).
 *
 * On failure vgmem_open_vfio returns a negative errno and
 * vgmem_vfio_error() names the step that failed and why. The same message
 * is set when a control command of a VFIO device fails in the transport
 * (timeout, queue error). Messages are per thread.
 */
#define VGMEM_VFIO_GPA_BASE	0x100000ull	/* guest RAM starts at 1 MiB */
#define VGMEM_VFIO_RAM_DEFAULT	(16ull << 20)
#define VGMEM_VFIO_RAM_MAX	(64ull << 30)
#define VGMEM_VFIO_CTRLQ_ENTRIES 64

int vgmem_open_vfio(const char *mdev_uuid, size_t guest_ram,
		    struct vgmem_dev **out);
/* vgmem_close plus the transport: IRQ, mappings, DMA map, fds. */
void vgmem_close_vfio(struct vgmem_dev *dev);
const char *vgmem_vfio_error(void);

struct vgmem_vfio_info {
	uint32_t vendor, device;	/* PCI ids from config space */
	uint32_t max_channels;		/* REG_MAX_CHANNELS */
	uint32_t ctrlq_entries;
	uint64_t ram_gpa, ram_size;	/* the DMA-mapped guest RAM */
	uint64_t ram_free;		/* bytes of it not allocated */
	int userd_mmap;			/* 1: BAR2 mapped, 0: read/write on the fd */
	int irq;			/* 1: MSI eventfd, 0: polling */
	int iommu_type;			/* VFIO_TYPE1v2_IOMMU or VFIO_TYPE1_IOMMU */
};

/* -ENODEV for a device that is not VFIO-backed (e.g. the in-process host). */
int vgmem_vfio_get_info(struct vgmem_dev *dev, struct vgmem_vfio_info *info);
/*
 * For tools that test the device itself: the VFIO device fd (owned by dev:
 * do not close it) and where BAR2 lies in it. -ENODEV as above.
 */
int vgmem_vfio_device_fd(struct vgmem_dev *dev, uint64_t *bar2_off,
			 uint64_t *bar2_size);
/*
 * Live migration, the VMM's part, for tests of the device's migration: a
 * VMM moves a guest to another device; here the process is both guest and
 * VMM. vgmem_vfio_open_peer opens another mdev in this guest's container
 * (so the same guest RAM reaches it) and returns its VFIO device fd, for
 * the caller to drive through VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE (it
 * owns the fd until it passes it on). vgmem_vfio_switch_device then moves
 * the guest onto that device, as a destination VMM has it: its BAR2
 * mapped where the source's was, the interrupt on it, the source device
 * and group closed. The guest's channels, BOs and control queue go on as
 * they were, if the migration restored them.
 */
int vgmem_vfio_open_peer(struct vgmem_dev *dev, const char *mdev_uuid);
int vgmem_vfio_switch_device(struct vgmem_dev *dev, int fd);
/* BAR0 register access (32-bit, aligned, below VGMEM_BAR0_SIZE), for tools. */
int vgmem_vfio_reg_read(struct vgmem_dev *dev, uint32_t reg, uint32_t *val);
int vgmem_vfio_reg_write(struct vgmem_dev *dev, uint32_t reg, uint32_t val);
/*
 * Up to any number of commands through the control queue, a ring's worth
 * per doorbell; each cmds[i].status tells its outcome. 0, or the
 * transport's error (then the statuses of commands not yet run are
 * untouched).
 */
int vgmem_vfio_ctrl_batch(struct vgmem_dev *dev, struct vgmem_ctrl *cmds,
			  uint32_t n);
/*
 * Hostile-guest checks of the queue itself: point the ring at gpa (e.g.
 * outside the DMA map) and ring once, or ring PRODUCER `ahead` slots past
 * CONSUMER. Reports STATUS and CTRLQ_ERROR as the device left them, then
 * re-arms the queue at its real ring; returns 0 if that worked.
 */
int vgmem_vfio_ctrlq_bad_base(struct vgmem_dev *dev, uint64_t gpa,
			      uint32_t *status, int32_t *qerr);
int vgmem_vfio_ctrlq_bad_producer(struct vgmem_dev *dev, uint32_t ahead,
				  uint32_t *status, int32_t *qerr);

/*
 * ---- PCI transport (guest-driver/lib/pci.c) ---------------------------------
 * Inside a VM whose vGPU the guest kernel driver (vgmem_guest.ko) has bound:
 * the device's character device /dev/vgmemN (include/uapi/vgmem_guest.h).
 * Every program built on libvgmem runs unchanged over it.
 *
 * vgmem_pci_find: the path of the index-th vGPU (0 = the first), in the
 * order the driver numbered them; -ENODEV if there is none (or no driver).
 * vgmem_open_pci: open path (NULL: the first vGPU found); -EPROTO if the
 * driver or device speak another version. On failure vgmem_pci_error()
 * says which step failed and why; a control command the driver refuses
 * fails with its errno as status and sets the message too. Per thread.
 */
int vgmem_pci_find(unsigned int index, char *path, size_t len);
int vgmem_open_pci(const char *path, struct vgmem_dev **out);
/* vgmem_close plus the transport: mappings, DMA buffers, the file. */
void vgmem_close_pci(struct vgmem_dev *dev);
const char *vgmem_pci_error(void);
/* The driver's QUERY answer; -ENODEV for a device of another transport. */
int vgmem_pci_get_query(struct vgmem_dev *dev, struct vgmem_guest_query *q);
/* For tools that test the driver itself: the open file (owned by dev). */
int vgmem_pci_fd(struct vgmem_dev *dev);
/*
 * Bind the virtio-fs mount whose root is dir to its tag, so that files on
 * it can be mapped (root only: CAP_SYS_ADMIN; the binding holds the
 * mount until unbound: umount gives EBUSY before). -ENODEV for a device
 * of another transport, and the errors of VGMEM_GIOC_SHARE_BIND.
 */
int vgmem_pci_share_bind(struct vgmem_dev *dev, const char *tag, const char *dir);
int vgmem_pci_share_unbind(struct vgmem_dev *dev, const char *tag);

#ifdef __cplusplus
}
#endif

#endif /* LIBVGMEM_H */
