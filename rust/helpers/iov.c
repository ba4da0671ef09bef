// SPDX-License-Identifier: GPL-2.0
/*
 * What the VF GUID tables need of the kernel that the 6.12 kernel crate has
 * no abstraction for: a delayed work item, an ib event handler, a watch on
 * a device's number of VFs, and the module parameter sm_guid_assign. Used
 * by rust/ib/ only.
 */

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/if_link.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/sim.h>

/*
 * An int, read as mlx4_ib's parameter of the same name is
 * (drivers/infiniband/hw/mlx4/main.c:74-76, "Enable SM alias_GUID
 * assignment if sm_guid_assign > 0"), so that what scripts write for mlx4
 * works here: 1 or 0 (any value above 0 enables); it reads back as written.
 * The default stays the seed's, 1 (mlx4_ib's is 0).
 */
static int sm_guid_assign = 1;
module_param(sm_guid_assign, int, 0444);
MODULE_PARM_DESC(sm_guid_assign,
		 "Ask the subnet manager for a GUID for each VF's entry 0 when a VF GUID table starts if sm_guid_assign > 0 (default 1; 0: every VF GUID is the administrator's to write)");

bool mlx_ext_sm_guid_assign(void)
{
	return READ_ONCE(sm_guid_assign) > 0;
}

struct mlx_ext_dwork {
	struct delayed_work dw;
	void (*fn)(void *priv);
	void *priv;
	/* When the next run is due, if one is armed; under lock. */
	spinlock_t lock;
	bool armed;
	unsigned long due;
};

static void dwork_run(struct work_struct *work)
{
	struct mlx_ext_dwork *w = container_of(to_delayed_work(work),
					       struct mlx_ext_dwork, dw);
	unsigned long flags;

	/* From here on, a schedule arms the next run, however late it asks. */
	spin_lock_irqsave(&w->lock, flags);
	w->armed = false;
	spin_unlock_irqrestore(&w->lock, flags);
	w->fn(w->priv);
}

struct mlx_ext_dwork *mlx_ext_dwork_create(void (*fn)(void *priv), void *priv,
					   const char *name,
					   struct lock_class_key *key)
{
	struct mlx_ext_dwork *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	INIT_DELAYED_WORK(&w->dw, dwork_run);
	/*
	 * The caller's class, not this call site's: lockdep takes waiting for
	 * a work item (cancel_delayed_work_sync) as taking its class, and one
	 * kind of work may be cancelled under a lock another kind's run takes
	 * (a device's tables, whose ports' works go under the lock the
	 * device's own work takes). As __INIT_WORK_KEY does it
	 * (include/linux/workqueue.h).
	 */
	lockdep_init_map(&w->dw.work.lockdep_map, name, key, 0);
	spin_lock_init(&w->lock);
	w->fn = fn;
	w->priv = priv;
	return w;
}

void mlx_ext_dwork_schedule(struct mlx_ext_dwork *w, unsigned long delay_ms)
{
	unsigned long delay = msecs_to_jiffies(delay_ms);
	unsigned long due = jiffies + delay;
	unsigned long flags;

	/*
	 * The due time is kept here rather than read back from the timer
	 * (whose expires is stale once a run was queued at once): only an
	 * earlier time moves an armed run.
	 */
	spin_lock_irqsave(&w->lock, flags);
	if (!w->armed || time_before(due, w->due)) {
		w->armed = true;
		w->due = due;
		mod_delayed_work(system_unbound_wq, &w->dw, delay);
	}
	spin_unlock_irqrestore(&w->lock, flags);
}

void mlx_ext_dwork_destroy(struct mlx_ext_dwork *w)
{
	cancel_delayed_work_sync(&w->dw);
	kfree(w);
}

struct mlx_ext_events {
	struct ib_event_handler h;
	void (*fn)(void *priv, u32 port, u32 event);
	void *priv;
};

static void events_handler(struct ib_event_handler *h, struct ib_event *e)
{
	struct mlx_ext_events *ev = container_of(h, struct mlx_ext_events, h);

	switch (e->event) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_GID_CHANGE:
		ev->fn(ev->priv, e->element.port_num, e->event);
		break;
	default:
		break;
	}
}

struct mlx_ext_events *mlx_ext_events_register(struct ib_device *dev,
					       void (*fn)(void *priv, u32 port,
							  u32 event),
					       void *priv)
{
	struct mlx_ext_events *ev = kzalloc(sizeof(*ev), GFP_KERNEL);

	if (!ev)
		return ERR_PTR(-ENOMEM);
	ev->fn = fn;
	ev->priv = priv;
	INIT_IB_EVENT_HANDLER(&ev->h, dev, events_handler);
	ib_register_event_handler(&ev->h);
	return ev;
}

