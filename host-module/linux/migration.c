// SPDX-License-Identifier: GPL-2.0
/*
 * VFIO device migration, protocol v2 (<linux/vfio.h>,
 * VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE): stop-and-copy, and pre-copy on
 * kernels that have it (6.2 and later, VGK_HAVE_PRECOPY).
 *
 *   RUNNING -> STOP       the control queue holds doorbells, the VM is
 *                         frozen (vg_vm_freeze: channels preempted, the
 *                         guest's USERD writes land in shadow pages);
 *   STOP -> STOP_COPY     a data file (read-only) hands out the stream:
 *                         the core's records (core/mig_save.c) with this
 *                         device's own state as their DEV record;
 *   RUNNING -> PRE_COPY   the same data file, with the VM running: the
 *                         core sends its chunks and tracks the GPU's
 *                         writes to them (core/mig_track.c); a read with
 *                         nothing to send now fails with ENOMSG, and
 *                         VFIO_MIG_GET_PRECOPY_INFO says what is left;
 *   PRE_COPY -> STOP_COPY the VM stops as for STOP, and the file goes on
 *                         with what was written since it was sent, the
 *                         channels, the DEV record, END;
 *   PRE_COPY -> RUNNING   the data file ends; the VM ran all along;
 *   STOP -> RESUMING      a fresh VM, as a reset makes it, and a data file
 *                         (write-only) that loads a stream into it;
 *   RESUMING -> STOP      the stream must have been whole and good: the
 *                         device state it carried is applied and the
 *                         restored channels get their BAR2 pages; else the
 *                         device is in ERROR, with nothing of the stream
 *                         left in it, until a reset;
 *   STOP -> RUNNING       the VM thaws and the doorbells rung meanwhile
 *                         are served.
 * The VFIO core walks longer arcs through these (vfio_mig_get_next_state).
 * Leaving STOP_COPY or RESUMING, a close and a reset end the data file:
 * its reads and writes fail with -ENODEV from then on.
 *
 * Lock rules: v->lock serialises the state changes with control commands
 * (a command runs whole under it, so none is half done at STOP), netlink,
 * reset and close. A data file's lock guards its stream; it nests inside
 * v->lock (state changes end a file under both) and a read or write takes
 * only it, then the core's gpu->lock inside the core's calls.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vgk_drv.h"

/*
 * This device's state in the stream (the DEV record), little endian:
 * what the guest set in config space and BAR0. Interrupt eventfds are the
 * VMM's and set again by it; the channels travel in the core's records.
 */
#define VGK_DEV_MAGIC		"VGMEMPCI"
#define VGK_DEV_VERSION		1
#define VGK_DEV_F_INTX_MASKED	BIT(0)

struct vgk_devstate {
	u8 magic[8];
	__le32 version;
	__le32 len;			/* sizeof(struct vgk_devstate) */
	u8 cfg[VGK_CFG_SIZE];
	__le64 q_base;
	__le32 q_entries;
	__le32 q_producer;
	__le32 q_consumer;
	__le32 q_error;			/* 0 or a negative errno */
	__le32 irq_cause;
	__le32 irq_mask;
	__le64 faulted;
	__le32 flags;			/* VGK_DEV_F_* */
	__le32 reserved;		/* 0 */
} __packed;

/* What a data file moves the stream through, per call at most. */
#define VGK_MIG_BUF	(64 * 1024)

struct vgk_mig_file {
	struct file *filp;
	/* lock: everything below; v is only used while !disabled. */
	struct mutex lock;
	struct vgk_vgpu *v;
	bool disabled;
	int err;			/* sticky: the stream is broken */
	struct vg_mig_save *save;	/* PRE_COPY, STOP_COPY */
	bool precopy;			/* save began in PRE_COPY */
	bool stopped;			/* and went on to STOP_COPY */
	struct vg_mig_load *load;	/* RESUMING */
	struct vg_mig_dev dev;
	struct vgk_devstate state;	/* sent, or received and checked */
	u8 *buf;
};

