// SPDX-License-Identifier: GPL-2.0
/*
 * The exported ULP API of include/mlx_ext/mlx_ext.h. mlx_ext_atomic(), the
 * gfp_t step of mlx_ext_post_atomic() and the context checks of
 * mlx_ext_detach_qp() and mlx_ext_destroy_qp() are here; the rest is defined in
 * Rust (rust/ib/export.rs, export_atomic_api!)
 * and only exported here, as the kernel's own rust/exports.c does; the
 * prototypes the header gives are the ones the Rust side implements.
 */

#include <linux/completion.h>
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/mempool.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/refcount.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/mlx_ext.h>

/* The module's version, from the tree's VERSION file (Kbuild). */
MODULE_VERSION(MLX_EXT_VERSION);
/* The ULP API's, MLX_EXT_API_VERSION as major.minor. */
MODULE_INFO(api_version, __stringify(MLX_EXT_API_VERSION_MAJOR) "."
	    __stringify(MLX_EXT_API_VERSION_MINOR));

EXPORT_SYMBOL_GPL(mlx_ext_api_version);
EXPORT_SYMBOL_GPL(mlx_ext_create_qp);
EXPORT_SYMBOL_GPL(mlx_ext_qp_ib);
EXPORT_SYMBOL_GPL(mlx_ext_init_qp_attr);
EXPORT_SYMBOL_GPL(mlx_ext_attach_qp);
EXPORT_SYMBOL_GPL(mlx_ext_attach_qp_group);

/*
 * Whether a ULP's call of @fn carries this header: @version is the
 * MLX_EXT_API_VERSION it was built with, @size its sizeof of @type, which
 * is @ours here. The rule is mlx_ext_rs_abi_check() (core/src/api.rs,
 * abi_check); a refusal is said with the caller's name, which says which
 * module to rebuild.
 */
static bool mlx_ext_abi_ok(const char *fn, const char *type, u32 version,
			   size_t size, size_t ours, void *caller)
{
	static const char *const why[] = {
		[1] = "another major version: rebuild it against this mlx_ext",
		[2] = "a newer version than this mlx_ext: load the mlx_ext it was built for",
		[3] = "another size of the structure: rebuild it against this mlx_ext",
	};
	int code = mlx_ext_rs_abi_check(version, size, ours);

	if (!code)
		return true;
	pr_warn_ratelimited("mlx_ext: %pS called %s() built against API %u.%u with %s of %zu bytes; this mlx_ext is API %u.%u with %zu bytes: %s; refused with -EINVAL\n",
			    caller, fn, version >> 16, version & 0xffff, type,
			    size, MLX_EXT_API_VERSION_MAJOR,
			    MLX_EXT_API_VERSION_MINOR, ours,
			    code < ARRAY_SIZE(why) && why[code] ? why[code] : "?");
	return false;
}

int mlx_ext_query_caps_v1(struct ib_device *dev, struct mlx_ext_caps *caps,
			  u32 api_version, size_t size)
{
	if (!mlx_ext_abi_ok("mlx_ext_query_caps", "struct mlx_ext_caps",
			    api_version, size, sizeof(*caps),
			    __builtin_return_address(0)))
		return -EINVAL;
	return mlx_ext_rs_query_caps(dev, caps);
}
EXPORT_SYMBOL_GPL(mlx_ext_query_caps_v1);

static int mlx_ext_post(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			gfp_t gfp)
{
	bool can_sleep = gfpflags_allow_blocking(gfp);
	unsigned int scope = 0;
	int ret;

	/*
	 * mlx_ext's own allocation (a request pool's growth) takes @gfp as
	 * it is. What the call may do beyond it (ib_query_qp(), whose driver
	 * allocates as it likes) gets a caller's GFP_NOIO or GFP_NOFS as a
	 * scope around the call.
	 */
	if (can_sleep && !(gfp & __GFP_IO))
		scope = memalloc_noio_save();
	else if (can_sleep && !(gfp & __GFP_FS))
		scope = memalloc_nofs_save();
	ret = mlx_ext_rs_post_atomic(qp, op, gfp);
	if (can_sleep && !(gfp & __GFP_IO))
		memalloc_noio_restore(scope);
	else if (can_sleep && !(gfp & __GFP_FS))
		memalloc_nofs_restore(scope);
	return ret;
}