void mlx_ext_events_unregister(struct mlx_ext_events *ev)
{
	ib_unregister_event_handler(&ev->h);
	kfree(ev);
}

/* mlx_ext's one ib_sa client: its queries, counted, hold the module. A
 * second registration of the static client (which would reset the count of
 * the first's queries) fails instead.
 */
static struct ib_sa_client sa_client;
static bool sa_registered;
static DEFINE_MUTEX(sa_lock);

int mlx_ext_sa_register(void)
{
	int ret = -EBUSY;

	mutex_lock(&sa_lock);
	if (!sa_registered) {
		ib_sa_register_client(&sa_client);
		WRITE_ONCE(sa_registered, true);
		ret = 0;
	}
	mutex_unlock(&sa_lock);
	return ret;
}

void mlx_ext_sa_unregister(void)
{
	mutex_lock(&sa_lock);
	if (!WARN_ON_ONCE(!sa_registered)) {
		WRITE_ONCE(sa_registered, false);
		ib_sa_unregister_client(&sa_client);
	}
	mutex_unlock(&sa_lock);
}

struct ib_sa_client *mlx_ext_sa_client(void)
{
	return READ_ONCE(sa_registered) ? &sa_client : NULL;
}

/*
 * Under RTNL, as ip link reaches the same ops (rtnetlink's do_setlink and
 * rtnl_fill_vfinfo, through ipoib): mlx5 keeps what it set in vfs_ctx,
 * which RTNL serialises. Taken with trylock from a sysfs file, as
 * net-sysfs does: a task holding RTNL may be removing the file.
 */
int mlx_ext_ib_set_vf_guid(struct ib_device *dev, int vf, u32 port, u64 guid,
			   bool port_guid)
{
	int ret;

	if (!rtnl_trylock())
		return restart_syscall();
	ret = ib_set_vf_guid(dev, vf, port, guid,
			     port_guid ? IFLA_VF_IB_PORT_GUID :
					 IFLA_VF_IB_NODE_GUID);
	rtnl_unlock();
	return ret;
}

int mlx_ext_ib_get_vf_guid(struct ib_device *dev, int vf, u32 port,
			   u64 *node_guid, u64 *port_guid)
{
	struct ifla_vf_guid node = {}, portg = {};
	int ret;

	if (!rtnl_trylock())
		return restart_syscall();
	ret = ib_get_vf_guid(dev, vf, port, &node, &portg);
	rtnl_unlock();
	if (ret)
		return ret;
	*node_guid = node.guid;
	*port_guid = portg.guid;
	return 0;
}

int mlx_ext_ib_port_gid(struct ib_device *dev, u32 port, u32 index, u8 *gid)
{
	unsigned long flags;
	union ib_gid g;
	u64 prefix;

	if (!rdma_is_port_valid(dev, port) ||
	    index >= dev->port_data[port].immutable.gid_tbl_len)
		return -EINVAL;
	/* ib_core's copy of the port's table, which the driver's
	 * IB_EVENT_GID_CHANGE refreshes (cache.c, ib_cache_event_task).
	 */
	if (!rdma_query_gid(dev, port, index, &g)) {
		memcpy(gid, g.raw, sizeof(g.raw));
		return 0;
	}
	/* No entry: the cache keeps no zero GID (cache.c, add_modify_gid()),
	 * and a refresh deletes each entry before it stores it again, so an
	 * entry is missing for a moment while ib_core handles a GID change.
	 * Never an error for an index of the table: the port's subnet prefix
	 * (PortInfo's, as mlx4's sysfs.c show_port_gid() reads it) and a zero
	 * GUID, as ib_core's own ports/N/gids/M never fails then (sysfs.c,
	 * show_port_gid(): tools read every entry and stop at an error; it
	 * shows an all-zero GID there).
	 * The prefix is read as ib_get_cached_subnet_prefix() reads it
	 * (cache.c), which ib_core exports but declares only in its private
	 * core_priv.h.
	 */
	read_lock_irqsave(&dev->cache_lock, flags);
	prefix = dev->port_data[port].cache.subnet_prefix;
	read_unlock_irqrestore(&dev->cache_lock, flags);
	put_unaligned_be64(prefix, gid);
	memset(gid + 8, 0, 8);
	return 0;
}

int mlx_ext_ib_port_guid(struct ib_device *dev, u32 port, u64 *guid)
{
	union ib_gid g;
	int tries = 0;
	int ret;

	if (!rdma_is_port_valid(dev, port))
		return -EINVAL;
	/* GID 0 of an InfiniBand port, its GUID, is always there but while
	 * ib_core refreshes its copy of the table after a GID change: it
	 * deletes each entry before it stores it again (cache.c,
	 * add_modify_gid(), under the table's mutex, so the gap is one
	 * allocation long). A missing GID 0 is that gap: wait it out.
	 */
	while ((ret = rdma_query_gid(dev, port, 0, &g)) == -ENOENT &&
	       ++tries < 100)
		usleep_range(100, 200);
	if (ret)
		return ret;
	*guid = be64_to_cpu(g.global.interface_id);
	return 0;
}

