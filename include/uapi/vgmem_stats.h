/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgmem's statistics schema: every counter a GPU, a VM or the host's file
 * cache reports is one line of a table below, and everything that carries
 * or shows one is generated from that line: the netlink attribute numbers
 * (enum vgmem_gpu_stat_attr, vgmem_vm_stat_attr, vgmem_lrc_stat_attr in
 * <uapi/vgmem_netlink.h>), the struct members (struct vgmem_vm_stats here
 * and the guest's STATS command; struct vg_gpu_stats and vg_lrc_stats in
 * the core; libvgnl's and mgmtd's), vgmem.ko's netlink put and its fold of
 * a closed vGPU's counters, libvgnl's parse, mgmtd's copies from either
 * backend, vgmem-nl's keys, and what people see: mgmtd's REST members and
 * Prometheus families, and vgmemctl's lines. A new counter is one line
 * here plus the code that counts it (and its tests; the REST API's
 * description, mgmtd/openapi.json and docs/rest.md, says what it means).
 *
 * A line of the file cache's table is X(field, ATTR, kind, help, unit, prom):
 *  field  the member's name in every struct, vgmem-nl's key;
 *  ATTR   the netlink attribute's name after its table's prefix
 *         (VGMEM_GS_, VGMEM_VS_, VGMEM_LS_);
 *  kind   VGMEM_STAT_COUNTER (a u64 that only grows: since the GPU was
 *         registered, the vGPU opened or vgmem.ko loaded), VGMEM_STAT_GAUGE
 *         (a u64 value now) or VGMEM_STAT_HIST (VGMEM_HIST_BUCKETS u64
 *         counts, bucket i [2^i, 2^(i+1)) us, sent as a nest of enum
 *         vgmem_hist_attr);
 *  help   one sentence: what it counts, with its unit.
 *  unit   VGMEM_UNIT_COUNT or VGMEM_UNIT_BYTES (below);
 *  prom   its Prometheus family, the full name (help is its HELP).
 * The file cache is shown in REST after its field names alone (GET
 * /v1/lrc's members).
 *
 * The GPU's and the VM's counters are shown in groups among the model's
 * own facts (policy, entitlement, sizes), which cannot follow from a name,
 * so their lines say where, in six more columns:
 * X(field, ATTR, kind, help, unit, rest, show, prom, label, prom_help):
 *  unit       VGMEM_UNIT_COUNT (events, chunks), VGMEM_UNIT_BYTES or
 *             VGMEM_UNIT_NS (a time; a histogram's too): how vgmemctl
 *             prints the value (a number, 1.5G, 2.1ms) and whether a
 *             metric shows seconds;
 *  rest       the REST member: "key" in the GPU or VM object, or
 *             "group.key" in its object "group". A group sits where its
 *             first line is, its histograms after the rest of it; a
 *             histogram is only in the detail views (one GPU, one VM);
 *  show       vgmemctl's words for it in `gpu N` and `vm ID`, "%s" where
 *             the value goes ("suspended %s times"); a group is one line,
 *             its words joined by commas. NULL: not shown (histograms);
 *  prom       the Prometheus family, its full name (grep finds it). Lines
 *             of one name are one family: a family of counters or gauges
 *             has a series per line, told apart by label; a histogram
 *             family is its VGMEM_STAT_HIST line and a counter of
 *             nanoseconds, its _sum (suspend_total_ns is only that).
 *             TYPE follows from kind. NULL: not exported (the GPU's
 *             histograms: sum the VMs' by gpu);
 *  label      the series' extra label, e.g. "direction=\"out\"", or NULL;
 *  prom_help  the family's HELP on exactly one of its lines, NULL on the
 *             others.
 * tests/unit/test_stats_schema.c checks these rules (names end in _total
 * for counters, _bytes and _seconds by unit, one HELP a family, ...), and
 * test_rest_stats.c and test_rest_vgmemctl.c that every line is shown.
 *
 * Code that needs only a line's field, ATTR and kind (the kernel, libvgnl,
 * the backends) takes them as (field, attr, kind, ...), which fits every
 * table and any presentation column added later.
 *
 * The order of a table is ABI: attribute numbers follow it (from 2, after
 * UNSPEC and PAD), and so does struct vgmem_vm_stats's layout. New lines go
 * at the end of their table; a line is never removed or moved.
 */
#ifndef _UAPI_VGMEM_STATS_H
#define _UAPI_VGMEM_STATS_H

#define VGMEM_STAT_COUNTER	0
#define VGMEM_STAT_GAUGE	1
#define VGMEM_STAT_HIST		2

#define VGMEM_HIST_BUCKETS	24	/* bucket i: [2^i, 2^(i+1)) us; 0 also < 1 us */

#define VGMEM_UNIT_COUNT	0	/* events, chunks, passes */
#define VGMEM_UNIT_BYTES	1
#define VGMEM_UNIT_NS		2	/* nanoseconds; metrics in seconds */

/*
 * A GPU's relocation counters (VGMEM_A_GPU_STATS). The GPU's sizes and
 * settings (VRAM size and use, chunk size, policy, ...) are attributes of
 * their own, not counters.
 */
#define VGMEM_GPU_STATS(X)						\
	X(reloc_out_chunks, RELOC_OUT_CHUNKS, VGMEM_STAT_COUNTER,	\
	  "Chunks moved from VRAM to host RAM.", VGMEM_UNIT_COUNT,	\
	  "relocations.out_chunks", "relocated out %s chunks",		\
	  "vgmem_gpu_relocation_chunks_total", "direction=\"out\"",	\
	  "Chunks moved between VRAM and host RAM.")			\
	X(reloc_in_chunks, RELOC_IN_CHUNKS, VGMEM_STAT_COUNTER,		\
	  "Chunks moved from host RAM to VRAM.", VGMEM_UNIT_COUNT,	\
	  "relocations.in_chunks", "back in %s chunks",			\
	  "vgmem_gpu_relocation_chunks_total", "direction=\"in\"", NULL) \
	X(bytes_out, BYTES_OUT, VGMEM_STAT_COUNTER,			\
	  "Bytes moved from VRAM to host RAM.", VGMEM_UNIT_BYTES,	\
	  "relocations.bytes_out", "%s out",				\
	  "vgmem_gpu_relocation_bytes_total", "direction=\"out\"",	\
	  "Bytes moved between VRAM and host RAM.")			\
	X(bytes_in, BYTES_IN, VGMEM_STAT_COUNTER,			\
	  "Bytes moved from host RAM to VRAM.", VGMEM_UNIT_BYTES,	\
	  "relocations.bytes_in", "%s in",				\
	  "vgmem_gpu_relocation_bytes_total", "direction=\"in\"", NULL)	\
	X(relocations, RELOCATIONS, VGMEM_STAT_COUNTER,			\
	  "Relocation passes (suspend, copy, resume).", VGMEM_UNIT_COUNT, \
	  "relocations.passes", "%s passes",				\
	  "vgmem_gpu_relocations_total", NULL,				\
	  "Relocation passes.")						\
	X(reloc_failures, RELOC_FAILURES, VGMEM_STAT_COUNTER,		\
	  "Relocation passes that failed.", VGMEM_UNIT_COUNT,		\
	  "relocations.failures", "%s failed",				\
	  "vgmem_gpu_relocation_failures_total", NULL,			\
	  "Relocation passes that failed.")				\
	X(copy_device_ns, COPY_DEVICE_NS, VGMEM_STAT_COUNTER,		\
	  "Nanoseconds the copy engine spent relocating.", VGMEM_UNIT_NS, \
	  "relocations.copy_ns", "copy engine busy %s",			\
	  "vgmem_gpu_copy_seconds_total", NULL,				\
	  "Time the copy engine spent relocating.")			\
	X(faults, FAULTS, VGMEM_STAT_COUNTER,				\
	  "Channel errors on the GPU.", VGMEM_UNIT_COUNT,		\
	  "faults", "faults %s",					\
	  "vgmem_gpu_faults_total", NULL,				\
	  "Channel errors on the GPU.")					\
	X(suspend_hist, SUSPEND_HIST, VGMEM_STAT_HIST,			\
	  "Suspensions of a VM for relocation, by length.", VGMEM_UNIT_NS, \
	  "suspension_histogram_log2_us", NULL,				\
	  NULL, NULL, NULL)						\
	X(stall_hist, STALL_HIST, VGMEM_STAT_HIST,			\
	  "Allocations that waited for relocation, by wait.", VGMEM_UNIT_NS, \
	  "alloc_stall_histogram_log2_us", NULL,			\
	  NULL, NULL, NULL)

/*
 * A VM's statistics (VGMEM_A_VM_STATS, and struct vgmem_vm_stats after its
 * quota and entitlement, which are attributes of their own). Counters
 * restart when the vGPU is opened again. struct vgmem_vm_stats is the
 * guest's STATS command, and at 504 bytes it fills its 512-byte control
 * slot (core/ctrl.c asserts it): a new line here needs that command to
 * change first.
 */
#define VGMEM_VM_STATS(X)						\
	X(allocated, ALLOCATED, VGMEM_STAT_GAUGE,			\
	  "Bytes in live buffer objects.", VGMEM_UNIT_BYTES,		\
	  "usage.allocated", "allocated %s",				\
	  "vgmem_vm_allocated_bytes", NULL,				\
	  "Bytes in live buffer objects.")				\
	X(resident, RESIDENT, VGMEM_STAT_GAUGE,				\
	  "Bytes of buffer objects in VRAM.", VGMEM_UNIT_BYTES,		\
	  "usage.resident", "in VRAM %s",				\
	  "vgmem_vm_resident_bytes", NULL,				\
	  "Bytes in VRAM.")						\
	X(relocated, RELOCATED, VGMEM_STAT_GAUGE,			\
	  "Bytes of buffer objects relocated to host RAM.", VGMEM_UNIT_BYTES, \
	  "usage.relocated", "in host RAM %s",				\
	  "vgmem_vm_relocated_bytes", NULL,				\
	  "Bytes relocated to host RAM now.")				\
	X(reloc_out_chunks, RELOC_OUT_CHUNKS, VGMEM_STAT_COUNTER,	\
	  "Chunks moved from VRAM to host RAM.", VGMEM_UNIT_COUNT,	\
	  "relocations.out_chunks", "relocated out %s chunks",		\
	  "vgmem_vm_relocation_chunks_total", "direction=\"out\"",	\
	  "Chunks moved between VRAM and host RAM.")			\
	X(reloc_in_chunks, RELOC_IN_CHUNKS, VGMEM_STAT_COUNTER,		\
	  "Chunks moved from host RAM to VRAM.", VGMEM_UNIT_COUNT,	\
	  "relocations.in_chunks", "back in %s chunks",			\
	  "vgmem_vm_relocation_chunks_total", "direction=\"in\"", NULL)	\
	X(bytes_out, BYTES_OUT, VGMEM_STAT_COUNTER,			\
	  "Bytes moved from VRAM to host RAM.", VGMEM_UNIT_BYTES,	\
	  "relocations.bytes_out", "%s out",				\
	  "vgmem_vm_relocation_bytes_total", "direction=\"out\"",	\
	  "Bytes moved between VRAM and host RAM.")			\
	X(bytes_in, BYTES_IN, VGMEM_STAT_COUNTER,			\
	  "Bytes moved from host RAM to VRAM.", VGMEM_UNIT_BYTES,	\
	  "relocations.bytes_in", "%s in",				\
	  "vgmem_vm_relocation_bytes_total", "direction=\"in\"", NULL)	\
	X(suspend_last_ns, SUSPEND_LAST_NS, VGMEM_STAT_GAUGE,		\
	  "Nanoseconds of the last suspension.", VGMEM_UNIT_NS,		\
	  "suspension.last_ns", "last suspension %s",			\
	  "vgmem_vm_suspension_last_seconds", NULL,			\
	  "Length of the last suspension.")				\
	X(suspend_max_ns, SUSPEND_MAX_NS, VGMEM_STAT_GAUGE,		\
	  "Nanoseconds of the longest suspension.", VGMEM_UNIT_NS,	\
	  "suspension.max_ns", "longest %s",				\
	  "vgmem_vm_suspension_max_seconds", NULL,			\
	  "Longest suspension so far.")					\
	X(suspend_total_ns, SUSPEND_TOTAL_NS, VGMEM_STAT_COUNTER,	\
	  "Nanoseconds suspended in all.", VGMEM_UNIT_NS,		\
	  "suspension.total_ns", "total %s",				\
	  "vgmem_vm_suspension_seconds", NULL, NULL)			\
	X(suspends, SUSPENDS, VGMEM_STAT_COUNTER,			\
	  "Times the VM's channels were suspended for relocation.",	\
	  VGMEM_UNIT_COUNT,						\
	  "suspension.count", "suspended %s times",			\
	  "vgmem_vm_suspensions_total", NULL,				\
	  "Times the VM's channels were suspended for relocation.")	\
	X(suspend_hist, SUSPEND_HIST, VGMEM_STAT_HIST,			\
	  "Suspensions, by length.", VGMEM_UNIT_NS,			\
	  "suspension.histogram_log2_us", NULL,				\
	  "vgmem_vm_suspension_seconds", NULL,				\
	  "How long the VM's channels stayed suspended for relocation.") \
	X(stall_hist, STALL_HIST, VGMEM_STAT_HIST,			\
	  "Allocations that waited for relocation, by wait.", VGMEM_UNIT_NS, \
	  "alloc_stall.histogram_log2_us", NULL,			\
	  "vgmem_vm_alloc_stall_seconds", NULL,				\
	  "How long allocations waited for relocation to make room.")	\
	X(stall_total_ns, STALL_TOTAL_NS, VGMEM_STAT_COUNTER,		\
	  "Nanoseconds allocations waited for relocation in all.",	\
	  VGMEM_UNIT_NS,						\
	  "alloc_stall.total_ns", "allocations waited %s for relocation", \
	  "vgmem_vm_alloc_stall_seconds", NULL, NULL)			\
	X(faults, FAULTS, VGMEM_STAT_COUNTER,				\
	  "Channel errors.", VGMEM_UNIT_COUNT,				\
	  "faults", "faults %s",					\
	  "vgmem_vm_faults_total", NULL,				\
	  "Channel errors.")

/*
 * The host's LRC file cache (VGMEM_A_LRC_STATS), summed over its GPUs.
 * Sizes in bytes; a page is 4 KiB unless it says GPU page. Gauges are
 * "now"; bytes_per_page is a mean (a sum over GPUs would mean nothing).
 */
#define VGMEM_LRC_STATS(X)						\
	X(faults_minor, FAULTS_MINOR, VGMEM_STAT_COUNTER,		\
	  "GPU faults a context's own replica served.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_faults_minor_total")		\
	X(faults_major, FAULTS_MAJOR, VGMEM_STAT_COUNTER,		\
	  "GPU faults that fetched data.",				\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_faults_major_total")		\
	X(faults_write, FAULTS_WRITE, VGMEM_STAT_COUNTER,		\
	  "Write faults (privatisations), of the major ones.",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_faults_write_total")		\
	X(merges, MERGES, VGMEM_STAT_COUNTER,				\
	  "4 KiB pages 3-way merged into a host copy.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_merges_total")			\
	X(merge_bytes, MERGE_BYTES, VGMEM_STAT_COUNTER,			\
	  "Bytes those merges applied.",				\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_merge_bytes_total")		\
	X(fetch_storage, FETCH_STORAGE, VGMEM_STAT_COUNTER,		\
	  "Bytes read from the store.",					\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_fetch_storage_bytes_total")	\
	X(store_reads, STORE_READS, VGMEM_STAT_COUNTER,			\
	  "Read calls to the store.",					\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_store_reads_total")		\
	X(fetch_host, FETCH_HOST, VGMEM_STAT_COUNTER,			\
	  "Bytes copied host copy to VRAM.",				\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_fetch_host_bytes_total")		\
	X(fetch_peer, FETCH_PEER, VGMEM_STAT_COUNTER,			\
	  "Bytes copied VRAM to VRAM on one GPU.",			\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_fetch_peer_bytes_total")		\
	X(fetch_gpu, FETCH_GPU, VGMEM_STAT_COUNTER,			\
	  "Bytes copied VRAM to host (release, evict).",		\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_fetch_gpu_bytes_total")		\
	X(readahead_pages, READAHEAD_PAGES, VGMEM_STAT_COUNTER,		\
	  "GPU pages fetched ahead of a fault.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_readahead_pages_total")		\
	X(evictions, EVICTIONS, VGMEM_STAT_COUNTER,			\
	  "GPU-page replicas evicted for the VRAM budget.",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_evictions_total")		\
	X(writeback_bytes, WRITEBACK_BYTES, VGMEM_STAT_COUNTER,		\
	  "Bytes written to the store.",				\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_writeback_bytes_total")		\
	X(writeback_blocks, WRITEBACK_BLOCKS, VGMEM_STAT_COUNTER,	\
	  "4 KiB blocks written to the store.",				\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_writeback_blocks_total")		\
	X(base_copies, BASE_COPIES, VGMEM_STAT_COUNTER,			\
	  "Pristine base copies made by write faults.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_base_copies_total")		\
	X(shared_maps, SHARED_MAPS, VGMEM_STAT_COUNTER,			\
	  "Maps of an existing shared read-only replica.",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_shared_maps_total")		\
	X(replicas_shared, REPLICAS_SHARED, VGMEM_STAT_GAUGE,		\
	  "Shared read-only replicas (in VRAM or host RAM).",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_replicas_shared")		\
	X(replicas_private, REPLICAS_PRIVATE, VGMEM_STAT_GAUGE,		\
	  "Private replicas (in VRAM or host RAM).",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_replicas_private")		\
	X(vram_used, VRAM_USED, VGMEM_STAT_GAUGE,			\
	  "Bytes of replicas in VRAM, all GPUs.",			\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_vram_used_bytes")		\
	X(host_reads_peer, HOST_READS_PEER, VGMEM_STAT_COUNTER,		\
	  "Host reads of pages newest on a GPU.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_host_reads_peer_total")		\
	X(host_changes, HOST_CHANGES, VGMEM_STAT_COUNTER,		\
	  "4 KiB pages changed behind the cache.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_host_changes_total")		\
	X(acquires, ACQUIRES, VGMEM_STAT_COUNTER,			\
	  "Acquire calls.",						\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_acquires_total")			\
	X(releases, RELEASES, VGMEM_STAT_COUNTER,			\
	  "Release calls.",						\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_releases_total")			\
	X(released_pages, RELEASED_PAGES, VGMEM_STAT_COUNTER,		\
	  "4 KiB pages whose version a release raised.",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_released_pages_total")		\
	X(invalidations, INVALIDATIONS, VGMEM_STAT_COUNTER,		\
	  "Replicas unmapped by acquire as stale.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_invalidations_total")		\
	X(cuckoo_hits, CUCKOO_HITS, VGMEM_STAT_COUNTER,			\
	  "GPU pages of host reads the filter answered maybe on a GPU.", \
	  VGMEM_UNIT_COUNT, "vgmem_lrc_cuckoo_hits_total")		\
	X(cuckoo_misses, CUCKOO_MISSES, VGMEM_STAT_COUNTER,		\
	  "GPU pages of host reads the filter answered certainly not on a GPU.", \
	  VGMEM_UNIT_COUNT, "vgmem_lrc_cuckoo_misses_total")		\
	X(files, FILES, VGMEM_STAT_GAUGE,				\
	  "Cached files.",						\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_files")				\
	X(pages, PAGES, VGMEM_STAT_GAUGE,				\
	  "4 KiB page entries.",					\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_pages")				\
	X(bytes_per_page, BYTES_PER_PAGE, VGMEM_STAT_GAUGE,		\
	  "Metadata bytes per 4 KiB page entry.",			\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_page_meta_bytes")		\
	X(host_compares, HOST_COMPARES, VGMEM_STAT_COUNTER,		\
	  "GPU pages compared with the store after its change counter moved.", \
	  VGMEM_UNIT_COUNT, "vgmem_lrc_host_compares_total")		\
	X(host_used, HOST_USED, VGMEM_STAT_GAUGE,			\
	  "Bytes of host copies.",					\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_host_used_bytes")		\
	X(host_evictions, HOST_EVICTIONS, VGMEM_STAT_COUNTER,		\
	  "Host copies dropped for the host-RAM budget.",		\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_host_evictions_total")		\
	X(host_evict_writebacks, HOST_EVICT_WRITEBACKS, VGMEM_STAT_COUNTER, \
	  "Of those, dirty ones written back first.",			\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_host_evict_writebacks_total")	\
	X(replicas_host, REPLICAS_HOST, VGMEM_STAT_GAUGE,		\
	  "Replicas in host RAM, mapped to the GPU, for lack of VRAM.",	\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_replicas_host")			\
	X(replicas_host_used, REPLICAS_HOST_USED, VGMEM_STAT_GAUGE,	\
	  "Bytes of replicas in host RAM (not in vram_used).",		\
	  VGMEM_UNIT_BYTES, "vgmem_lrc_replicas_host_used_bytes")	\
	X(promotions, PROMOTIONS, VGMEM_STAT_COUNTER,			\
	  "Replicas moved from host RAM to VRAM once it was free.",	\
	  VGMEM_UNIT_COUNT, "vgmem_lrc_promotions_total")		\
	X(meta_bytes, META_BYTES, VGMEM_STAT_GAUGE,			\
	  "Bytes of page metadata (page entries, their version vectors, host nodes).", \
	  VGMEM_UNIT_BYTES, "vgmem_lrc_meta_bytes")

/*
 * A struct member for a line: "__u64 field;" or, for a histogram,
 * "__u64 field[VGMEM_HIST_BUCKETS];". Users outside the kernel whose
 * members are uint64_t get the same type (<linux/types.h> has __u64).
 */
#define VGMEM_STAT_DIM_0
#define VGMEM_STAT_DIM_1
#define VGMEM_STAT_DIM_2	[VGMEM_HIST_BUCKETS]
#define VGMEM_STAT_DIM(kind)	VGMEM_STAT_DIM_ ## kind
#define VGMEM_STAT_DIM_OF(kind)	VGMEM_STAT_DIM(kind)
#define VGMEM_STAT_MEMBER(field, attr, kind, ...)			\
	__u64 field VGMEM_STAT_DIM_OF(kind);

#endif /* _UAPI_VGMEM_STATS_H */