int mlx_ext_post_atomic_v1(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			   gfp_t gfp, u32 api_version, size_t size)
{
	if (!mlx_ext_abi_ok("mlx_ext_post_atomic", "struct mlx_ext_atomic",
			    api_version, size, sizeof(*op),
			    __builtin_return_address(0)))
		return -EINVAL;
	return mlx_ext_post(qp, op, gfp);
}
EXPORT_SYMBOL_GPL(mlx_ext_post_atomic_v1);

/*
 * mlx_ext_atomic(): the operation posted is a copy, with its completion, in
 * memory the caller's return does not free: a waiter killed by a fatal
 * signal returns at once, and the operation ends later by itself (it cannot
 * be called back once posted). Two references: the waiter's, and the
 * callback's.
 *
 * The waiters come from a slab cache of their own through a mempool that
 * keeps MLX_EXT_SYNC_RESERVE of them: a call takes a kept one
 * (mempool_alloc_preallocated(), which never allocates nor sleeps), and
 * allocates from the cache only when none is left, which may fail
 * (-ENOMEM); mempool_alloc() would call the allocator first on every call
 * (mm/mempool.c). A waiter whose last reference goes is kept again while
 * fewer than the reserve are, else freed (mempool_free()), so the pool
 * never holds more than the reserve. A kept waiter is poisoned for KASAN
 * (mm/mempool.c, add_element) and its kmemleak trace renewed when it is
 * taken (mempool_alloc_preallocated()): a use after its release is caught
 * as with kfree(). Both are made when the module loads
 * (mlx_ext_sync_pool_create()) and destroyed when it exits
 * (mlx_ext_sync_pool_destroy()): by then every operation has ended, since
 * a QP's detach or destroy waits for its operations and a ULP cannot
 * outlive the module it calls.
 */
struct mlx_ext_sync_op {
	struct mlx_ext_atomic op;
	struct completion done;
	refcount_t ref;
};

#define MLX_EXT_SYNC_RESERVE 16

static struct kmem_cache *mlx_ext_sync_cache;
static mempool_t *mlx_ext_sync_pool;

int mlx_ext_sync_pool_create(void)
{
	/* One pool for the module: a second would replace the first. */
	if (mlx_ext_sync_pool)
		return -EBUSY;
	mlx_ext_sync_cache = KMEM_CACHE(mlx_ext_sync_op, 0);
	if (!mlx_ext_sync_cache)
		return -ENOMEM;
	mlx_ext_sync_pool = mempool_create_slab_pool(MLX_EXT_SYNC_RESERVE,
						     mlx_ext_sync_cache);
	if (!mlx_ext_sync_pool) {
		kmem_cache_destroy(mlx_ext_sync_cache);
		mlx_ext_sync_cache = NULL;
		return -ENOMEM;
	}
	return 0;
}

void mlx_ext_sync_pool_destroy(void)
{
	mempool_destroy(mlx_ext_sync_pool);
	kmem_cache_destroy(mlx_ext_sync_cache);
	mlx_ext_sync_pool = NULL;
	mlx_ext_sync_cache = NULL;
}

/* A kept waiter, or a new one (NULL: none could be allocated). Process
 * context.
 */
static struct mlx_ext_sync_op *mlx_ext_sync_get(void)
{
	return mempool_alloc_preallocated(mlx_ext_sync_pool) ?:
	       kmem_cache_alloc(mlx_ext_sync_cache, GFP_KERNEL);
}

/* Any context. */
static void mlx_ext_sync_put(struct mlx_ext_sync_op *s)
{
	if (refcount_dec_and_test(&s->ref))
		mempool_free(s, mlx_ext_sync_pool);
}