/*
 * A watch on the VFs of a device's parent: a simulated adapter's
 * vfs_changed chain (include/mlx_ext/sim.h), or, for a PCI PF, the PCI
 * bus's notifier filtered to the PF's VFs. The PCI core adds a PF's VFs one
 * by one and sets pci_num_vf() only after the last, and clears it a second
 * after it removed the last (drivers/pci/iov.c, sriov_enable() and
 * sriov_disable()): so the watch keeps which VFs are on the bus, from
 * their own add and removal, and reads nothing later.
 */
struct mlx_ext_vf_watch {
	struct notifier_block nb;
	struct blocking_notifier_head *sim;	/* or NULL: the PCI bus */
	struct device *pf;
	void (*fn)(void *priv);
	void *priv;
#if IS_ENABLED(CONFIG_PCI_IOV)
	/* Serialises the PCI notifier, the first scan and readers. */
	struct mutex lock;
	/* The VFs on the bus, by pci_iov_vf_id(); @total bits. */
	unsigned long *present;
	u16 total;
	/* The PF's SR-IOV capability (pci_dev.sriov is the PCI core's). */
	int pos;
#endif
};

static int vf_watch_sim(struct notifier_block *nb, unsigned long action,
			void *data)
{
	struct mlx_ext_vf_watch *w = container_of(nb, struct mlx_ext_vf_watch, nb);

	w->fn(w->priv);
	return NOTIFY_OK;
}

#if IS_ENABLED(CONFIG_PCI_IOV)
/*
 * The VF number of @vf, a VF of @pf, whose SR-IOV capability is at @pos.
 * pci_iov_vf_id() divides by the VF Stride (drivers/pci/iov.c:44-45),
 * which a PF need not set for a single VF (PCIe: unused when NumVFs is 0
 * or 1; iov.c:107, compute_max_vf_buses(), refuses a stride of 0 only for
 * more than one):
 * that VF is 0.
 */
static int pf_vf_id(struct pci_dev *pf, int pos, struct pci_dev *vf)
{
	u16 stride = 0;

	pci_read_config_word(pf, pos + PCI_SRIOV_VF_STRIDE, &stride);
	if (!stride)
		return 0;
	return pci_iov_vf_id(vf);
}

/* The VF number of @dev if it is a VF of @w's PF, else -1. */
static int vf_of(struct mlx_ext_vf_watch *w, struct device *dev)
{
	struct pci_dev *vf;
	int id;

	if (!dev_is_pci(dev))
		return -1;
	vf = to_pci_dev(dev);
	if (!vf->is_virtfn || &pci_physfn(vf)->dev != w->pf)
		return -1;
	id = pf_vf_id(to_pci_dev(w->pf), w->pos, vf);
	return id >= 0 && id < w->total ? id : -1;
}

/*
 * BUS_NOTIFY_ADD_DEVICE comes after the VF joined the bus's list, and
 * BUS_NOTIFY_REMOVED_DEVICE after it left it (drivers/base/core.c,
 * device_add() and device_del()): with the first scan under the same lock,
 * no VF is counted twice or kept after it went.
 */
static int vf_watch_pci(struct notifier_block *nb, unsigned long action,
			void *data)
{
	struct mlx_ext_vf_watch *w = container_of(nb, struct mlx_ext_vf_watch, nb);
	int id;

	if (action != BUS_NOTIFY_ADD_DEVICE &&
	    action != BUS_NOTIFY_REMOVED_DEVICE)
		return NOTIFY_DONE;
	id = vf_of(w, data);
	if (id < 0)
		return NOTIFY_DONE;
	mutex_lock(&w->lock);
	if (action == BUS_NOTIFY_ADD_DEVICE)
		set_bit(id, w->present);
	else
		clear_bit(id, w->present);
	mutex_unlock(&w->lock);
	w->fn(w->priv);
	return NOTIFY_DONE;
}

static int vf_watch_pci_start(struct mlx_ext_vf_watch *w, struct pci_dev *pf)
{
	struct pci_dev *vf = NULL;
	int id, ret;

	w->total = pci_sriov_get_totalvfs(pf);
	w->pos = pci_find_ext_capability(pf, PCI_EXT_CAP_ID_SRIOV);
	if (!w->pos)
		return -ENODEV;
	w->present = bitmap_zalloc(w->total, GFP_KERNEL);
	if (!w->present)
		return -ENOMEM;
	mutex_init(&w->lock);
	w->nb.notifier_call = vf_watch_pci;
	/* Not under the lock, which the notifier takes under the chain's. */
	ret = bus_register_notifier(&pci_bus_type, &w->nb);
	if (ret) {
		mutex_destroy(&w->lock);
		bitmap_free(w->present);
		return ret;
	}
	/*
	 * The VFs the PF has already. One added since is set twice; one
	 * removed since is not found (it left the list before its event).
	 */
	mutex_lock(&w->lock);
	while ((vf = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, vf))) {
		id = vf_of(w, &vf->dev);
		if (id >= 0)
			set_bit(id, w->present);
	}
	mutex_unlock(&w->lock);
	return 0;
}

