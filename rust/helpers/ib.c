// SPDX-License-Identifier: GPL-2.0
/* Wrappers of static inline functions and macros of the RDMA core, for Rust. */

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/gfp.h>
#include <linux/if_link.h>
#include <linux/pci.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/sim.h>

struct kobject *mlx_ext_ib_device_kobj(struct ib_device *dev)
{
	return &dev->dev.kobj;
}

void mlx_ext_ib_device_set_parent(struct ib_device *dev, struct device *parent)
{
	dev->dev.parent = parent;
}

u32 mlx_ext_ah_attr_dlid(const struct rdma_ah_attr *attr)
{
	return rdma_ah_get_dlid(attr);
}

int mlx_ext_ah_init_read(const struct rdma_ah_init_attr *init,
			 struct mlx_ext_ah *out)
{
	const struct rdma_ah_attr *attr = init->ah_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	out->dlid = rdma_ah_get_dlid(attr);
	out->sl = rdma_ah_get_sl(attr);
	out->port = rdma_ah_get_port_num(attr);
	out->grh = !!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH);
	return 0;
}

void mlx_ext_ah_attr_write(struct rdma_ah_attr *attr,
			   const struct mlx_ext_ah *ah)
{
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, ah->dlid);
	rdma_ah_set_sl(attr, ah->sl);
	rdma_ah_set_port_num(attr, ah->port);
}

struct ib_device *mlx_ext_ah_device(const struct ib_ah *ah)
{
	return ah->device;
}

/*
 * IrqSpinLock (rust/ib/sync.rs): interrupts go off with the first such lock
 * a CPU takes and come back on with the last one it releases, whatever the
 * order its guards are dropped in (Rust guards are values: nothing makes
 * them LIFO, and spin_unlock_irqrestore() of the outer one first would turn
 * interrupts on while the inner one is held). The depth and the state to
 * restore are per CPU: interrupts are off while the depth is not zero, so
 * the task stays on the CPU. They are per module (this file is built into
 * each): a lock of the other module taken inside one of ours is a driver
 * call's, released before the call returns.
 */
#ifdef CONFIG_PREEMPT_RT
/* spinlock_t sleeps there: it may not be taken with interrupts off. */
#error "mlx_ext's IRQ-safe spinlocks (rust/ib/sync.rs) do not support PREEMPT_RT"
#endif
static DEFINE_PER_CPU(unsigned int, irq_lock_depth);
static DEFINE_PER_CPU(unsigned long, irq_lock_flags);

void mlx_ext_spin_lock_irq_nested(spinlock_t *lock)
{
	unsigned long flags;

	local_irq_save(flags);
	if (__this_cpu_inc_return(irq_lock_depth) == 1)
		__this_cpu_write(irq_lock_flags, flags);
	spin_lock(lock);
}

void mlx_ext_spin_unlock_irq_nested(spinlock_t *lock)
{
	/*
	 * Interrupts come back on before preemption does, as with
	 * spin_unlock_irqrestore(): a reschedule asked for meanwhile is taken
	 * at the preempt_enable().
	 */
	preempt_disable();
	spin_unlock(lock);
	if (__this_cpu_dec_return(irq_lock_depth) == 0)
		local_irq_restore(__this_cpu_read(irq_lock_flags));
	preempt_enable();
}

bool mlx_ext_spin_trylock_irq_nested(spinlock_t *lock)
{
	unsigned long flags;

	local_irq_save(flags);
	if (__this_cpu_inc_return(irq_lock_depth) == 1)
		__this_cpu_write(irq_lock_flags, flags);
	if (spin_trylock(lock))
		return true;
	if (__this_cpu_dec_return(irq_lock_depth) == 0)
		local_irq_restore(flags);
	return false;
}

void mlx_ext_spin_assert_held(spinlock_t *lock)
{
	lockdep_assert_held(lock);
}

u64 mlx_ext_ktime_get_ns(void)
{
	return ktime_get_ns();
}

/*
 * What differs between kernels on the C side, decided by what the tree's
 * headers offer (rust/ib/compat.rs has the Rust side).
 */
struct workqueue_struct *mlx_ext_alloc_unbound_workqueue(const char *name)
{
	/* A function in 6.12, a macro since 7.x: the call reads the same. */
	return alloc_workqueue("%s", WQ_UNBOUND, 0, name);
}

struct ib_device *mlx_ext_ib_alloc_device(size_t size)
{
	/*
	 * The namespace argument came with ib_alloc_device_with_net(), in
	 * one commit ("RDMA/core: Extend RDMA device registration to be net
	 * namespace aware"; 7.3 ib_verbs.h:3113-3125).
	 */
#ifdef ib_alloc_device_with_net
	return _ib_alloc_device(size, &init_net);
#else
	return _ib_alloc_device(size);
#endif
}