static void vgk_mig_dev_save(struct vgk_vgpu *v, struct vgk_devstate *d)
{
	memset(d, 0, sizeof(*d));
	memcpy(d->magic, VGK_DEV_MAGIC, sizeof(d->magic));
	d->version = cpu_to_le32(VGK_DEV_VERSION);
	d->len = cpu_to_le32(sizeof(*d));
	spin_lock(&v->reg_lock);
	memcpy(d->cfg, v->cfg, VGK_CFG_SIZE);
	d->q_base = cpu_to_le64(v->q_base);
	d->q_entries = cpu_to_le32(v->q_entries);
	d->q_producer = cpu_to_le32(v->q_producer);
	d->q_consumer = cpu_to_le32(v->q_consumer);
	d->q_error = cpu_to_le32((u32)v->q_error);
	d->irq_cause = cpu_to_le32(v->irq_cause);
	d->irq_mask = cpu_to_le32(v->irq_mask);
	d->faulted = cpu_to_le64(v->faulted);
	d->flags = cpu_to_le32(v->intx_masked ? VGK_DEV_F_INTX_MASKED : 0);
	spin_unlock(&v->reg_lock);
}

/*
 * The destination's check of a DEV record (struct vg_mig_dev.load): from
 * another host, so nothing is taken on trust. Every value must be one
 * this device could have reached itself; kept in f->state until the
 * stream is whole.
 */
static int vgk_mig_dev_load(void *priv, const void *buf, u32 len, char *why,
			    size_t why_len)
{
	struct vgk_mig_file *f = priv;
	const struct vgk_devstate *d = buf;
	u8 def[VGK_CFG_SIZE];
	u32 entries, ahead;
	s32 qerr;
	unsigned int i;

	if (len != sizeof(*d) || memcmp(d->magic, VGK_DEV_MAGIC, 8) ||
	    le32_to_cpu(d->len) != sizeof(*d)) {
		snprintf(why, why_len, "not a vgmem vGPU's state (%u bytes)",
			 len);
		return -EBADMSG;
	}
	if (le32_to_cpu(d->version) != VGK_DEV_VERSION) {
		snprintf(why, why_len, "vGPU state version %u, this host reads %u",
			 le32_to_cpu(d->version), VGK_DEV_VERSION);
		return -EPROTONOSUPPORT;
	}
	/* Config space: what the guest cannot write must be this device's. */
	vgk_cfg_default(def);
	for (i = 0; i < VGK_CFG_SIZE; i++) {
		if ((d->cfg[i] ^ def[i]) & ~vgk_cfg_wmask[i]) {
			snprintf(why, why_len,
				 "config space of another device (byte %#x is %#x, here %#x)",
				 i, d->cfg[i], def[i]);
			return -EBADMSG;
		}
	}
	entries = le32_to_cpu(d->q_entries);
	ahead = le32_to_cpu(d->q_producer) - le32_to_cpu(d->q_consumer);
	qerr = (s32)le32_to_cpu(d->q_error);
	if ((entries && !vgmem_ctrlq_entries_ok(entries)) || ahead > entries ||
	    !IS_ALIGNED(le64_to_cpu(d->q_base), PAGE_SIZE) ||
	    (qerr && qerr != -EINVAL && qerr != -EFAULT && qerr != -ENOMEM)) {
		snprintf(why, why_len,
			 "control queue of %u entries at %#llx, %u commands queued, error %d",
			 entries, le64_to_cpu(d->q_base), ahead, qerr);
		return -EBADMSG;
	}
	if ((le32_to_cpu(d->irq_cause) | le32_to_cpu(d->irq_mask)) & ~VGK_IRQ_ALL ||
	    le32_to_cpu(d->flags) & ~VGK_DEV_F_INTX_MASKED || d->reserved) {
		snprintf(why, why_len, "interrupt cause %#x, mask %#x, flags %#x",
			 le32_to_cpu(d->irq_cause), le32_to_cpu(d->irq_mask),
			 le32_to_cpu(d->flags));
		return -EBADMSG;
	}
	memcpy(&f->state, d, sizeof(*d));
	return 0;
}

