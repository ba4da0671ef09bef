// SPDX-License-Identifier: GPL-2.0
/*
 * What the VF GUID tables need of the kernel that the 6.12 kernel crate has
 * no abstraction for: a delayed work item, an ib event handler, and the
 * module parameter sm_guid_assign. Used by rust/ib/ only.
 */

#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_sa.h>
#include <mlx_ext/helpers.h>

static bool sm_guid_assign = true;
module_param(sm_guid_assign, bool, 0444);
MODULE_PARM_DESC(sm_guid_assign,
		 "Ask the subnet manager for a GUID for each VF's entry 0 when a VF GUID table starts (default 1; 0: every VF GUID is the administrator's to write)");

bool mlx_ext_sm_guid_assign(void)
{
	return READ_ONCE(sm_guid_assign);
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

struct mlx_ext_dwork *mlx_ext_dwork_create(void (*fn)(void *priv), void *priv)
{
	struct mlx_ext_dwork *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	INIT_DELAYED_WORK(&w->dw, dwork_run);
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

/* mlx_ext's one ib_sa client: its queries, counted, hold the module. */
static struct ib_sa_client sa_client;
static bool sa_registered;

void mlx_ext_sa_register(void)
{
	ib_sa_register_client(&sa_client);
	WRITE_ONCE(sa_registered, true);
}

void mlx_ext_sa_unregister(void)
{
	WRITE_ONCE(sa_registered, false);
	ib_sa_unregister_client(&sa_client);
}

struct ib_sa_client *mlx_ext_sa_client(void)
{
	return READ_ONCE(sa_registered) ? &sa_client : NULL;
}