/* Any context: the send CQ's. */
static void mlx_ext_atomic_done(struct mlx_ext_atomic *op)
{
	struct mlx_ext_sync_op *s = container_of(op, struct mlx_ext_sync_op, op);

	complete(&s->done);
	mlx_ext_sync_put(s);
}

/*
 * Whether waiting here for a completion of @qp could never end: in
 * interrupt context (an IB_POLL_SOFTIRQ CQ's handler, among others), and
 * in the work item of @qp's own send CQ (IB_POLL_WORKQUEUE and
 * IB_POLL_UNBOUND_WORKQUEUE run one work item per CQ, cq->work, which is not
 * reentrant: the completion waited for is delivered by the very work item
 * that would wait; drivers/infiniband/core/cq.c).
 */
static const char *mlx_ext_wait_deadlock(struct mlx_ext_qp *qp)
{
	struct ib_cq *cq = mlx_ext_qp_ib(qp)->send_cq;

	if (!in_task())
		return "interrupt context";
	if ((cq->poll_ctx == IB_POLL_WORKQUEUE ||
	     cq->poll_ctx == IB_POLL_UNBOUND_WORKQUEUE) &&
	    current_work() == &cq->work)
		return "its own send CQ's completion work item";
	return NULL;
}

/*
 * A call of @fn from @why will wait for ever. Besides the caller's
 * backtrace, once (WARN_ONCE at the call, so that its WARNING line names
 * the function), a line every time, rate-limited, so that a second misuse
 * does not hang without a word.
 */
static void mlx_ext_wait_line(const char *fn, const char *why)
{
	pr_err_ratelimited("mlx_ext: %s() called from %s: it will wait for ever (%s, pid %d)\n",
			   fn, why, current->comm, task_pid_nr(current));
}

void mlx_ext_detach_qp(struct mlx_ext_qp *mqp)
{
	const char *why;

	if (!mqp)
		return;
	might_sleep();
	/* It waits for completions that only this context could deliver. */
	why = mlx_ext_wait_deadlock(mqp);
	if (why) {
		WARN_ONCE(1, "mlx_ext: %s() called from %s: it will wait for ever\n",
			  __func__, why);
		mlx_ext_wait_line(__func__, why);
	}
	mlx_ext_rs_detach_qp(mqp);
}
EXPORT_SYMBOL_GPL(mlx_ext_detach_qp);

void mlx_ext_destroy_qp(struct mlx_ext_qp *qp)
{
	struct ib_cq *rcq;
	const char *why;

	if (!qp)
		return;
	might_sleep();
	/*
	 * As mlx_ext_detach_qp(), and, for a QP mlx_ext made (an attached one
	 * is only detached), more: ib_drain_qp() waits for the completions of
	 * its markers, on the send CQ and (a QP mlx_ext creates has no SRQ)
	 * on the receive CQ, which only this context could deliver.
	 */
	why = mlx_ext_wait_deadlock(qp);
	rcq = mlx_ext_qp_ib(qp)->recv_cq;
	if (!why && rcq && mlx_ext_rs_qp_owned(qp) &&
	    (rcq->poll_ctx == IB_POLL_WORKQUEUE ||
	     rcq->poll_ctx == IB_POLL_UNBOUND_WORKQUEUE) &&
	    current_work() == &rcq->work)
		why = "its own receive CQ's completion work item";
	if (why) {
		WARN_ONCE(1, "mlx_ext: %s() called from %s: it will wait for ever\n",
			  __func__, why);
		mlx_ext_wait_line(__func__, why);
	}
	mlx_ext_rs_destroy_qp(qp);
}
EXPORT_SYMBOL_GPL(mlx_ext_destroy_qp);

