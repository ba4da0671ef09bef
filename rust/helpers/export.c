// SPDX-License-Identifier: GPL-2.0
/*
 * The exported ULP API of include/mlx_ext/mlx_ext.h. mlx_ext_atomic() and
 * the gfp_t step of mlx_ext_post_atomic() are here; the rest is defined in Rust (rust/ib/ulp.rs, export_atomic_api!)
 * and only exported here, as the kernel's own rust/exports.c does; the
 * prototypes the header gives are the ones the Rust side implements.
 */

#include <linux/completion.h>
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/notifier.h>
#include <mlx_ext/helpers.h>
#include <linux/sched/mm.h>
#include <mlx_ext/mlx_ext.h>

EXPORT_SYMBOL_GPL(mlx_ext_api_version);
EXPORT_SYMBOL_GPL(mlx_ext_query_caps);
EXPORT_SYMBOL_GPL(mlx_ext_create_qp);
EXPORT_SYMBOL_GPL(mlx_ext_qp_ib);
EXPORT_SYMBOL_GPL(mlx_ext_destroy_qp);

/* Rust, rust/ib/ulp.rs: mlx_ext_post_atomic() with the gfp_t reduced to
 * what mlx_ext's allocation needs to know.
 */
int mlx_ext_rs_post_atomic(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			   bool can_sleep);

int mlx_ext_post_atomic(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			gfp_t gfp)
{
	bool can_sleep = gfpflags_allow_blocking(gfp);
	unsigned int scope = 0;
	int ret;

	/*
	 * mlx_ext allocates with GFP_KERNEL where the caller may sleep: a
	 * caller that may not recurse into I/O or a filesystem (GFP_NOIO,
	 * GFP_NOFS) gets that restriction as a scope around the call.
	 */
	if (can_sleep && !(gfp & __GFP_IO))
		scope = memalloc_noio_save();
	else if (can_sleep && !(gfp & __GFP_FS))
		scope = memalloc_nofs_save();
	ret = mlx_ext_rs_post_atomic(qp, op, can_sleep);
	if (can_sleep && !(gfp & __GFP_IO))
		memalloc_noio_restore(scope);
	else if (can_sleep && !(gfp & __GFP_FS))
		memalloc_nofs_restore(scope);
	return ret;
}
EXPORT_SYMBOL_GPL(mlx_ext_post_atomic);

static void mlx_ext_atomic_done(struct mlx_ext_atomic *op)
{
	complete(op->context);
}

int mlx_ext_atomic(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op)
{
	DECLARE_COMPLETION_ONSTACK(done);
	int ret;

	might_sleep();
	op->done = mlx_ext_atomic_done;
	op->context = &done;
	ret = mlx_ext_post_atomic(qp, op, GFP_KERNEL);
	if (ret)
		return ret;
	/* Always comes: a completion, a flush, or mlx_ext_destroy_qp(). */
	wait_for_completion(&done);
	return op->status;
}
EXPORT_SYMBOL_GPL(mlx_ext_atomic);

/* GUID-change events of the VF GUID tables (rust/vf_guids.rs). */
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
