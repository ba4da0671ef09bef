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
 *
 * Each bus device has sriov_numvfs and sriov_totalvfs, as a PCI PF: writing
 * sriov_numvfs changes the adapter's number of VFs at run time, under the
 * rules of the PCI one (a new non-zero number only from 0), and tells the
 * watchers of include/mlx_ext/sim.h.
 *
 * The simulator is also a PCI driver, "mlx_ext_sim", with no ID table: it
 * binds only a PCI function an administrator gives it through
 * driver_override (new_id_store() refuses IDs for an empty table, and
 * probe any function without an override), as mlx5_core binds a ConnectX
 * PF. Such a function can be
 * an adapter's parent instead of a bus device (new_device's
 * "pci:DDDD:BB:DD.F"): its ib_device is then a PCI PF's, and its VFs are
 * the PCI core's, made through the PF's sriov_numvfs
 * (pci_sriov_configure_simple). Unbinding the function, or removing it,
 * removes its adapter first, then disables its VFs, as a PF's driver must
 * (pci_device_remove() warns of VFs left enabled).
 */

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/kstrtox.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/sim.h>

/* The module's version, from the tree's VERSION file (Kbuild). */
MODULE_VERSION(MLX_EXT_VERSION);

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

#if IS_ENABLED(CONFIG_PCI)
static struct pci_driver simpci_driver;

/*
 * The driver data of a function that may be an adapter's parent: set by
 * probe, cleared by remove before it removes the adapters. (The driver
 * pointer is cleared only after remove returned, pci_device_remove(): too
 * late for new_device.)
 */
#define SIMPCI_PARENT ((void *)&simpci_driver)

static int simpci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	/*
	 * Only a function handed to us by name. (A new_id, which
	 * pci_match_device() would take first, is refused already: an empty
	 * ID table has no driver_data to match, new_id_store().)
	 */
	if (!device_has_driver_override(&pdev->dev))
		return -ENODEV;
	pci_set_drvdata(pdev, SIMPCI_PARENT);
	pci_info(pdev, "mlx_ext_sim: a PCI parent for a simulated adapter (new_device ID MODEL PORTS pci:%s)\n",
		 pci_name(pdev));
	return 0;
}

/*
 * No new adapter takes @pdev once its driver data is cleared: new_device
 * checks it under the simulator's lock, which parent_removed() takes
 * after, so an adapter made before is removed by it. The VFs go last, as
 * a PF driver's remove does it. (Since 7.x the PCI core wants VFs removed
 * under pci_rescan_remove_lock, drivers/pci/remove.c:128: the PF's removal
 * from the bus holds it, an unbind does not, so with lockdep an unbind
 * with VFs enabled WARNs here as it does for every PF driver.)
 */
static void simpci_remove(struct pci_dev *pdev)
{
	WRITE_ONCE(pdev->dev.driver_data, NULL);
	simbus_ops->parent_removed(simbus_priv, &pdev->dev);
	pci_disable_sriov(pdev);
}

/* No ID table: only driver_override binds it (simpci_probe()). */
static const struct pci_device_id simpci_ids[] = {
	{ }
};

static struct pci_driver simpci_driver = {
	.name = MLX_EXT_SIM_BUS_NAME,
	.id_table = simpci_ids,
	.probe = simpci_probe,
	.remove = simpci_remove,
	.sriov_configure = pci_sriov_configure_simple,
};

struct device *mlx_ext_simpci_get(const char *name)
{
	struct device *dev;

	dev = bus_find_device_by_name(&pci_bus_type, NULL, name);
	if (!dev)
		return ERR_PTR(-ENOENT);
	/*
	 * Bound to us and not being unbound: its unbinding removes the
	 * adapter (simpci_remove()). Not under device_lock(), which the
	 * unbinding holds while it waits for the caller's lock.
	 */
	if (READ_ONCE(to_pci_dev(dev)->driver) != &simpci_driver ||
	    READ_ONCE(dev->driver_data) != SIMPCI_PARENT) {
		put_device(dev);
		return ERR_PTR(-ENODEV);
	}
	return dev;
}

static int simpci_register(void)
{
	return pci_register_driver(&simpci_driver);
}

static void simpci_unregister(void)
{
	pci_unregister_driver(&simpci_driver);
}
#else
struct device *mlx_ext_simpci_get(const char *name)
{
	return ERR_PTR(-ENODEV);
}

static int simpci_register(void)
{
	return 0;
}

static void simpci_unregister(void)
{
}
#endif

void mlx_ext_simpci_put(struct device *dev)
{
	put_device(dev);
}

/* The bus is a singleton (one static bus_type): a second registration,
 * which would corrupt the first, fails instead.
 */
static atomic_t simbus_registered = ATOMIC_INIT(0);