bool mlx_ext_irqs_disabled(void)
{
	return irqs_disabled();
}

void mlx_ext_init_completion(struct completion *c)
{
	init_completion(c);
}

bool mlx_ext_wait_for_completion_ms(struct completion *c, unsigned int ms)
{
	return wait_for_completion_timeout(c, msecs_to_jiffies(ms)) != 0;
}

/*
 * The devices of rust/ib/provider/driver have no DMA device: their DMA addresses are
 * kernel virtual addresses, which only INFINIBAND_VIRT_DMA makes true.
 */
#if IS_ENABLED(CONFIG_INFINIBAND) && !IS_ENABLED(CONFIG_INFINIBAND_VIRT_DMA)
#error "mlx_ext needs CONFIG_INFINIBAND_VIRT_DMA (a kernel without HIGHMEM)"
#endif

/* The client side: what mlx_ext's ULP API (rust/ib/qp.rs) calls. */

void mlx_ext_rcu_read_lock(void)
{
	rcu_read_lock();
}

void mlx_ext_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

/*
 * Another registration reference, for a caller that holds one, so that the
 * count is not zero (the invariant rust/ib/device.rs states where its type
 * is; ib_device_try_get() cannot fail then). Should it fail all the same,
 * the device's last reference went (disable_device() in
 * drivers/infiniband/core/device.c goes on to free it), and no reference
 * can be made: the warning is the only thing left to do, and a
 * use-after-free may follow.
 */
void mlx_ext_ib_device_get(struct ib_device *dev)
{
	WARN_ONCE(!ib_device_try_get(dev),
		  "mlx_ext: a reference to %s taken after its last one went\n",
		  dev_name(&dev->dev));
}

void *mlx_ext_ib_get_client_data(struct ib_device *dev, struct ib_client *client)
{
	return ib_get_client_data(dev, client);
}

struct ib_qp *mlx_ext_ib_create_qp(struct ib_pd *pd,
				   struct ib_qp_init_attr *attr)
{
	return ib_create_qp(pd, attr);
}

int mlx_ext_ib_destroy_qp(struct ib_qp *qp)
{
	return ib_destroy_qp(qp);
}

int mlx_ext_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	return ib_post_send(qp, wr, NULL);
}

bool mlx_ext_ib_cq_usable(const struct ib_cq *cq)
{
	/* ib_alloc_cq() and the CQ pool allocate cq->wc; ib_create_cq() does not. */
	return cq && cq->wc && cq->poll_ctx != IB_POLL_DIRECT;
}

bool mlx_ext_ib_cq_cqe_model(const struct ib_cq *cq)
{
	/* drivers/infiniband/core/cq.c: __ib_alloc_cq() allocates cq->wc for
	 * every polling context; ib_create_cq() never does.
	 */
	return cq && cq->wc;
}

void mlx_ext_ib_cq_quiesce(struct ib_cq *cq)
{
	/* ib_poll_handler() (cq.c, lines 157-163) calls irq_poll_complete()
	 * and then re-arms the CQ with ib_req_notify_cq(): irq_poll_disable()
	 * in ib_free_cq() can return in between, on another CPU, and
	 * ib_free_cq() then destroys and frees the CQ the handler is still to
	 * use (a KASAN use-after-free in req_notify_cq, from ksoftirqd, seen
	 * with two CPUs). The handler runs in softirq context, which is a
	 * read-side critical section of RCU: a grace period waits it out.
	 * (poll_ctx is IB_POLL_SOFTIRQ, 0, also for a CQ of ib_create_cq().)
	 * The fix in ib_free_cq() itself is patches/upstream/0001-*.patch;
	 * this wait stays until a kernel with it is the oldest supported.
	 */
	if (cq->poll_ctx == IB_POLL_SOFTIRQ)
		synchronize_rcu();
}

void *mlx_ext_ib_alloc_chunk(size_t size, size_t align, gfp_t gfp)
{
	void *chunk;

	/*
	 * How to allocate is the caller's (may it block, warn, retry, be
	 * charged); where and in what shape is not, so a ULP's zone and page
	 * modifiers are dropped. __GFP_HIGHMEM and __GFP_DMA32 kmalloc would
	 * drop itself, with a warning (kmalloc_fix_flags(), GFP_SLAB_BUG_MASK
	 * in mm/internal.h). __GFP_DMA it would honour (kmalloc_type() in
	 * include/linux/slab.h picks the DMA caches), taking the chunk from
	 * ZONE_DMA for nothing: its replies are mapped with ib_dma_map_single().
	 * __GFP_MOVABLE and __GFP_COMP mean nothing for a slab object.
	 * __GFP_ACCOUNT is kept: the chunk, which the QP keeps until it is
	 * destroyed, is charged to the memory cgroup of the task whose post
	 * grew the pool (Documentation/ulp-api.rst, "Memory").
	 */
	gfp &= ~(__GFP_DMA | __GFP_DMA32 | __GFP_HIGHMEM | __GFP_MOVABLE |
		 __GFP_COMP);
	chunk = kmalloc(size, gfp);

	/*
	 * kmalloc aligns an object to at least the largest power of two
	 * dividing its size (Documentation/core-api/memory-allocation.rst);
	 * checked all the same, since a reply line shared with other data
	 * would be a silent DMA bug.
	 */
	if (chunk && WARN_ON_ONCE(!IS_ALIGNED((unsigned long)chunk, align))) {
		kfree(chunk);
		return NULL;
	}
	return chunk;
}

