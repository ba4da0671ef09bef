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

struct module *mlx_ext_this_module(void)
{
	return THIS_MODULE;
}