int mlx_ext_vf_watch_pci_vfs(struct mlx_ext_vf_watch *w,
			     struct mlx_ext_pci_vfs *out)
{
	struct pci_dev *pf;
	u16 ctrl = 0;
	int pos;

	if (w->sim)
		return -ENODEV;
	pf = to_pci_dev(w->pf);
	pos = w->pos;
	memset(out, 0, sizeof(*out));
	mutex_lock(&w->lock);
	out->present = bitmap_weight(w->present, w->total);
	out->first_absent = find_first_zero_bit(w->present, w->total);
	pci_read_config_word(pf, pos + PCI_SRIOV_CTRL, &ctrl);
	pci_read_config_word(pf, pos + PCI_SRIOV_NUM_VF, &out->num_vfs);
	pci_read_config_word(pf, pos + PCI_SRIOV_INITIAL_VF, &out->initial);
	mutex_unlock(&w->lock);
	out->enabled = !!(ctrl & PCI_SRIOV_CTRL_VFE);
	return 0;
}

int mlx_ext_ib_pci_vf_name(struct ib_device *dev, u16 vf_id, char *name,
			   size_t len)
{
	struct device *parent = dev->dev.parent;
	struct pci_dev *vf = NULL;
	ssize_t copied;
	int pos;

	if (!parent || !dev_is_pci(parent))
		return -ENODEV;
	pos = pci_find_ext_capability(to_pci_dev(parent), PCI_EXT_CAP_ID_SRIOV);
	if (!pos)
		return -ENODEV;
	while ((vf = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, vf))) {
		if (vf->is_virtfn && &pci_physfn(vf)->dev == parent &&
		    pf_vf_id(to_pci_dev(parent), pos, vf) == vf_id) {
			copied = strscpy(name, pci_name(vf), len);
			pci_dev_put(vf);
			return copied < 0 ? -ENAMETOOLONG : 0;
		}
	}
	return -ENODEV;
}
#else
int mlx_ext_vf_watch_pci_vfs(struct mlx_ext_vf_watch *w,
			     struct mlx_ext_pci_vfs *out)
{
	return -ENODEV;
}

int mlx_ext_ib_pci_vf_name(struct ib_device *dev, u16 vf_id, char *name,
			   size_t len)
{
	return -ENODEV;
}
#endif

struct mlx_ext_vf_watch *mlx_ext_vf_watch_register(struct ib_device *dev,
						   void (*fn)(void *priv),
						   void *priv)
{
	struct device *parent = dev->dev.parent;
	struct mlx_ext_sim_info *info;
	struct mlx_ext_vf_watch *w;
	int ret;

	if (!parent)
		return NULL;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->fn = fn;
	w->priv = priv;
	w->pf = parent;
	if (parent->bus && parent->bus->name &&
	    !strcmp(parent->bus->name, MLX_EXT_SIM_BUS_NAME)) {
		info = parent->platform_data;
		if (!info || info->magic != MLX_EXT_SIM_INFO_MAGIC ||
		    info->version < 2)
			goto none;
		w->sim = &info->vfs_changed;
		w->nb.notifier_call = vf_watch_sim;
		ret = blocking_notifier_chain_register(w->sim, &w->nb);
		if (ret)
			goto fail;
		return w;
	}
#if IS_ENABLED(CONFIG_PCI_IOV)
	/* A PF that can have VFs (an SR-IOV capability the PCI core took). */
	if (dev_is_pci(parent) && to_pci_dev(parent)->is_physfn &&
	    pci_sriov_get_totalvfs(to_pci_dev(parent)) > 0) {
		ret = vf_watch_pci_start(w, to_pci_dev(parent));
		if (ret)
			goto fail;
		return w;
	}
#endif
none:
	kfree(w);
	return NULL;
fail:
	kfree(w);
	return ERR_PTR(ret);
}

void mlx_ext_vf_watch_unregister(struct mlx_ext_vf_watch *w)
{
	if (w->sim) {
		blocking_notifier_chain_unregister(w->sim, &w->nb);
	} else {
#if IS_ENABLED(CONFIG_PCI_IOV)
		bus_unregister_notifier(&pci_bus_type, &w->nb);
		mutex_destroy(&w->lock);
		bitmap_free(w->present);
#endif
	}
	kfree(w);
}
