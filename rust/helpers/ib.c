// SPDX-License-Identifier: GPL-2.0
/* Wrappers of static inline functions and macros of the RDMA core, for Rust. */

#include <linux/device.h>
#include <mlx_ext/helpers.h>

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

unsigned long mlx_ext_spin_lock_irqsave(spinlock_t *lock)
{
	unsigned long flags;

	spin_lock_irqsave(lock, flags);
	return flags;
}

void mlx_ext_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{
	spin_unlock_irqrestore(lock, flags);
}

/*
 * The devices of rust/ib/driver have no DMA device: their DMA addresses are
 * kernel virtual addresses, which only INFINIBAND_VIRT_DMA makes true.
 */
#if IS_ENABLED(CONFIG_INFINIBAND) && !IS_ENABLED(CONFIG_INFINIBAND_VIRT_DMA)
#error "mlx_ext needs CONFIG_INFINIBAND_VIRT_DMA (a kernel without HIGHMEM)"
#endif

/* The client side: what mlx_ext's ULP API (rust/ib/ulp.rs) calls. */

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

int mlx_ext_ib_dma_map_reply(struct ib_device *dev, void *buf, u64 *addr)
{
	*addr = ib_dma_map_single(dev, buf, sizeof(u64), DMA_FROM_DEVICE);
	return ib_dma_mapping_error(dev, *addr) ? -ENOMEM : 0;
}

void mlx_ext_ib_dma_unmap_reply(struct ib_device *dev, u64 addr)
{
	ib_dma_unmap_single(dev, addr, sizeof(u64), DMA_FROM_DEVICE);
}