/* A good stream's device state, checked above; lock held, VM frozen. */
static void vgk_mig_dev_apply(struct vgk_vgpu *v, const struct vgk_devstate *d)
{
	u32 id;

	lockdep_assert_held(&v->lock);
	spin_lock(&v->reg_lock);
	memcpy(v->cfg, d->cfg, VGK_CFG_SIZE);
	v->q_base = le64_to_cpu(d->q_base);
	v->q_entries = le32_to_cpu(d->q_entries);
	v->q_producer = le32_to_cpu(d->q_producer);
	v->q_consumer = le32_to_cpu(d->q_consumer);
	v->q_error = (s32)le32_to_cpu(d->q_error);
	v->irq_cause = le32_to_cpu(d->irq_cause);
	v->irq_mask = le32_to_cpu(d->irq_mask);
	v->faulted = le64_to_cpu(d->faulted);
	v->intx_masked = le32_to_cpu(d->flags) & VGK_DEV_F_INTX_MASKED;
	spin_unlock(&v->reg_lock);
	/* The restored channels, at their ids, become reachable in BAR2. */
	for (id = 0; id < VGK_USERD_PAGES; id++)
		if (vg_chan_lookup(v->vm, id))
			WARN_ON(vgk_userd_add_chan(v, id));
}

/* ---- the data file ------------------------------------------------------- */

static ssize_t vgk_mig_read(struct file *filp, char __user *ubuf, size_t len,
			    loff_t *pos)
{
	struct vgk_mig_file *f = filp->private_data;
	ssize_t done = 0, n;

	if (pos)
		return -ESPIPE;
	mutex_lock(&f->lock);
	if (f->disabled || !f->save) {
		done = -ENODEV;
		goto out_unlock;
	}
	if (f->err) {
		done = f->err;
		goto out_unlock;
	}
	while ((size_t)done < len) {
		size_t want = min_t(size_t, len - done, VGK_MIG_BUF);

		n = vg_mig_save_read(f->save, f->buf, want);
		if (n == -ENOMSG) {
			/* PRE_COPY: nothing to send for now; not an error. */
			done = done ? done : n;
			break;
		}
		if (n < 0) {
			f->err = n;
			done = done ? done : n;
			break;
		}
		/* The bytes are the stream's now: losing them breaks it. */
		if (n && copy_to_user(ubuf + done, f->buf, n)) {
			f->err = -EFAULT;
			done = done ? done : -EFAULT;
			break;
		}
		done += n;
		if ((size_t)n < want)
			break;		/* the end */
	}
out_unlock:
	mutex_unlock(&f->lock);
	return done;
}

static ssize_t vgk_mig_write(struct file *filp, const char __user *ubuf,
			     size_t len, loff_t *pos)
{
	struct vgk_mig_file *f = filp->private_data;
	ssize_t done = 0, n;

	if (pos)
		return -ESPIPE;
	mutex_lock(&f->lock);
	if (f->disabled || !f->load) {
		done = -ENODEV;
		goto out_unlock;
	}
	while ((size_t)done < len) {
		size_t want = min_t(size_t, len - done, VGK_MIG_BUF);

		if (copy_from_user(f->buf, ubuf + done, want)) {
			done = done ? done : -EFAULT;
			break;
		}
		/* The core's refusal is final, and says why in the log. */
		n = vg_mig_load_write(f->load, f->buf, want);
		if (n < 0) {
			done = n;
			break;
		}
		done += n;
	}
out_unlock:
	mutex_unlock(&f->lock);
	return done;
}

#if VGK_HAVE_PRECOPY
/* VFIO_MIG_GET_PRECOPY_INFO: what PRE_COPY has left to send; -EINVAL after. */
static long vgk_mig_ioctl(struct file *filp, unsigned int cmd,
			  unsigned long arg)
{
	const unsigned long minsz = offsetofend(struct vfio_precopy_info,
						dirty_bytes);
	struct vgk_mig_file *f = filp->private_data;
	struct vfio_precopy_info info;
	int err = 0;

	if (cmd != VFIO_MIG_GET_PRECOPY_INFO)
		return -ENOTTY;
	if (copy_from_user(&info, (void __user *)arg, minsz))
		return -EFAULT;
	if (info.argsz < minsz)
		return -EINVAL;
	mutex_lock(&f->lock);
	if (f->disabled || !f->save || !f->precopy || f->stopped)
		err = -EINVAL;
	else
		vg_mig_precopy_info(f->save, &info.initial_bytes,
				    &info.dirty_bytes);
	mutex_unlock(&f->lock);
	if (err)
		return err;
	info.flags = 0;
	return copy_to_user((void __user *)arg, &info, minsz) ? -EFAULT : 0;
}
#endif