int mlx_ext_simbus_register(const struct mlx_ext_simbus_ops *ops, void *priv)
{
	int ret;

	if (atomic_cmpxchg(&simbus_registered, 0, 1) != 0)
		return -EBUSY;
	simbus_ops = ops;
	simbus_priv = priv;
	ret = bus_register(&simbus);
	if (ret)
		goto fail;
	ret = simpci_register();
	if (ret) {
		bus_unregister(&simbus);
		goto fail;
	}
	return 0;
fail:
	atomic_set(&simbus_registered, 0);
	return ret;
}

void mlx_ext_simbus_unregister(void)
{
	if (WARN_ON_ONCE(!atomic_read(&simbus_registered)))
		return;
	/* Unbinds every PCI parent (the adapters are gone already). */
	simpci_unregister();
	bus_unregister(&simbus);
	/* A reference held elsewhere would keep us here: say so. */
	while (!wait_event_timeout(simbus_released,
				   atomic_read(&simbus_live) == 0, 10 * HZ))
		pr_warn("mlx_ext_sim: waiting for the release of %d device(s)\n",
			atomic_read(&simbus_live));
	atomic_set(&simbus_registered, 0);
}

/* A bus device and what it tells mlx_ext (include/mlx_ext/sim.h). */
struct simdev {
	struct device dev;
	/* Serialises changes of info.num_vfs and their notifications. */
	struct mutex lock;
	struct mlx_ext_sim_info info;
};

static struct simdev *to_simdev(struct device *dev)
{
	return container_of(dev, struct simdev, dev);
}

static void simdev_release(struct device *dev)
{
	struct simdev *sd = to_simdev(dev);

	mutex_destroy(&sd->lock);
	kfree(sd);
	if (atomic_dec_and_test(&simbus_live))
		wake_up(&simbus_released);
}

static ssize_t sriov_totalvfs_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", MLX_EXT_SIM_TOTAL_VFS);
}
static DEVICE_ATTR_RO(sriov_totalvfs);

static ssize_t sriov_numvfs_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_simdev(dev)->info.num_vfs));
}

/* As drivers/pci/iov.c sriov_numvfs_store(), the same errors. */
static ssize_t sriov_numvfs_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct simdev *sd = to_simdev(dev);
	u16 num_vfs, old;
	int ret;

	ret = kstrtou16(buf, 0, &num_vfs);
	if (ret < 0)
		return ret;
	if (num_vfs > MLX_EXT_SIM_TOTAL_VFS)
		return -ERANGE;
	mutex_lock(&sd->lock);
	old = sd->info.num_vfs;
	if (num_vfs == old)
		goto out;
	if (num_vfs && old) {
		dev_warn(dev, "%u VFs already enabled. Disable before enabling %u VFs\n",
			 old, num_vfs);
		ret = -EBUSY;
		goto out;
	}
	WRITE_ONCE(sd->info.num_vfs, num_vfs);
	dev_info(dev, "%u VF(s)\n", num_vfs);
	blocking_notifier_call_chain(&sd->info.vfs_changed, num_vfs, &sd->info);
out:
	mutex_unlock(&sd->lock);
	return ret ? ret : count;
}
static DEVICE_ATTR_RW(sriov_numvfs);

static struct attribute *simdev_attrs[] = {
	&dev_attr_sriov_totalvfs.attr,
	&dev_attr_sriov_numvfs.attr,
	NULL,
};
ATTRIBUTE_GROUPS(simdev);

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
	mutex_init(&sd->lock);
	sd->info.num_vfs = num_vfs;
	BLOCKING_INIT_NOTIFIER_HEAD(&sd->info.vfs_changed);
	snprintf(sd->info.pci_name, sizeof(sd->info.pci_name), "%04x:00:00.0",
		 id & 0xffff);
	dev = &sd->dev;
	dev->platform_data = &sd->info;
	atomic_inc(&simbus_live);
	device_initialize(dev);
	dev->bus = &simbus;
	dev->groups = simdev_groups;
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

/*
 * A reg_user_mr op that refuses: ib_core requires the op
 * (drivers/infiniband/core/device.c, ib_device_check_mandatory), and no
 * user space reaches a simulated device (it has no alloc_ucontext). The
 * op's type is this tree's: the DMA handle series added a struct ib_dmah *
 * before the udata (7.3 include/rdma/ib_verbs.h:2703-2706): the function
 * of the type this tree's struct ib_device_ops has is chosen, and the
 * assignment fails to compile if neither is.
 */
struct ib_dmah;

static struct ib_mr *reg_user_mr_udata(struct ib_pd *pd, u64 start,
				       u64 length, u64 virt, int access,
				       struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *reg_user_mr_dmah(struct ib_pd *pd, u64 start,
				      u64 length, u64 virt, int access,
				      struct ib_dmah *dmah,
				      struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

typeof_member(const struct ib_device_ops, reg_user_mr) mlx_ext_reg_user_mr_unsupported =
	__builtin_choose_expr(__same_type(mlx_ext_reg_user_mr_unsupported, &reg_user_mr_dmah),
			      reg_user_mr_dmah, reg_user_mr_udata);
