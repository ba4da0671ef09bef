// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_test_ulp: a kernel ULP for the VM tests, written as real ULPs are
 * (C, public kernel headers only). It runs atomics between two RC QPs of
 * one device (loopback) and reports what came back, so that the tests can
 * compare rxe0, the simulated adapters and the host's reference
 * arithmetic.
 *
 * /sys/kernel/debug/mlx_ext_test_ulp/ctl: write a command, read its result.
 *
 *   atomics DEV[:DEV2] POLL SEED COUNT KIND REPLY
 *	COUNT random operations from a QP of DEV on 8 words of an FRWR region
 *	behind a QP of DEV2 (DEV itself if not given); KIND std
 *	(CAS, FA) or masked (masked CAS, masked FA); REPLY host or be (how to
 *	read the reply bytes). Result "ok DIGEST" (a hash of every reply and
 *	of the final memory, in the order of core/examples/ulp_digest.rs) or
 *	"err STAGE CODE" (CODE a negative errno, or the ib_wc_status).
 *   errors DEV POLL
 *	The error cases, one "CASE RESULT" line each (RESULT an ib_wc_status
 *	or a negative errno from posting).
 *   hold DEV N
 *	Sets up a loopback on DEV and posts N atomics without waiting; keeps
 *	everything until "release DEV" or until DEV goes away (its remove).
 *   release DEV
 *   events DEV
 *	"port_err N port_active M": the port events the ULP's event handler
 *	saw on DEV.
 *
 *   api DEV[:DEV2] POLL SEED COUNT KIND FLAGS
 *	As "atomics", but through mlx_ext's ULP API (include/mlx_ext/mlx_ext.h):
 *	the requester QP is made by mlx_ext_create_qp() with FLAGS (none or
 *	be: MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY) and every operation goes
 *	through mlx_ext_atomic(); the responses are in host order. Result
 *	"ok DIGEST attempts N" (N work requests in all) or "err STAGE CODE".
 *   abi DEV
 *	the checked contract of the versioned calls: each case and its result
 *   apiflags DEV
 *	The API's refusals and flag rules, one "CASE RESULT" line each.
 *   hold DEV N [api]
 *	With "api", the N operations are masked fetch-and-adds posted with
 *	mlx_ext_post_atomic() (emulated where the device has no masked
 *	atomics); "release DEV" or the device's removal destroys the QP with
 *	mlx_ext_destroy_qp(), which must finish every one.
 *   contend DEV POLL OPS
 *	4 kernel threads, each with its own QP made by mlx_ext, run OPS
 *	operations each on one word (masked FA and CAS on a field of their
 *	own, plain FA and CAS on a shared one) and check every response
 *	(run_contend). Result "ok ops N attempts A max M word W",
 *	"bad THREAD WHAT" or "err STAGE CODE".
 *   group DEV POLL HOW
 *	5 masked fetch-and-adds of 1 on one word, posted at once from the 4
 *	QPs of "contend" (two from the first, then one from each other)
 *	attached in one group, or with HOW solo each in its own as qpmode
 *	makes them (run_group). HOW group: nothing more; fence: the third
 *	asks for a fence; detach: the first QP detached once all are posted;
 *	drain: the first QP drained (ERR) once all are posted; destroy: the
 *	first QP created (mlx_ext_create_qp()), the others attached in its
 *	group, posting from QPs 1, 2, 0, 3, 3, and the first destroyed while
 *	the second batch carries its operation. Result "ok st S,.. resp R,..
 *	word W [pending P early E]" (each operation's status and response, in
 *	posting order; P and E: the first QP's operations whose done had not
 *	run when its detach or destroy began, and when it returned).
 *   bench DEV POLL OPS [short]
 *	The benchmark (run_bench): "NAME VALUE UNIT (W WR/op)" lines; with
 *	"short" only masked CAS and FA on a warm word. The sequential figures
 *	are taken in 8 rounds of OPS / 8 operations, each kind in turn.
 *   burst DEV POLL N
 *	N (up to 8) masked fetch-and-adds posted at once on one word from one
 *	QP, 50 times (run_burst): "ok ops O attempts A word W" or "bad ...".
 *   flight DEV POLL DEPTH OPS KIND [GFP]
 *	DEPTH (up to 256) operations kept in flight on one QP, each reposted
 *	from its done callback, until OPS are done (run_flight): KIND masked
 *	(masked FA of 1 on the low 32-bit field of a word) or std (FA of 1).
 *	The first DEPTH are posted by the writing task with GFP: kernel
 *	(GFP_KERNEL, the default), nowait (GFP_NOWAIT) or quiet
 *	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN).
 *	"ok ops O ns_per_op T attempts A", "bad ..." or "err STAGE CODE".
 *   guidinfo DEV PORT METHOD BLOCK MASK [GUID...]
 *	One GuidInfoRecord query through ib_sa (ib_sa_guid_info_rec_query,
 *	1 s timeout), as mlx4's alias GUID code sends them: METHOD set or
 *	delete, record BLOCK (0..15) of the port's own LID, the entries of
 *	MASK (hex, bit i: GUID i), up to 8 GUIDs in hex (the rest 0). Result
 *	"ok LID BLOCK G0 ... G7 ms T" (the record the SA answered, hex) or
 *	"err CODE ms T" (CODE the query's status: -110 timed out, -22 an SA
 *	error status...); T the time the query took.
 *   guidevents DEV PORT FUNCTION
 *	"calls N up U count C": the GUID-change notifications mlx_ext gave the
 *	ULP's notifier (mlx_ext_register_guid_notifier) for that function of
 *	DEV's PORT since the ULP was loaded, and the last one's up and count;
 *	also once DEV is gone.
 *   lastfail
 *	"softirq S": whether the last burst operation that failed was ended
 *	in softirq context (1) or not (0); -1 before any.
 *   syncself DEV POLL
 *	mlx_ext_atomic() called from the done callback of an operation on the
 *	same QP (its send CQ's completion context): "status S inner R", R
 *	what mlx_ext_atomic() returned (-EDEADLK expected), or "hung".
 *   destroyself DEV send|recv|attached
 *	mlx_ext_destroy_qp(), called from the done callback of an operation
 *	(its IB_POLL_WORKQUEUE send CQ's own work item), on a created QP still
 *	in RESET whose send CQ (send) or receive CQ (recv) is that CQ, or on
 *	an attached QP whose receive CQ is that CQ (attached: only detached,
 *	then destroyed by the ULP): "status S destroyed 1", or "hung".
 *	mlx_ext warns of the context (not for attached).
 *   syncwait DEV
 *	One mlx_ext_atomic() (fetch-and-add 1) from the writing task, which a
 *	test may kill meanwhile: "ret R response V"; "syncresult" gives R.
 *   heldsync DEV
 *	One mlx_ext_atomic() on the QP of "hold DEV N api" (a masked
 *	fetch-and-add of 1 on its word 1, the 63rd bit a boundary):
 *	"heldsync RET response V".
 *   early DEV init|rts|reuse kernel|atomic
 *	The first requests of a QP attached in RESET, through
 *	mlx_ext_post_atomic() with GFP_KERNEL or GFP_ATOMIC (run_early in
 *	errors.c): in INIT only, or connected, two masked fetch-and-adds:
 *	"early ERR" (the first post's errno) or "early ok STATUS STATUS2
 *	WORD"; reuse: a fetch-and-add, then one masked in INIT after RESET,
 *	then one after reconnecting: "early reuse STATUS ERR STATUS3 WORD".
 *   capsloop DEV
 *	A kernel thread calls mlx_ext_query_caps() on DEV in a loop, holding
 *	its own reference to the device (ib_device_try_get), as an rdma_cm
 *	user that is not an ib_client may: it hears of a removal only after
 *	mlx_ext's remove. It stops at the first -ENODEV (mlx_ext no longer has
 *	the device) and gives the reference back.
 *   capsresult
 *	"ok N enodev E other O running R" of the last capsloop; reaps it when
 *	it has stopped.
 *   apistats
 *	"posted P done D ok O canceled C shutdown S other X atend E": the API
 *	operations "hold" posted and the outcomes their callbacks reported
 *	since the last apistats (X also counts operations whose callback did
 *	not run exactly once by the time their QP was destroyed or detached;
 *	E those still pending when the destroy or detach began), then
 *	"repost_refused R repost_other Q": with "repost 1", the reposts from
 *	done callbacks that mlx_ext refused with -ESHUTDOWN (R) or otherwise;
 *	then "notbegun N": operations that ended with -ECONNABORTED (they
 *	waited behind a compare-and-swap that was flushed).
 *   repost 0|1
 *	Whether the done callbacks of "hold ... api" post their operation
 *	again (GFP_ATOMIC), as a ULP that keeps a queue full does.
 *   qpmode create|attach|attach_drain|attach_group
 *	How the commands that use the API get their QPs from then on: made by
 *	mlx_ext_create_qp() and ended by mlx_ext_destroy_qp() (create, the
 *	default), or created by the ULP (mlx_ext_init_qp_attr(),
 *	ib_create_qp()) and attached (mlx_ext_attach_qp()), ended by
 *	mlx_ext_detach_qp() and then the ULP's drain and destroy (attach) or
 *	the ULP's drain, the detach, and the destroy (attach_drain); or
 *	as attach, the QPs of one command in one group
 *	(mlx_ext_attach_qp_group(): attach_group).
 *   attachflags DEV[:OTHER]
 *	The refusals of mlx_ext_init_qp_attr(), mlx_ext_attach_qp() and
 *	mlx_ext_attach_qp_group() (with OTHER, a member on that device), one
 *	"CASE RESULT" line each.
 *
 * POLL is the CQ's poll context: direct, softirq, workqueue or unbound.
 * DEV may be NAME|OTHER: the device with either name (one a test renames).
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#include "test_ulp.h"

static DEFINE_MUTEX(ulp_lock);
char tu_result[RESULT_MAX];

static int parse_poll(const char *s, enum ib_poll_context *poll)
{
	if (!strcmp(s, "direct"))
		*poll = IB_POLL_DIRECT;
	else if (!strcmp(s, "softirq"))
		*poll = IB_POLL_SOFTIRQ;
	else if (!strcmp(s, "workqueue"))
		*poll = IB_POLL_WORKQUEUE;
	else if (!strcmp(s, "unbound"))
		*poll = IB_POLL_UNBOUND_WORKQUEUE;
	else
		return -EINVAL;
	return 0;
}

/* What "hold ... api" posted and what came back. */
static atomic_t api_posted, api_done, api_ok, api_canceled, api_shutdown;

/* The context of a "hold ... api" operation. */
struct held_call {
	atomic_t calls;		/* done calls: must end at 1 */
	struct loop *l;
};

/* "repost 1": the done callbacks of "hold" post their operation again. */
static bool repost_on_done;
static atomic_t api_repost_refused, api_repost_other, api_not_begun;

static void api_held_done(struct mlx_ext_atomic *op)
{
	struct held_call *c = op->context;

	if (READ_ONCE(repost_on_done)) {
		int ret = mlx_ext_post_atomic(c->l->xqa, op, GFP_ATOMIC);

		if (!ret)
			return;		/* pending again: it comes back */
		if (ret == -ESHUTDOWN)
			atomic_inc(&api_repost_refused);
		else
			atomic_inc(&api_repost_other);
	}
	atomic_inc(&c->calls);
	atomic_dec(&c->l->pending);
	atomic_inc(&api_done);
	if (!op->status)
		atomic_inc(&api_ok);
	else if (op->status == -ECANCELED)
		atomic_inc(&api_canceled);
	else if (op->status == -ESHUTDOWN)
		atomic_inc(&api_shutdown);
	else if (op->status == -ECONNABORTED)
		atomic_inc(&api_not_begun);
	else
		atomic_inc(&api_other);
}

/* Devices, and what "hold" keeps on them. */
struct ulp_dev {
	struct list_head list;
	struct ib_device *dev;
	struct loop *held;
	struct op *ops;
	struct mlx_ext_atomic *api_ops;
	struct held_call *api_calls;	/* per API op */
	u32 api_n;		/* API ops posted */
	struct ib_event_handler events;
	atomic_t port_err, port_active;
};

static LIST_HEAD(devices);
static struct ib_client ulp_client;

/* capsloop: one at a time, under ulp_lock. */
static struct task_struct *caps_task;
static atomic_t caps_ok, caps_enodev, caps_other, caps_running;

static int caps_fn(void *arg)
{
	struct ib_device *dev = arg;
	struct mlx_ext_caps c;
	int r;

	while (!kthread_should_stop()) {
		r = mlx_ext_query_caps(dev, &c);
		if (r == -ENODEV) {
			atomic_inc(&caps_enodev);
			break;
		}
		atomic_inc(r ? &caps_other : &caps_ok);
		cond_resched();
	}
	/* Before the put, which lets the device's removal (and the test) go on. */
	atomic_set(&caps_running, 0);
	ib_device_put(dev);
	/* Stay until capsresult or the module's exit reaps the thread. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int caps_start(struct ib_device *dev)
{
	struct task_struct *t;

	if (caps_task)
		return -EBUSY;
	if (!ib_device_try_get(dev))
		return -ENODEV;
	atomic_set(&caps_ok, 0);
	atomic_set(&caps_enodev, 0);
	atomic_set(&caps_other, 0);
	atomic_set(&caps_running, 1);
	t = kthread_create(caps_fn, dev, "ulp_capsloop");
	if (IS_ERR(t)) {
		atomic_set(&caps_running, 0);
		ib_device_put(dev);
		return PTR_ERR(t);
	}
	get_task_struct(t);
	caps_task = t;
	wake_up_process(t);
	return 0;
}

/* Reaps a thread that stopped by itself (force: stops it first). */
static void caps_reap(bool force)
{
	if (!caps_task || (!force && atomic_read(&caps_running)))
		return;
	kthread_stop(caps_task);
	put_task_struct(caps_task);
	caps_task = NULL;
}

/* NAME, or NAME|OTHER: the device that has either name now (a test renames
 * it meanwhile). The name is read from ib_device::name, an array that a
 * rename rewrites in place (never freed, unlike dev_name()'s string), and
 * compared a few times over: a read in the middle of a rename matches
 * neither name. (ib_device_get_by_name() would take devices_rwsem, which
 * may not be taken under ulp_lock: ulp_add runs under ib_core's locks.)
 */
static struct ulp_dev *find_dev(char *name)
{
	char *other = strchr(name, '|');
	char now[IB_DEVICE_NAME_MAX];
	struct ulp_dev *d;
	int tries;

	if (other)
		*other++ = 0;
	for (tries = 0; tries < 100; tries++) {
		list_for_each_entry(d, &devices, list) {
			memcpy(now, d->dev->name, sizeof(now));
			now[sizeof(now) - 1] = 0;
			if (!strcmp(now, name) || (other && !strcmp(now, other)))
				return d;
		}
		if (!other)
			break;
		usleep_range(100, 200);
	}
	return NULL;
}

/* Frees what "hold" allocated on @d (any of it may be NULL). */
static void held_free(struct ulp_dev *d)
{
	kfree(d->held);
	kfree(d->ops);
	kfree(d->api_ops);
	kfree(d->api_calls);
	d->held = NULL;
	d->ops = NULL;
	d->api_ops = NULL;
	d->api_calls = NULL;
	d->api_n = 0;
}

static void release(struct ulp_dev *d)
{
	u32 i;

	if (!d->held)
		return;
	/* ERR, drain (every posted op completes or is flushed), destroy. */
	loop_destroy(d->held);
	/* mlx_ext_destroy_qp() returned: every API op reported exactly once. */
	for (i = 0; i < d->api_n; i++)
		if (atomic_read(&d->api_calls[i].calls) != 1)
			atomic_inc(&api_other);
	held_free(d);
}

static int hold(struct ulp_dev *d, u32 n, bool api)
{
	const char *stage;
	int err = 0;
	u32 i;

	if (d->held)
		return -EBUSY;
	if (n > 8)
		return -EINVAL;
	d->held = kzalloc(sizeof(*d->held), GFP_KERNEL);
	d->ops = kcalloc(n ? n : 1, sizeof(*d->ops), GFP_KERNEL);
	d->api_ops = kcalloc(n ? n : 1, sizeof(*d->api_ops), GFP_KERNEL);
	d->api_calls = kcalloc(n ? n : 1, sizeof(*d->api_calls), GFP_KERNEL);
	if (!d->held || !d->ops || !d->api_ops || !d->api_calls) {
		held_free(d);
		return -ENOMEM;
	}
	stage = loop_setup_api(d->held, d->dev, d->dev, IB_POLL_WORKQUEUE,
			       ALL_ACCESS, ALL_ACCESS, api, 0, &err);
	for (i = 0; !stage && i < n && !err; i++) {
		struct mlx_ext_atomic *op = &d->api_ops[i];

		if (!api) {
			err = tu_post_atomic(d->held, &d->ops[i],
					     IB_WR_ATOMIC_FETCH_AND_ADD,
					     word_addr(d->held, 0), d->held->mr->rkey,
					     sizeof(u64), 1, 0, 0, 0);
			continue;
		}
		/* Masked FA on one word: emulated ones contend. */
		op->opcode = MLX_EXT_MASKED_FETCH_ADD;
		op->size = 8;
		op->remote_addr = word_addr(d->held, 0);
		op->rkey = d->held->mr->rkey;
		op->compare_add = 1ULL << (8 * i);
		op->compare_add_mask = 0x8080808080808080ULL;
		op->done = api_held_done;
		d->api_calls[i].l = d->held;
		op->context = &d->api_calls[i];
		atomic_inc(&d->held->pending);
		err = mlx_ext_post_atomic(d->held->xqa, op, GFP_KERNEL);
		if (!err) {
			atomic_inc(&api_posted);
			d->api_n++;
		} else {
			atomic_dec(&d->held->pending);
		}
	}
	if (stage || err) {
		release(d);
		return err ? err : -EIO;
	}
	return 0;
}

static void ulp_event(struct ib_event_handler *h, struct ib_event *e)
{
	struct ulp_dev *d = container_of(h, struct ulp_dev, events);

	if (e->event == IB_EVENT_PORT_ERR)
		atomic_inc(&d->port_err);
	else if (e->event == IB_EVENT_PORT_ACTIVE)
		atomic_inc(&d->port_active);
}

static int ulp_add(struct ib_device *dev)
{
	struct ulp_dev *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	d->dev = dev;
	INIT_IB_EVENT_HANDLER(&d->events, dev, ulp_event);
	ib_register_event_handler(&d->events);
	mutex_lock(&ulp_lock);
	list_add_tail(&d->list, &devices);
	mutex_unlock(&ulp_lock);
	ib_set_client_data(dev, &ulp_client, d);
	return 0;
}

static void ulp_remove(struct ib_device *dev, void *data)
{
	struct ulp_dev *d = data;

	mutex_lock(&ulp_lock);
	if (d->held)
		pr_info("mlx_ext_test_ulp: %s: removed with objects held: releasing\n",
			dev_name(&dev->dev));
	release(d);
	list_del(&d->list);
	mutex_unlock(&ulp_lock);
	ib_unregister_event_handler(&d->events);
	kfree(d);
}

static struct ib_client ulp_client = {
	.name = "mlx_ext_test_ulp",
	.add = ulp_add,
	.remove = ulp_remove,
};

/* A write to ctl, as its command's handler sees it. */
struct ctl_req {
	char *buf;		/* the whole write */
	const char *arg;	/* CTL_PREFIX: what follows the command's name */
	const char *cmd;	/* the first word */
	char *name;		/* the second: DEV, or with CTL_BY_NAME a name */
	struct ulp_dev *d;	/* DEV's device */
	struct ulp_dev *d_b;	/* DEV2's of DEV:DEV2, else d */
};

/* How a command is written (none of these: "NAME DEV ..."). */
#define CTL_LINE	BIT(0)	/* the whole write is NAME (sysfs_streq) */
#define CTL_PREFIX	BIT(1)	/* the write begins with NAME */
#define CTL_BY_NAME	BIT(2)	/* "NAME DEV ...", DEV not looked up */
#define CTL_TWO_DEVS	BIT(3)	/* DEV may be DEV:DEV2 of two devices */

struct ctl_cmd {
	const char *name;
	int (*run)(struct ctl_req *r);
	unsigned int flags;
};

static int ctl_lastfail(struct ctl_req *r)
{
	snprintf(tu_result, RESULT_MAX, "softirq %d\n", atomic_read(&lastfail_softirq));
	return 0;
}

static int ctl_syncresult(struct ctl_req *r)
{
	snprintf(tu_result, RESULT_MAX, "ret %d\n", sync_ret);
	return 0;
}

static int ctl_capsresult(struct ctl_req *r)
{
	snprintf(tu_result, RESULT_MAX, "ok %d enodev %d other %d running %d\n",
		 atomic_read(&caps_ok), atomic_read(&caps_enodev),
		 atomic_read(&caps_other), atomic_read(&caps_running));
	caps_reap(false);
	return 0;
}

/* "repost 0" or "repost 1": buf[7] is the digit. */
static int ctl_repost(struct ctl_req *r)
{
	WRITE_ONCE(repost_on_done, r->buf[7] == '1');
	snprintf(tu_result, RESULT_MAX, "repost %d\n", repost_on_done);
	return 0;
}

static int ctl_qpmode(struct ctl_req *r)
{
	if (sysfs_streq(r->arg, "create"))
		qp_mode = QP_CREATE;
	else if (sysfs_streq(r->arg, "attach"))
		qp_mode = QP_ATTACH;
	else if (sysfs_streq(r->arg, "attach_drain"))
		qp_mode = QP_ATTACH_DRAIN;
	else if (sysfs_streq(r->arg, "attach_group"))
		qp_mode = QP_ATTACH_GROUP;
	else
		return -EINVAL;
	snprintf(tu_result, RESULT_MAX, "qpmode %d\n", qp_mode);
	return 0;
}

static int ctl_apistats(struct ctl_req *r)
{
	/* Read and reset: each test phase sees its own. */
	snprintf(tu_result, RESULT_MAX,
		 "posted %d done %d ok %d canceled %d shutdown %d other %d atend %d repost_refused %d repost_other %d notbegun %d\n",
		 atomic_xchg(&api_posted, 0), atomic_xchg(&api_done, 0),
		 atomic_xchg(&api_ok, 0), atomic_xchg(&api_canceled, 0),
		 atomic_xchg(&api_shutdown, 0), atomic_xchg(&api_other, 0),
		 atomic_xchg(&api_at_end, 0),
		 atomic_xchg(&api_repost_refused, 0),
		 atomic_xchg(&api_repost_other, 0),
		 atomic_xchg(&api_not_begun, 0));
	return 0;
}

/* By name: what a device was told outlives it. */
static int ctl_guidevents(struct ctl_req *r)
{
	unsigned int port, function;
	struct guidev *g;

	if (sscanf(r->buf, "%*s %*s %u %u", &port, &function) != 2)
		return -EINVAL;
	spin_lock(&guidev_lock);
	g = guidev_find(r->name, port, function, false);
	snprintf(tu_result, RESULT_MAX, "calls %u up %d count %u\n", g ? g->calls : 0,
		 g ? g->up : 0, g ? g->count : 0);
	spin_unlock(&guidev_lock);
	return 0;
}

static int ctl_api(struct ctl_req *r)
{
	char poll_s[16], kind[16], reply[16];
	enum ib_poll_context poll;
	unsigned long long seed;
	unsigned int count;
	u32 flags = 0;

	if (sscanf(r->buf, "%*s %*s %15s %llu %u %15s %15s", poll_s, &seed,
		   &count, kind, reply) != 5 || parse_poll(poll_s, &poll))
		return -EINVAL;
	if (!strcmp(reply, "be"))
		flags = MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY;
	else if (strcmp(reply, "none"))
		return -EINVAL;
	return run_api(r->d->dev, r->d_b->dev, poll, seed, count,
		       !strcmp(kind, "narrow") ? API_NARROW :
		       !strcmp(kind, "masked") ? API_MASKED : API_STD,
		       flags);
}

static int ctl_bench(struct ctl_req *r)
{
	char poll_s[16], kind[16];
	enum ib_poll_context poll;
	unsigned int count;

	kind[0] = 0;
	if (sscanf(r->buf, "%*s %*s %15s %u %15s", poll_s, &count, kind) < 2 ||
	    parse_poll(poll_s, &poll))
		return -EINVAL;
	return run_bench(r->d->dev, poll, count, strcmp(kind, "short"));
}

/* "NAME DEV POLL COUNT": burst and contend. */
static int ctl_poll_count(struct ctl_req *r, enum ib_poll_context *poll, unsigned int *count)
{
	char poll_s[16];

	if (sscanf(r->buf, "%*s %*s %15s %u", poll_s, count) != 2 ||
	    parse_poll(poll_s, poll))
		return -EINVAL;
	tu_result[0] = 0;
	return 0;
}

static int ctl_burst(struct ctl_req *r)
{
	enum ib_poll_context poll;
	unsigned int count;

	return ctl_poll_count(r, &poll, &count) ?: run_burst(r->d->dev, poll, count);
}

static int ctl_flight(struct ctl_req *r)
{
	char poll_s[16], kind[16], gfp_s[16] = "kernel";
	enum ib_poll_context poll;
	unsigned int depth, count;
	gfp_t gfp;
	int n;

	n = sscanf(r->buf, "%*s %*s %15s %u %u %15s %15s", poll_s, &depth,
		   &count, kind, gfp_s);
	if (n < 4 || parse_poll(poll_s, &poll))
		return -EINVAL;
	if (!strcmp(gfp_s, "kernel"))
		gfp = GFP_KERNEL;
	else if (!strcmp(gfp_s, "nowait"))
		gfp = GFP_NOWAIT;
	else if (!strcmp(gfp_s, "quiet"))
		gfp = GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN;
	else
		return -EINVAL;
	return run_flight(r->d->dev, poll, depth, count, kind, gfp);
}

static int ctl_contend(struct ctl_req *r)
{
	enum ib_poll_context poll;
	unsigned int count;

	return ctl_poll_count(r, &poll, &count) ?: run_contend(r->d->dev, poll, count);
}

static int ctl_group(struct ctl_req *r)
{
	char poll_s[16], kind[16];
	enum ib_poll_context poll;

	if (sscanf(r->buf, "%*s %*s %15s %15s", poll_s, kind) != 2 ||
	    parse_poll(poll_s, &poll))
		return -EINVAL;
	tu_result[0] = 0;
	return run_group(r->d->dev, poll, kind);
}

static int ctl_apiflags(struct ctl_req *r)
{
	return run_apiflags(r->d->dev);
}

static int ctl_abi(struct ctl_req *r)
{
	return run_abi(r->d->dev);
}

static int ctl_attachflags(struct ctl_req *r)
{
	return run_attachflags(r->d->dev, r->d_b->dev);
}

static int ctl_atomics(struct ctl_req *r)
{
	char poll_s[16], kind[16], reply[16];
	enum ib_poll_context poll;
	unsigned long long seed;
	unsigned int count;

	if (sscanf(r->buf, "%*s %*s %15s %llu %u %15s %15s", poll_s, &seed,
		   &count, kind, reply) != 5 || parse_poll(poll_s, &poll))
		return -EINVAL;
	return run_atomics(r->d->dev, r->d_b->dev, poll, seed, count,
			   !strcmp(kind, "masked"), !strcmp(reply, "be"));
}

static int ctl_errors(struct ctl_req *r)
{
	enum ib_poll_context poll;
	char poll_s[16];

	if (sscanf(r->buf, "%*s %*s %15s", poll_s) != 1 || parse_poll(poll_s, &poll))
		return -EINVAL;
	return run_errors(r->d->dev, poll);
}

/* "hold DEV N [api]" */
static int ctl_hold(struct ctl_req *r)
{
	unsigned int count;
	char kind[16];
	int ret;

	kind[0] = 0;
	if (sscanf(r->buf, "%*s %*s %u %15s", &count, kind) < 1)
		return -EINVAL;
	if (kind[0] && strcmp(kind, "api"))
		return -EINVAL;
	ret = hold(r->d, count, kind[0] != 0);
	snprintf(tu_result, RESULT_MAX, "%s %d\n", r->cmd, ret);
	return ret;
}

static int ctl_guidinfo(struct ctl_req *r)
{
	int off = 0;

	/* %n is not counted: the fields after it are the query's. */
	if (sscanf(r->buf, "%*s %*s %n", &off) >= 0 && off)
		return run_guidinfo(r->d->dev, r->buf + off);
	return -EINVAL;
}

static int ctl_events(struct ctl_req *r)
{
	snprintf(tu_result, RESULT_MAX, "port_err %d port_active %d\n",
		 atomic_read(&r->d->port_err), atomic_read(&r->d->port_active));
	return 0;
}

static int ctl_syncself(struct ctl_req *r)
{
	enum ib_poll_context poll;
	char poll_s[16];

	if (sscanf(r->buf, "%*s %*s %15s", poll_s) != 1 || parse_poll(poll_s, &poll))
		return -EINVAL;
	return run_syncself(r->d->dev, poll);
}

static int ctl_destroyself(struct ctl_req *r)
{
	static const char * const hows[] = {
		[DESTROY_SEND] = "send", [DESTROY_RECV] = "recv",
		[DESTROY_ATTACHED] = "attached",
	};
	char how[12];
	int h;

	if (sscanf(r->buf, "%*s %*s %11s", how) != 1)
		return -EINVAL;
	h = match_string(hows, ARRAY_SIZE(hows), how);
	if (h < 0)
		return -EINVAL;
	return run_destroyself(r->d->dev, h);
}

static int ctl_syncwait(struct ctl_req *r)
{
	return run_syncwait(r->d->dev);
}

/* "heldsync DEV": a masked fetch-and-add of 1 on word 1 of the held QP. */
static int ctl_heldsync(struct ctl_req *r)
{
	struct ulp_dev *d = r->d;
	struct mlx_ext_atomic op = {
		.opcode = MLX_EXT_MASKED_FETCH_ADD,
		.size = 8,
		.compare_add = 1,
		.compare_add_mask = 1ULL << 63,
	};
	int ret;

	if (!d->held || !d->held->xqa)
		return -EINVAL;
	op.remote_addr = word_addr(d->held, 1);
	op.rkey = d->held->mr->rkey;
	ret = mlx_ext_atomic(d->held->xqa, &op);
	snprintf(tu_result, RESULT_MAX, "%s %d response %llu\n", r->cmd, ret,
		 op.response);
	return 0;
}

/* "early DEV init|rts|reuse kernel|atomic" */
static int ctl_early(struct ctl_req *r)
{
	static const char * const states[] = {
		[EARLY_INIT] = "init", [EARLY_RTS] = "rts", [EARLY_REUSE] = "reuse",
	};
	char state[8], gfp[8];
	int s;

	if (sscanf(r->buf, "%*s %*s %7s %7s", state, gfp) != 2 ||
	    (strcmp(gfp, "kernel") && strcmp(gfp, "atomic")))
		return -EINVAL;
	s = match_string(states, ARRAY_SIZE(states), state);
	if (s < 0)
		return -EINVAL;
	return run_early(r->d->dev, s, strcmp(gfp, "kernel") ? GFP_ATOMIC : GFP_KERNEL);
}

static int ctl_capsloop(struct ctl_req *r)
{
	int ret = caps_start(r->d->dev);

	snprintf(tu_result, RESULT_MAX, "%s %d\n", r->cmd, ret);
	return ret;
}

static int ctl_release(struct ctl_req *r)
{
	release(r->d);
	snprintf(tu_result, RESULT_MAX, "%s 0\n", r->cmd);
	return 0;
}

/* The commands (see the top of this file). */
static const struct ctl_cmd ctl_cmds[] = {
	{ "lastfail",		ctl_lastfail,		CTL_LINE },
	{ "syncresult",		ctl_syncresult,		CTL_LINE },
	{ "capsresult",		ctl_capsresult,		CTL_LINE },
	{ "repost 0",		ctl_repost,		CTL_LINE },
	{ "repost 1",		ctl_repost,		CTL_LINE },
	{ "qpmode ",		ctl_qpmode,		CTL_PREFIX },
	{ "apistats",		ctl_apistats,		CTL_LINE },
	{ "guidevents",		ctl_guidevents,		CTL_BY_NAME },
	{ "api",		ctl_api,		CTL_TWO_DEVS },
	{ "bench",		ctl_bench },
	{ "burst",		ctl_burst },
	{ "flight",		ctl_flight },
	{ "contend",		ctl_contend },
	{ "group",		ctl_group },
	{ "apiflags",		ctl_apiflags },
	{ "abi",		ctl_abi },
	{ "attachflags",	ctl_attachflags,	CTL_TWO_DEVS },
	{ "atomics",		ctl_atomics,		CTL_TWO_DEVS },
	{ "errors",		ctl_errors },
	{ "hold",		ctl_hold },
	{ "guidinfo",		ctl_guidinfo },
	{ "events",		ctl_events },
	{ "syncself",		ctl_syncself },
	{ "syncwait",		ctl_syncwait },
	{ "destroyself",	ctl_destroyself },
	{ "heldsync",		ctl_heldsync },
	{ "early",		ctl_early },
	{ "capsloop",		ctl_capsloop },
	{ "release",		ctl_release },
};

/* The CTL_LINE or CTL_PREFIX command that the whole of @buf is, if any. */
static const struct ctl_cmd *ctl_find_line(const char *buf)
{
	const struct ctl_cmd *c;

	for (c = ctl_cmds; c < ctl_cmds + ARRAY_SIZE(ctl_cmds); c++) {
		if ((c->flags & CTL_LINE) && sysfs_streq(buf, c->name))
			return c;
		if ((c->flags & CTL_PREFIX) && !strncmp(buf, c->name, strlen(c->name)))
			return c;
	}
	return NULL;
}

/* The "NAME DEV ..." command named @cmd, if any. */
static const struct ctl_cmd *ctl_find(const char *cmd)
{
	const struct ctl_cmd *c;

	for (c = ctl_cmds; c < ctl_cmds + ARRAY_SIZE(ctl_cmds); c++)
		if (!(c->flags & (CTL_LINE | CTL_PREFIX)) && !strcmp(cmd, c->name))
			return c;
	return NULL;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char cmd[16], name[2 * IB_DEVICE_NAME_MAX];
	const struct ctl_cmd *c;
	struct ctl_req r = {};
	char *name_b;
	char *buf;
	int ret;

	if (len >= 256)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	r.buf = buf;
	mutex_lock(&ulp_lock);
	c = ctl_find_line(buf);
	if (c) {
		r.arg = buf + strlen(c->name);
		ret = c->run(&r);
		goto out;
	}
	ret = -EINVAL;
	if (sscanf(buf, "%15s %127s", cmd, name) != 2)
		goto out;
	r.cmd = cmd;
	r.name = name;
	c = ctl_find(cmd);
	if (c && (c->flags & CTL_BY_NAME)) {
		ret = c->run(&r);
		goto out;
	}
	/* DEV or, for atomics, REQUESTER:RESPONDER. */
	name_b = strchr(name, ':');
	if (name_b)
		*name_b++ = 0;
	r.d = find_dev(name);
	r.d_b = name_b ? find_dev(name_b) : r.d;
	ret = -ENODEV;
	if (!r.d || !r.d_b)
		goto out;
	/* An unknown command too: -ENODEV if DEV is not found, else -EINVAL. */
	ret = -EINVAL;
	if (!c || (r.d_b != r.d && !(c->flags & CTL_TWO_DEVS)))
		goto out;
	ret = c->run(&r);
out:
	mutex_unlock(&ulp_lock);
	kfree(buf);
	return ret ? ret : len;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&ulp_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, tu_result, strlen(tu_result));
	mutex_unlock(&ulp_lock);
	return ret;
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.write = ctl_write,
	.read = ctl_read,
	.llseek = default_llseek,
};

static struct dentry *dir;

static int __init ulp_init(void)
{
	int ret;

	ib_sa_register_client(&tu_sa_client);
	dir = debugfs_create_dir("mlx_ext_test_ulp", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &ctl_fops);
	ret = ib_register_client(&ulp_client);
	if (ret) {
		debugfs_remove(dir);
		ib_sa_unregister_client(&tu_sa_client);
		return ret;
	}
	ret = mlx_ext_register_guid_notifier(&guid_nb);
	if (ret) {
		debugfs_remove(dir);
		ib_unregister_client(&ulp_client);
		ib_sa_unregister_client(&tu_sa_client);
	}
	return ret;
}

static void __exit ulp_exit(void)
{
	caps_reap(true);
	mlx_ext_unregister_guid_notifier(&guid_nb);
	debugfs_remove(dir);
	ib_unregister_client(&ulp_client);
	ib_sa_unregister_client(&tu_sa_client);
}

module_init(ulp_init);
module_exit(ulp_exit);
MODULE_DESCRIPTION("mlx_ext's test ULP: atomics over RC loopback, for the VM tests");
MODULE_LICENSE("GPL");