static int vgk_mig_release(struct inode *inode, struct file *filp)
{
	struct vgk_mig_file *f = filp->private_data;

	/* The device let go of it first (vgk_mig_file_end): nothing is left. */
	WARN_ON(f->save || f->load);
	mutex_destroy(&f->lock);
	kvfree(f->buf);
	kfree(f);
	return 0;
}

/*
 * No .llseek: the data files are streams (stream_open), so lseek and
 * pread/pwrite fail with -ESPIPE.
 */
static const struct file_operations vgk_mig_save_fops = {
	.owner = THIS_MODULE,
	.read = vgk_mig_read,
#if VGK_HAVE_PRECOPY
	.unlocked_ioctl = vgk_mig_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
#endif
	.release = vgk_mig_release,
};

static const struct file_operations vgk_mig_load_fops = {
	.owner = THIS_MODULE,
	.write = vgk_mig_write,
	.release = vgk_mig_release,
};

static struct vgk_mig_file *vgk_mig_file_new(struct vgk_vgpu *v,
					     const struct file_operations *fops,
					     int flags)
{
	struct vgk_mig_file *f;
	int err;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->buf = kvmalloc(VGK_MIG_BUF, GFP_KERNEL_ACCOUNT);
	if (!f->buf) {
		err = -ENOMEM;
		goto err_free;
	}
	mutex_init(&f->lock);
	f->v = v;
	f->filp = anon_inode_getfile("[vgmem-migration]", fops, f, flags);
	if (IS_ERR(f->filp)) {
		err = PTR_ERR(f->filp);
		goto err_destroy;
	}
	stream_open(f->filp->f_inode, f->filp);
	return f;

err_destroy:
	mutex_destroy(&f->lock);
	kvfree(f->buf);
err_free:
	kfree(f);
	return ERR_PTR(err);
}

/*
 * End the data file: its stream is dropped (a load unfinished is undone,
 * leaving the VM empty) and later reads and writes fail. The returned
 * value is a finished load's: 0 if the stream was whole and good.
 */
static int vgk_mig_file_end(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f = v->mig_file;
	int err = 0;

	lockdep_assert_held(&v->lock);
	if (!f)
		return 0;
	mutex_lock(&f->lock);
	f->disabled = true;
	vg_mig_save_end(f->save);
	f->save = NULL;
	if (f->load) {
		err = vg_mig_load_finish(f->load);
		f->load = NULL;
	}
	f->v = NULL;
	mutex_unlock(&f->lock);
	fput(f->filp);
	v->mig_file = NULL;
	return err;
}

/* ---- the states ---------------------------------------------------------- */

static int vgk_mig_stop(struct vgk_vgpu *v)
{
	int err;

	lockdep_assert_held(&v->lock);
	if (!v->vm)
		return -ENODEV;		/* a reset failed: nothing to stop */
	vgk_ctrlq_dev_pause(v, true);
	err = vg_vm_freeze(v->vm);
	if (err && err != -EALREADY) {
		vgk_ctrlq_dev_pause(v, false);
		return err;
	}
	return 0;
}

static void vgk_mig_run(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->lock);
	vg_vm_thaw(v->vm);
	vgk_ctrlq_dev_pause(v, false);
}

static struct file *vgk_mig_save_start(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f;
	int err;

	lockdep_assert_held(&v->lock);
	f = vgk_mig_file_new(v, &vgk_mig_save_fops, O_RDONLY);
	if (IS_ERR(f))
		return ERR_CAST(f);
	vgk_mig_dev_save(v, &f->state);
	f->dev.state = &f->state;
	f->dev.len = sizeof(f->state);
	err = vg_mig_save_begin(v->vm, &f->dev, &f->save);
	if (err) {
		fput(f->filp);
		return ERR_PTR(err);
	}
	get_file(f->filp);		/* ours; the VMM's fd holds the other */
	v->mig_file = f;
	return f->filp;
}