void mlx_ext_ib_free_chunk(void *chunk)
{
	kfree(chunk);
}

bool mlx_ext_ib_gfp_can_sleep(gfp_t gfp)
{
	return gfpflags_allow_blocking(gfp);
}

int mlx_ext_ib_dma_map_replies(struct ib_device *dev, void *buf, size_t len,
			       u64 *addr)
{
	*addr = ib_dma_map_single(dev, buf, len, DMA_FROM_DEVICE);
	return ib_dma_mapping_error(dev, *addr) ? -ENOMEM : 0;
}

void mlx_ext_ib_dma_unmap_replies(struct ib_device *dev, u64 addr, size_t len)
{
	ib_dma_unmap_single(dev, addr, len, DMA_FROM_DEVICE);
}

void mlx_ext_ib_dma_sync_reply(struct ib_device *dev, u64 addr, bool for_cpu)
{
	if (for_cpu)
		ib_dma_sync_single_for_cpu(dev, addr, sizeof(u64), DMA_FROM_DEVICE);
	else
		ib_dma_sync_single_for_device(dev, addr, sizeof(u64),
					      DMA_FROM_DEVICE);
}

/* IFLA_VF_IB_NODE_GUID: 0, IFLA_VF_IB_PORT_GUID: 1, anything else -1. */
int mlx_ext_vf_guid_kind(int type)
{
	switch (type) {
	case IFLA_VF_IB_NODE_GUID:
		return 0;
	case IFLA_VF_IB_PORT_GUID:
		return 1;
	default:
		return -1;
	}
}

void mlx_ext_ifla_vf_guid_set(struct ifla_vf_guid *g, u64 guid)
{
	g->guid = guid;
}

/* SR-IOV facts of a device's parent, for the VF GUID tables. */

int mlx_ext_ib_sim_info(struct ib_device *dev, u16 *num_vfs, char *name,
			size_t len)
{
	struct device *parent = dev->dev.parent;
	const struct mlx_ext_sim_info *info;

	if (!parent || !parent->bus || !parent->bus->name ||
	    strcmp(parent->bus->name, MLX_EXT_SIM_BUS_NAME))
		return -ENODEV;
	info = parent->platform_data;
	if (!info || info->magic != MLX_EXT_SIM_INFO_MAGIC || info->version < 1)
		return -EPROTO;
	*num_vfs = READ_ONCE(info->num_vfs);
	strscpy(name, info->pci_name, len);
	return 0;
}

int mlx_ext_ib_pci_vfs(struct ib_device *dev, char *name, size_t len)
{
#if IS_ENABLED(CONFIG_PCI)
	struct device *parent = dev->dev.parent;
	struct pci_dev *pf;

	/*
	 * A PF that can have VFs, as the VF watch takes it
	 * (mlx_ext_vf_watch_register()): is_physfn is set where the PCI core
	 * found an SR-IOV capability (drivers/pci/iov.c:838, sriov_init()), and
	 * a TotalVFs of 0 leaves nothing to enable. A function without (an
	 * mlx5 PF whose firmware has SR-IOV off) can never have VFs.
	 */
	if (!parent || !dev_is_pci(parent))
		return -ENODEV;
	pf = to_pci_dev(parent);
	if (!pf->is_physfn || pci_sriov_get_totalvfs(pf) <= 0)
		return -ENODEV;
	if (strscpy(name, pci_name(pf), len) < 0)
		return -ENAMETOOLONG;
	return pci_num_vf(pf);
#endif
	return -ENODEV;
}

u32 mlx_ext_ib_port_count(struct ib_device *dev)
{
	return rdma_end_port(dev);
}

bool mlx_ext_ib_port_is_ib(struct ib_device *dev, u32 port)
{
	return rdma_protocol_ib(dev, port);
}

u32 mlx_ext_ib_port_gid_tbl_len(struct ib_device *dev, u32 port)
{
	/* What the driver's get_port_immutable gave ib_core (device.c). */
	return dev->port_data[port].immutable.gid_tbl_len;
}
