// SPDX-License-Identifier: GPL-2.0
/* Wrappers of static inline functions and macros of the RDMA core, for Rust. */

#include <linux/device.h>
#include <mlx_ext/helpers.h>

struct kobject *mlx_ext_ib_device_kobj(struct ib_device *dev)
{
	return &dev->dev.kobj;
}