#if VGK_HAVE_PRECOPY
/* RUNNING -> PRE_COPY: the save begins with the VM running. */
static struct file *vgk_mig_precopy_start(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f;
	int err;

	lockdep_assert_held(&v->lock);
	if (!v->vm)
		return ERR_PTR(-ENODEV);
	f = vgk_mig_file_new(v, &vgk_mig_save_fops, O_RDONLY);
	if (IS_ERR(f))
		return ERR_CAST(f);
	err = vg_mig_precopy_begin(v->vm, &f->save);
	if (err) {
		fput(f->filp);
		return ERR_PTR(err);
	}
	f->precopy = true;
	get_file(f->filp);
	v->mig_file = f;
	return f->filp;
}

/*
 * PRE_COPY -> STOP_COPY: stopped as RUNNING -> STOP stops it, the device's
 * state taken now, and the same file goes on to the end of the stream.
 */
static int vgk_mig_precopy_stop(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f = v->mig_file;
	int err;

	lockdep_assert_held(&v->lock);
	if (WARN_ON(!f || !f->precopy))
		return -EINVAL;
	err = vgk_mig_stop(v);
	if (err)
		return err;
	mutex_lock(&f->lock);
	vgk_mig_dev_save(v, &f->state);
	f->dev.state = &f->state;
	f->dev.len = sizeof(f->state);
	err = f->err ? f->err : vg_mig_save_stop(f->save, &f->dev);
	if (!err)
		f->stopped = true;
	mutex_unlock(&f->lock);
	if (err)
		vgk_mig_run(v);	/* still PRE_COPY, running */
	return err;
}
#endif

static struct file *vgk_mig_load_start(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f;
	int err;

	lockdep_assert_held(&v->lock);
	f = vgk_mig_file_new(v, &vgk_mig_load_fops, O_WRONLY);
	if (IS_ERR(f))
		return ERR_CAST(f);
	/* Loading a state replaces the device's: start from a fresh one. */
	err = vgk_vgpu_renew(v);
	if (err)
		goto err_put;
	f->dev.load = vgk_mig_dev_load;
	f->dev.priv = f;
	/* The load freezes the new VM: restored channels wait for RUNNING. */
	err = vg_mig_load_begin(v->vm, &f->dev, &f->load);
	if (err)
		goto err_put;
	get_file(f->filp);
	v->mig_file = f;
	return f->filp;

err_put:
	fput(f->filp);
	return ERR_PTR(err);
}

static int vgk_mig_load_end(struct vgk_vgpu *v)
{
	struct vgk_mig_file *f = v->mig_file;
	int err;

	lockdep_assert_held(&v->lock);
	if (WARN_ON(!f))
		return -EINVAL;
	get_file(f->filp);		/* f->state outlives the end */
	err = vgk_mig_file_end(v);
	if (!err)
		vgk_mig_dev_apply(v, &f->state);
	fput(f->filp);
	return err;
}

/* One arc of the FSM; returns the data file the arc opens, if any. */
static struct file *vgk_mig_step(struct vgk_vgpu *v,
				 enum vfio_device_mig_state next)
{
	enum vfio_device_mig_state cur = v->mig_state;
	int err;

	if (cur == VFIO_DEVICE_STATE_RUNNING && next == VFIO_DEVICE_STATE_STOP) {
		err = vgk_mig_stop(v);
		return err ? ERR_PTR(err) : NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP && next == VFIO_DEVICE_STATE_RUNNING) {
		vgk_mig_run(v);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP && next == VFIO_DEVICE_STATE_STOP_COPY)
		return vgk_mig_save_start(v);
	if (cur == VFIO_DEVICE_STATE_STOP_COPY && next == VFIO_DEVICE_STATE_STOP) {
		vgk_mig_file_end(v);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_STOP && next == VFIO_DEVICE_STATE_RESUMING)
		return vgk_mig_load_start(v);
	if (cur == VFIO_DEVICE_STATE_RESUMING && next == VFIO_DEVICE_STATE_STOP) {
		err = vgk_mig_load_end(v);
		return err ? ERR_PTR(err) : NULL;
	}
#if VGK_HAVE_PRECOPY
	if (cur == VFIO_DEVICE_STATE_RUNNING &&
	    next == VFIO_DEVICE_STATE_PRE_COPY)
		return vgk_mig_precopy_start(v);
	if (cur == VFIO_DEVICE_STATE_PRE_COPY &&
	    next == VFIO_DEVICE_STATE_RUNNING) {
		vgk_mig_file_end(v);
		return NULL;
	}
	if (cur == VFIO_DEVICE_STATE_PRE_COPY &&
	    next == VFIO_DEVICE_STATE_STOP_COPY) {
		err = vgk_mig_precopy_stop(v);
		return err ? ERR_PTR(err) : NULL;
	}
#endif
	/* vfio_mig_get_next_state() offers no other arc for our flags. */
	WARN_ON_ONCE(1);
	return ERR_PTR(-EINVAL);
}

