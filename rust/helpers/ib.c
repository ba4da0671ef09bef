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
