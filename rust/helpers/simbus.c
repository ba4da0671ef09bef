// SPDX-License-Identifier: GPL-2.0
/*
 * The bus of mlx_ext_sim: /sys/bus/mlx_ext_sim/{new_device,del_device}, as
 * netdevsim's /sys/bus/netdevsim/, and the struct device of each simulated
 * adapter (the parent of its ib_device).
 *
 * A device's release is module code, so the module must not go before the
 * last one ran: mlx_ext_simbus_unregister() waits for the count of live
 * devices to reach zero. The control files are bus attributes: sysfs
 * (kernfs) waits for a store in progress before bus_unregister() removes
 * them, and starts none after.
 */

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/sim.h>

static const struct mlx_ext_simbus_ops *simbus_ops;
static void *simbus_priv;
static atomic_t simbus_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(simbus_released);

static ssize_t new_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	return simbus_ops->new_device(simbus_priv, buf, count);
}
static BUS_ATTR_WO(new_device);

static ssize_t del_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	return simbus_ops->del_device(simbus_priv, buf, count);
}
static BUS_ATTR_WO(del_device);

static struct attribute *simbus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(simbus);

static const struct bus_type simbus = {
	.name = MLX_EXT_SIM_BUS_NAME,
	.bus_groups = simbus_groups,
};

int mlx_ext_simbus_register(const struct mlx_ext_simbus_ops *ops, void *priv)
{
	simbus_ops = ops;
	simbus_priv = priv;
	return bus_register(&simbus);
}

void mlx_ext_simbus_unregister(void)
{
	bus_unregister(&simbus);
	/* A reference held elsewhere would keep us here: say so. */
	while (!wait_event_timeout(simbus_released,
				   atomic_read(&simbus_live) == 0, 10 * HZ))
		pr_warn("mlx_ext_sim: waiting for the release of %d device(s)\n",
			atomic_read(&simbus_live));
}

/* A bus device and what it tells mlx_ext (include/mlx_ext/sim.h). */
struct simdev {
	struct device dev;
	struct mlx_ext_sim_info info;
};

static void simdev_release(struct device *dev)
{
	kfree(container_of(dev, struct simdev, dev));
	if (atomic_dec_and_test(&simbus_live))
		wake_up(&simbus_released);
}

struct device *mlx_ext_simdev_add(unsigned int id, u16 num_vfs)
{
	struct simdev *sd;
	struct device *dev;
	int err;

	sd = kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd)
		return ERR_PTR(-ENOMEM);
	sd->info.magic = MLX_EXT_SIM_INFO_MAGIC;
	sd->info.version = MLX_EXT_SIM_INFO_VERSION;
	sd->info.num_vfs = num_vfs;
	snprintf(sd->info.pci_name, sizeof(sd->info.pci_name), "%04x:00:00.0",
		 id & 0xffff);
	dev = &sd->dev;
	dev->platform_data = &sd->info;
	atomic_inc(&simbus_live);
	device_initialize(dev);
	dev->bus = &simbus;
	dev->release = simdev_release;
	err = dev_set_name(dev, "mlxsim%u", id);
	if (!err)
		err = device_add(dev);
	if (err) {
		put_device(dev);
		return ERR_PTR(err);
	}
	return dev;
}

void mlx_ext_simdev_del(struct device *dev)
{
	device_unregister(dev);
}