static struct file *vgk_mig_set_state(struct vfio_device *vdev,
				      enum vfio_device_mig_state new_state)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	enum vfio_device_mig_state next;
	struct file *res = NULL;
	int err;

	mutex_lock(&v->lock);
	while (v->mig_state != new_state) {
		err = vfio_mig_get_next_state(vdev, v->mig_state, new_state,
					      &next);
		if (err) {
			res = ERR_PTR(err);
			break;
		}
		res = vgk_mig_step(v, next);
		if (IS_ERR(res)) {
			/*
			 * A refused stream leaves nothing behind, but the
			 * device has no state the guest had: ERROR until a
			 * reset. Other arcs fail with the state unchanged.
			 */
			if (v->mig_state == VFIO_DEVICE_STATE_RESUMING)
				v->mig_state = VFIO_DEVICE_STATE_ERROR;
			break;
		}
		v->mig_state = next;
		if (WARN_ON(res && next != new_state)) {
			fput(res);
			res = ERR_PTR(-EINVAL);
			break;
		}
	}
	mutex_unlock(&v->lock);
	return res;
}

static int vgk_mig_get_state(struct vfio_device *vdev,
			     enum vfio_device_mig_state *state)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);

	mutex_lock(&v->lock);
	*state = v->mig_state;
	mutex_unlock(&v->lock);
	return 0;
}

/*
 * VFIO_DEVICE_FEATURE_MIG_DATA_SIZE (6.2 and later), in any state: what
 * the stop-and-copy phase would take, were it begun now. In PRE_COPY what
 * the pre-copy has not sent or must send again (vg_mig_save_left), else
 * the stream's bound from the VM's BOs and channels (vg_mig_save_max):
 * every chunk as data, the most a channel's state can be, this device's
 * DEV record; the stream itself is shorter by the chunks of zeroes it
 * leaves out.
 */
static int __maybe_unused vgk_mig_get_data_size(struct vfio_device *vdev,
						unsigned long *len)
{
	struct vgk_vgpu *v = vgk_vgpu_from_vdev(vdev);
	struct vgk_mig_file *f;
	int err = 0;

	mutex_lock(&v->lock);
	f = v->mig_file;
	if (!v->vm) {
		err = -ENODEV;		/* a reset failed: there is no VM */
	} else if (f && f->precopy) {
		mutex_lock(&f->lock);
		*len = f->save ? vg_mig_save_left(f->save,
						  sizeof(struct vgk_devstate)) : 0;
		mutex_unlock(&f->lock);
	} else {
		*len = vg_mig_save_max(v->vm, sizeof(struct vgk_devstate));
	}
	mutex_unlock(&v->lock);
	return err;
}

static const struct vfio_migration_ops vgk_mig_ops = {
	.migration_set_state = vgk_mig_set_state,
	.migration_get_state = vgk_mig_get_state,
	VGK_MIG_DATA_SIZE_OP(vgk_mig_get_data_size)
};

void vgk_mig_init(struct vgk_vgpu *v)
{
	v->vdev.migration_flags = VFIO_MIGRATION_STOP_COPY;
#if VGK_HAVE_PRECOPY
	/* The GPU's writes are tracked with read-only PTEs and faults. */
	if (vg_mig_precopy_possible(v->gpu->core))
		v->vdev.migration_flags |= VFIO_MIGRATION_PRE_COPY;
#endif
	v->vdev.mig_ops = &vgk_mig_ops;
	v->mig_state = VFIO_DEVICE_STATE_RUNNING;
}

void vgk_mig_reset(struct vgk_vgpu *v)
{
	lockdep_assert_held(&v->lock);
	vgk_mig_file_end(v);
	if (v->vm)
		vg_vm_thaw(v->vm);
	vgk_ctrlq_dev_pause(v, false);
	v->mig_state = VFIO_DEVICE_STATE_RUNNING;
}