int mlx_ext_atomic_v1(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
		      u32 api_version, size_t size)
{
	struct mlx_ext_sync_op *s;
	const char *why;
	int ret;

	if (!mlx_ext_abi_ok("mlx_ext_atomic", "struct mlx_ext_atomic",
			    api_version, size, sizeof(*op),
			    __builtin_return_address(0)))
		return -EINVAL;
	if (!qp || !op)
		return -EINVAL;
	why = mlx_ext_wait_deadlock(qp);
	/* An attached QP's send CQ may be polled directly (IB_POLL_DIRECT):
	 * its completions come only when its owner polls.
	 */
	if (!why && mlx_ext_qp_ib(qp)->send_cq->poll_ctx == IB_POLL_DIRECT)
		why = "a QP whose send CQ is polled directly (IB_POLL_DIRECT)";
	if (why) {
		pr_warn_once("mlx_ext: mlx_ext_atomic() called from %s, where waiting for the operation would never end: refused with -EDEADLK (use mlx_ext_post_atomic())\n",
			     why);
		return -EDEADLK;
	}
	might_sleep();
	s = mlx_ext_sync_get();
	if (!s)
		return -ENOMEM;
	s->op = *op;
	s->op.done = mlx_ext_atomic_done;
	s->op.context = NULL;
	init_completion(&s->done);
	refcount_set(&s->ref, 2);
	ret = mlx_ext_post(qp, &s->op, GFP_KERNEL);
	if (ret) {
		/* Not posted: the callback's reference is never used. */
		refcount_set(&s->ref, 1);
		mlx_ext_sync_put(s);
		return ret;
	}
	/* Always comes: a completion, a flush, or mlx_ext_destroy_qp(). */
	if (wait_for_completion_killable(&s->done)) {
		/* The operation goes on: its outcome is unknown. */
		mlx_ext_sync_put(s);
		return -EINTR;
	}
	op->status = s->op.status;
	op->wc_status = s->op.wc_status;
	op->response = s->op.response;
	op->raw_response = s->op.raw_response;
	op->attempts = s->op.attempts;
	ret = s->op.status;
	mlx_ext_sync_put(s);
	return ret;
}
EXPORT_SYMBOL_GPL(mlx_ext_atomic_v1);

/*
 * The calls of API 1.2 and earlier, which took no version: a ULP built
 * against those headers calls these symbols and keeps working (1.x works
 * with every later 1.y). Their structures are those of 1.2, whose layout
 * and size 1.3 kept (1.2's reserved fields, which it had to zero, are
 * 1.3's flags and reserved).
 */
#define MLX_EXT_API_1_2 ((1 << 16) | 2)

/* (The parentheses keep the header's macros of the same names out.) */
int (mlx_ext_query_caps)(struct ib_device *dev, struct mlx_ext_caps *caps)
{
	return mlx_ext_query_caps_v1(dev, caps, MLX_EXT_API_1_2, sizeof(*caps));
}
EXPORT_SYMBOL_GPL(mlx_ext_query_caps);

int (mlx_ext_post_atomic)(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			  gfp_t gfp)
{
	return mlx_ext_post_atomic_v1(qp, op, gfp, MLX_EXT_API_1_2,
				      sizeof(*op));
}
EXPORT_SYMBOL_GPL(mlx_ext_post_atomic);

int (mlx_ext_atomic)(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op)
{
	return mlx_ext_atomic_v1(qp, op, MLX_EXT_API_1_2, sizeof(*op));
}
EXPORT_SYMBOL_GPL(mlx_ext_atomic);

/* GUID-change events of the VF GUID tables (rust/vf_guids/). */
static BLOCKING_NOTIFIER_HEAD(guid_notifiers);

int mlx_ext_register_guid_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&guid_notifiers, nb);
}
EXPORT_SYMBOL_GPL(mlx_ext_register_guid_notifier);

int mlx_ext_unregister_guid_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_unregister(&guid_notifiers, nb);
}
EXPORT_SYMBOL_GPL(mlx_ext_unregister_guid_notifier);

void mlx_ext_guid_notify(struct ib_device *dev, u32 port, u16 function,
			 bool up, u32 count)
{
	struct mlx_ext_guid_event e = {
		.device = dev,
		.port = port,
		.function = function,
		.up = up,
		.count = count,
	};

	blocking_notifier_call_chain(&guid_notifiers, MLX_EXT_GUID_CHANGE, &e);
}
