// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_test_ulp: refusals, errors and contracts. The API's refusals
 * and flag rules ("apiflags"), the versioned calls' contract ("abi"),
 * attaching ("attachflags"), a synchronous call from a done callback
 * ("syncself") and from a task that may be killed ("syncwait"), and the
 * verbs error cases ("errors").
 */

#include <linux/printk.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#include "test_ulp.h"

struct early {
	struct mlx_ext_atomic op;
	struct completion done;
};

static void early_done(struct mlx_ext_atomic *op)
{
	struct early *e = op->context;

	complete(&e->done);
}

/*
 * One operation on @l's QP through mlx_ext_post_atomic() with @gfp, waited
 * for: a masked fetch-and-add of 1 to the low 32-bit field of word 0 (two
 * fields: no carry out of bit 31 or 63), or (@std) a fetch-and-add of 1. Returns the
 * post's errno, the status in *@status; -ETIMEDOUT where done never ran
 * (@e is then mlx_ext's still, and leaked).
 */
static int early_one(struct loop *l, struct early *e, bool std, gfp_t gfp,
		     int *status)
{
	int err;

	memset(&e->op, 0, sizeof(e->op));
	init_completion(&e->done);
	e->op.opcode = std ? MLX_EXT_ATOMIC_FETCH_ADD : MLX_EXT_MASKED_FETCH_ADD;
	e->op.size = 8;
	e->op.remote_addr = word_addr(l, 0);
	e->op.rkey = l->mr->rkey;
	e->op.compare_add = 1;
	if (!std)
		e->op.compare_add_mask = 0x8000000080000000ULL;
	e->op.done = early_done;
	e->op.context = e;
	err = mlx_ext_post_atomic(l->xqa, &e->op, gfp);
	if (err)
		return err;
	if (!wait_for_completion_timeout(&e->done, msecs_to_jiffies(TIMEOUT_MS)))
		return -ETIMEDOUT;
	*status = e->op.status;
	return 0;
}

/*
 * A QP's first requests through mlx_ext_post_atomic() with @gfp, on a fresh
 * loopback whose QP was attached in RESET and then:
 * - EARLY_INIT: taken to INIT only, a post before RTS as a ULP racing
 *   rdma_cm's ESTABLISHED event makes one: "early ERR", the first post's
 *   errno, or as EARLY_RTS;
 * - EARLY_RTS: connected; two masked fetch-and-adds, one after the other:
 *   "early ok STATUS STATUS2 WORD" (ERR in place of STATUS2 where the
 *   second post failed);
 * - EARLY_REUSE: connected; a fetch-and-add of 1, then the QP taken back
 *   through RESET to INIT, as a ULP that reuses its QP on reconnect does,
 *   and a masked fetch-and-add posted there; then both QPs connected again
 *   and a masked fetch-and-add: "early reuse STATUS ERR STATUS3 WORD" (ERR:
 *   the post in INIT's errno; STATUS3 an errno where that post failed).
 */
int run_early(struct ib_device *dev, enum early_state state, gfp_t gfp)
{
	struct loop l = { .qa_init_only = state == EARLY_INIT };
	int err = 0, status[3] = {}, rc[3] = {};
	const char *stage;
	struct early *e;
	int i;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	stage = loop_setup_api(&l, dev, dev, IB_POLL_SOFTIRQ, ALL_ACCESS, ALL_ACCESS,
			       true, 0, &err);
	if (stage)
		goto out;
	l.target[0] = 0x0000000100000001ULL;
	if (state == EARLY_REUSE) {
		rc[0] = early_one(&l, e, true, gfp, &status[0]);
		if (rc[0] == -ETIMEDOUT)
			goto hung;
		stage = "reset";
		err = qp_to_reset(l.qa, &l.qa_live);
		if (!err)
			err = qp_to_init(l.qa, ALL_ACCESS, &l.qa_live);
		if (err)
			goto out;
		rc[1] = early_one(&l, e, false, gfp, &status[1]);
		if (rc[1] == -ETIMEDOUT)
			goto hung;
		stage = "reconnect";
		err = qp_to_reset(l.qa, &l.qa_live);
		if (!err)
			err = qp_to_reset(l.qb, &l.qb_live);
		if (!err)
			err = connect_qp(l.qa, l.qb, ALL_ACCESS, 1, &l.qa_live);
		if (!err)
			err = connect_qp(l.qb, l.qa, ALL_ACCESS, 1, &l.qb_live);
		if (err)
			goto out;
		stage = NULL;
		rc[2] = early_one(&l, e, false, gfp, &status[2]);
		if (rc[2] == -ETIMEDOUT)
			goto hung;
		snprintf(tu_result, RESULT_MAX, "early reuse %d %d %d %#llx\n",
			 rc[0] ? rc[0] : status[0], rc[1] ? rc[1] : status[1],
			 rc[2] ? rc[2] : status[2], l.target[0]);
		goto out;
	}
	for (i = 0; i < 2; i++) {
		rc[i] = early_one(&l, e, false, gfp, &status[i]);
		if (rc[i] == -ETIMEDOUT)
			goto hung;
		if (rc[i]) {
			status[i] = rc[i];
			break;
		}
	}
	if (rc[0])
		snprintf(tu_result, RESULT_MAX, "early %d\n", rc[0]);
	else
		snprintf(tu_result, RESULT_MAX, "early ok %d %d %#llx\n", status[0],
			 status[1], l.target[0]);
out:
	loop_destroy(&l);
	kfree(e);
	if (stage)
		snprintf(tu_result, RESULT_MAX, "early %s %d\n", stage, err);
	return 0;
hung:
	/* mlx_ext still owns @e's operation: leak it rather than free it. */
	snprintf(tu_result, RESULT_MAX, "hung\n");
	return 0;
}

/* One operation through the API on a fresh loopback; returns its errno. */
static int api_one(struct ib_device *dev, enum ib_poll_context poll, u32 flags,
		   u32 opcode, u32 size, u64 offset, bool no_done)
{
	struct mlx_ext_atomic op = {};
	struct loop l = {};
	int err = 0;

	if (loop_setup_api(&l, dev, dev, poll, ALL_ACCESS, ALL_ACCESS, true, flags,
			   &err)) {
		loop_destroy(&l);
		return err ? err : -EIO;
	}
	op.opcode = opcode;
	op.size = size;
	op.remote_addr = word_addr(&l, 0) + offset;
	op.rkey = l.mr->rkey;
	op.compare_add = 1;
	if (no_done)
		err = mlx_ext_post_atomic(l.xqa, &op, GFP_KERNEL);
	else
		err = mlx_ext_atomic(l.xqa, &op);
	loop_destroy(&l);
	return err;
}

/* A QP made without mlx_ext, with mlx_ext's flag: what a driver says. */
static int plain_with_flag(struct ib_device *dev)
{
	struct ib_qp_init_attr init = {};
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int err = 0;

	pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(cq)) {
		ib_dealloc_pd(pd);
		return PTR_ERR(cq);
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.qp_type = IB_QPT_RC;
	init.create_flags = MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY;
	qp = ib_create_qp(pd, &init);
	if (IS_ERR(qp))
		err = PTR_ERR(qp);
	else
		ib_destroy_qp(qp);
	ib_free_cq(cq);
	ib_dealloc_pd(pd);
	return err;
}

/*
 * The calls of API 1.2 and earlier, which took no version: what a ULP
 * built against those headers calls (the header now has macros by these
 * names, hence the parentheses).
 */
int (mlx_ext_query_caps)(struct ib_device *dev, struct mlx_ext_caps *caps);
int (mlx_ext_atomic)(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op);

static void abi_done(struct mlx_ext_atomic *op)
{
}

/*
 * One masked compare-and-swap on a fresh loopback of @dev through the
 * versioned call, as a ULP built against header @version with a structure
 * of @size bytes would make it, with @flags and @reserved (and a done
 * callback: only the contract may refuse it); @sync picks
 * mlx_ext_atomic_v1() over mlx_ext_post_atomic_v1(), and @old the call of
 * API 1.2 (@version and @size unused).
 */
static int abi_one(struct ib_device *dev, u32 version, size_t size, u32 flags,
		   u32 reserved, bool sync, bool old)
{
	struct mlx_ext_atomic op = {};
	struct loop l = {};
	int err = 0;

	if (loop_setup_api(&l, dev, dev, IB_POLL_SOFTIRQ, ALL_ACCESS, ALL_ACCESS,
			   true, 0, &err)) {
		loop_destroy(&l);
		return err ? err : -EIO;
	}
	op.opcode = MLX_EXT_MASKED_CMP_SWP;
	op.size = 8;
	op.remote_addr = word_addr(&l, 0);
	op.rkey = l.mr->rkey;
	op.compare_add_mask = 1;
	op.swap = 1;
	op.swap_mask = 1;
	op.flags = flags;
	op.reserved = reserved;
	op.done = abi_done;
	if (old)
		err = (mlx_ext_atomic)(l.xqa, &op);
	else if (sync)
		err = mlx_ext_atomic_v1(l.xqa, &op, version, size);
	else
		err = mlx_ext_post_atomic_v1(l.xqa, &op, GFP_KERNEL, version,
					     size);
	/* Destroying the QP waits for a posted operation: @op outlives it. */
	loop_destroy(&l);
	return err;
}

/*
 * The contract of the calls that take a structure (since 1.3): another
 * major version, a newer minor one and another size are refused with
 * -EINVAL (and a message naming this module); unknown flags and a
 * non-zero reserved field too; MLX_EXT_ATOMIC_FENCE is taken; and the
 * calls of 1.2, without a version, still work.
 */
int run_abi(struct ib_device *dev)
{
	const u32 v = MLX_EXT_API_VERSION;
	const u32 major = MLX_EXT_API_VERSION_MAJOR << 16;
	const size_t sz = sizeof(struct mlx_ext_atomic);
	struct mlx_ext_caps caps;
	size_t n = 0;

#define CASE(name, expr) \
	(n += scnprintf(tu_result + n, RESULT_MAX - n, "%s %d ", name, (expr)))
	tu_result[0] = 0;
	CASE("query_major", mlx_ext_query_caps_v1(dev, &caps, v + (1 << 16),
						  sizeof(caps)));
	CASE("query_newer", mlx_ext_query_caps_v1(dev, &caps, v + 1,
						  sizeof(caps)));
	CASE("query_size", mlx_ext_query_caps_v1(dev, &caps, v,
						 sizeof(caps) + 4));
	CASE("query_older", mlx_ext_query_caps_v1(dev, &caps, major,
						  sizeof(caps)));
	CASE("query_1_2", (mlx_ext_query_caps)(dev, &caps));
	CASE("post_size", abi_one(dev, v, sz - 8, 0, 0, false, false));
	CASE("post_major", abi_one(dev, v - (1 << 16), sz, 0, 0, false, false));
	CASE("sync_size", abi_one(dev, v, sz + 8, 0, 0, true, false));
	CASE("sync_newer", abi_one(dev, v + 1, sz, 0, 0, true, false));
	CASE("reserved", abi_one(dev, v, sz, 0, 1, true, false));
	CASE("flags", abi_one(dev, v, sz, 2, 0, true, false));
	CASE("fence", abi_one(dev, v, sz, MLX_EXT_ATOMIC_FENCE, 0, true, false));
	CASE("plain", abi_one(dev, v, sz, 0, 0, true, false));
	CASE("sync_1_2", abi_one(dev, 0, 0, 0, 0, true, true));
#undef CASE
	return 0;
}

int run_apiflags(struct ib_device *dev)
{
	struct mlx_ext_caps caps;
	size_t n = 0;
	int ret;

#define CASE(name, expr) \
	(n += scnprintf(tu_result + n, RESULT_MAX - n, "%s %d\n", name, (expr)))
	tu_result[0] = 0;
	ret = mlx_ext_query_caps(dev, &caps);
	CASE("query", ret);
	if (!ret)
		n += scnprintf(tu_result + n, RESULT_MAX - n,
			       "caps %u %u %u %u %u\n", caps.atomic_cap,
			       caps.masked_atomic_cap, caps.masked_mode,
			       caps.standard, caps.sizes);
	CASE("version", mlx_ext_api_version() == MLX_EXT_API_VERSION);
	CASE("driver_sees_flag", plain_with_flag(dev));
	CASE("fa_no_flag", api_one(dev, IB_POLL_SOFTIRQ, 0,
				   MLX_EXT_ATOMIC_FETCH_ADD, 8, 0, false));
	CASE("fa_flag", api_one(dev, IB_POLL_SOFTIRQ,
				MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY,
				MLX_EXT_ATOMIC_FETCH_ADD, 8, 0, false));
	CASE("mfa_no_flag", api_one(dev, IB_POLL_WORKQUEUE, 0,
				    MLX_EXT_MASKED_FETCH_ADD, 8, 0, false));
	CASE("direct_cq", api_one(dev, IB_POLL_DIRECT, 0,
				  MLX_EXT_ATOMIC_FETCH_ADD, 8, 0, false));
	CASE("size4", api_one(dev, IB_POLL_SOFTIRQ, 0, MLX_EXT_ATOMIC_FETCH_ADD,
			      4, 0, false));
	CASE("size16", api_one(dev, IB_POLL_SOFTIRQ, 0,
			       MLX_EXT_ATOMIC_FETCH_ADD, 16, 0, false));
	CASE("misaligned", api_one(dev, IB_POLL_SOFTIRQ, 0,
				   MLX_EXT_MASKED_CMP_SWP, 8, 4, false));
	CASE("bad_opcode", api_one(dev, IB_POLL_SOFTIRQ, 0, 7, 8, 0, false));
	CASE("no_done", api_one(dev, IB_POLL_SOFTIRQ, 0,
				MLX_EXT_ATOMIC_FETCH_ADD, 8, 0, true));
#undef CASE
	return 0;
}

static void attach_cq_event(struct ib_cq *cq, void *ctx)
{
}

/*
 * Attaches to a fresh QP of @type on @dev whose send CQ is @cq_kind
 * ("alloc": ib_alloc_cq() with @poll; "create": ib_create_cq() with a
 * comp_handler, as pre-ib_cqe ULPs make them), with @flags; returns what
 * mlx_ext_attach_qp() said (0 when it attached, then detached, or with
 * @destroy given to mlx_ext_destroy_qp(), which must leave the QP alone).
 * With @member, mlx_ext_attach_qp_group() in @member's group.
 */
static int attach_one(struct ib_device *dev, enum ib_qp_type type,
		      const char *cq_kind, enum ib_poll_context poll, u32 flags,
		      bool destroy, struct mlx_ext_qp *member)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
	};
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	struct mlx_ext_qp *xqp;
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct ib_pd *pd;
	int err;

	pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	if (!strcmp(cq_kind, "create"))
		cq = ib_create_cq(dev, attach_cq_event, NULL, NULL, &cq_attr);
	else
		cq = ib_alloc_cq(dev, NULL, 16, 0, poll);
	if (IS_ERR(cq)) {
		err = PTR_ERR(cq);
		goto out_pd;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	err = mlx_ext_init_qp_attr(dev, &init, 4);
	/* Not RC: refused here already; the QP is made anyway, to attach. */
	if (err && type == IB_QPT_RC)
		goto out_cq;
	qp = ib_create_qp(pd, &init);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		goto out_cq;
	}
	xqp = member ? mlx_ext_attach_qp_group(qp, flags, member) :
		mlx_ext_attach_qp(qp, flags);
	err = PTR_ERR_OR_ZERO(xqp);
	if (!err && destroy)
		mlx_ext_destroy_qp(xqp);
	else if (!err)
		mlx_ext_detach_qp(xqp);
	ib_destroy_qp(qp);
out_cq:
	if (!strcmp(cq_kind, "create"))
		ib_destroy_cq(cq);
	else
		ib_free_cq(cq);
out_pd:
	ib_dealloc_pd(pd);
	return err;
}

/* A QP of @dev made by mlx_ext_create_qp(), as a group's member. */
static struct mlx_ext_qp *member_make(struct ib_device *dev, struct ib_pd **pd,
				      struct ib_cq **cq)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct mlx_ext_qp *xqp;

	*pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(*pd))
		return ERR_CAST(*pd);
	*cq = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(*cq)) {
		ib_dealloc_pd(*pd);
		return ERR_CAST(*cq);
	}
	init.send_cq = *cq;
	init.recv_cq = *cq;
	xqp = mlx_ext_create_qp(*pd, &init);
	if (IS_ERR(xqp)) {
		ib_free_cq(*cq);
		ib_dealloc_pd(*pd);
	}
	return xqp;
}

/*
 * mlx_ext_attach_qp_group() of a fresh QP of @dev whose send CQ is @cq (or
 * one of its own) in the group of @member; returns what it said (0 when it
 * attached, then detached).
 */
static int group_one(struct ib_device *dev, struct ib_cq *cq,
		     struct mlx_ext_qp *member)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_cq *own = NULL;
	struct mlx_ext_qp *xqp;
	struct ib_qp *qp;
	struct ib_pd *pd;
	int err;

	pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	if (!cq) {
		own = ib_alloc_cq(dev, NULL, 16, 0, IB_POLL_SOFTIRQ);
		if (IS_ERR(own)) {
			err = PTR_ERR(own);
			goto out_pd;
		}
		cq = own;
	}
	init.send_cq = cq;
	init.recv_cq = cq;
	err = mlx_ext_init_qp_attr(dev, &init, 4);
	if (err)
		goto out_cq;
	qp = ib_create_qp(pd, &init);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		goto out_cq;
	}
	xqp = mlx_ext_attach_qp_group(qp, 0, member);
	err = PTR_ERR_OR_ZERO(xqp);
	if (!err)
		mlx_ext_detach_qp(xqp);
	ib_destroy_qp(qp);
out_cq:
	if (own)
		ib_free_cq(own);
out_pd:
	ib_dealloc_pd(pd);
	return err;
}

/*
 * mlx_ext_attach_qp_group() on @dev with a member made by
 * mlx_ext_create_qp() on @member_dev: sharing its send CQ (@share), or with
 * a CQ of its own.
 */
static int attach_group(struct ib_device *dev, struct ib_device *member_dev,
			bool share)
{
	struct mlx_ext_qp *member;
	struct ib_pd *pd;
	struct ib_cq *cq;
	int err;

	member = member_make(member_dev, &pd, &cq);
	if (IS_ERR(member))
		return PTR_ERR(member);
	err = group_one(dev, share ? cq : NULL, member);
	mlx_ext_destroy_qp(member);
	ib_free_cq(cq);
	ib_dealloc_pd(pd);
	return err;
}

int run_attachflags(struct ib_device *dev, struct ib_device *other)
{
	struct ib_qp_init_attr init = { .qp_type = IB_QPT_RC };
	size_t n = 0;
	int ret;

#define CASE(name, expr) \
	(n += scnprintf(tu_result + n, RESULT_MAX - n, "%s %d\n", name, (expr)))
	tu_result[0] = 0;
	init.cap.max_send_wr = 8;
	ret = mlx_ext_init_qp_attr(dev, &init, 4);
	n += scnprintf(tu_result + n, RESULT_MAX - n, "init_adds %d %u %u\n", ret,
		       init.cap.max_send_wr, init.cap.max_send_sge);
	init.cap.max_send_wr = U32_MAX - 1;
	CASE("init_overflow", mlx_ext_init_qp_attr(dev, &init, 2));
	init.qp_type = IB_QPT_UD;
	CASE("init_not_rc", mlx_ext_init_qp_attr(dev, &init, 2));
	CASE("init_null", mlx_ext_init_qp_attr(dev, NULL, 2));
	CASE("attach_null", PTR_ERR_OR_ZERO(mlx_ext_attach_qp(NULL, 0)));
	CASE("attach", attach_one(dev, IB_QPT_RC, "alloc", IB_POLL_SOFTIRQ, 0,
				  false, NULL));
	CASE("attach_be", attach_one(dev, IB_QPT_RC, "alloc", IB_POLL_SOFTIRQ,
				     MLX_EXT_QP_ATOMIC_BE_REPLY, false, NULL));
	CASE("attach_unknown_flag", attach_one(dev, IB_QPT_RC, "alloc",
					       IB_POLL_SOFTIRQ, BIT(5), false, NULL));
	CASE("attach_create_flag", attach_one(dev, IB_QPT_RC, "alloc",
					      IB_POLL_SOFTIRQ,
					      MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY,
					      false, NULL));
	CASE("attach_direct_cq", attach_one(dev, IB_QPT_RC, "alloc",
					    IB_POLL_DIRECT, 0, false, NULL));
	CASE("attach_created_cq", attach_one(dev, IB_QPT_RC, "create",
					     IB_POLL_SOFTIRQ, 0, false, NULL));
	CASE("attach_uc", attach_one(dev, IB_QPT_UC, "alloc", IB_POLL_SOFTIRQ, 0,
				     false, NULL));
	/* The handle given to mlx_ext_destroy_qp(): detached, QP left. */
	CASE("destroy_attached", attach_one(dev, IB_QPT_RC, "alloc",
					    IB_POLL_SOFTIRQ, 0, true, NULL));
	/* In a group (its member a created QP, whose send CQ it shares),
	 * with a send CQ of its own, with a failed attach's ERR_PTR as its
	 * member, and with a member of another device (with DEV:OTHER).
	 */
	CASE("group", attach_group(dev, dev, true));
	CASE("group_other_cq", attach_group(dev, dev, false));
	CASE("group_err_ptr", group_one(dev, NULL, ERR_PTR(-ENOMEM)));
	if (other != dev)
		CASE("group_other_dev", attach_group(dev, other, false));
#undef CASE
	return 0;
}

/* Fills @op as a fetch-and-add of 1 on the word at @addr under @rkey. */
static void fetch_add_one(struct mlx_ext_atomic *op, u64 addr, u32 rkey)
{
	op->opcode = MLX_EXT_ATOMIC_FETCH_ADD;
	op->size = 8;
	op->remote_addr = addr;
	op->rkey = rkey;
	op->compare_add = 1;
}

/* Posts @op, a fetch-and-add of 1 on word 0 of @l whose done callback is
 * @fn with @ctx and ends with complete(@done), on @l's QP, and waits for
 * it: 0, what the post returned (negative), or 1 if the callback never
 * completed (it is stuck: nothing of it may be freed).
 */
static int post_and_wait(struct loop *l, struct mlx_ext_atomic *op,
			 void (*fn)(struct mlx_ext_atomic *op), void *ctx,
			 struct completion *done)
{
	int err;

	fetch_add_one(op, word_addr(l, 0), l->mr->rkey);
	op->done = fn;
	op->context = ctx;
	err = mlx_ext_post_atomic(l->xqa, op, GFP_KERNEL);
	if (err)
		return err;
	if (!wait_for_completion_timeout(done, msecs_to_jiffies(TIMEOUT_MS)))
		return 1;
	return 0;
}

/* syncself: mlx_ext_atomic() called from the done callback of an operation
 * on the same QP, i.e. from the send CQ's completion context (softirq, or
 * the CQ's own work item): it must refuse with -EDEADLK, not wait.
 */
struct syncself {
	struct mlx_ext_atomic op, inner;
	struct mlx_ext_qp *qp;
	int inner_ret;
	struct completion done;
};

static void syncself_done(struct mlx_ext_atomic *op)
{
	struct syncself *s = op->context;

	fetch_add_one(&s->inner, op->remote_addr, op->rkey);
	s->inner_ret = mlx_ext_atomic(s->qp, &s->inner);
	complete(&s->done);
}

int run_syncself(struct ib_device *dev, enum ib_poll_context poll)
{
	struct loop l = {};
	struct syncself *s;
	const char *stage;
	int err = 0;

	if (poll == IB_POLL_DIRECT)
		return -EINVAL;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	init_completion(&s->done);
	stage = loop_setup_api(&l, dev, dev, poll, ALL_ACCESS, ALL_ACCESS, true, 0, &err);
	if (stage)
		goto out;
	s->qp = l.xqa;
	err = post_and_wait(&l, &s->op, syncself_done, s, &s->done);
	if (err == 1) {
		/* The callback is stuck in mlx_ext_atomic(): nothing to free. */
		snprintf(tu_result, RESULT_MAX, "hung\n");
		return 0;
	}
	if (err) {
		stage = "post";
		goto out;
	}
	snprintf(tu_result, RESULT_MAX, "status %d inner %d\n", s->op.status, s->inner_ret);
out:
	loop_destroy(&l);
	kfree(s);
	if (stage)
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/* destroyself: mlx_ext_destroy_qp() called from the done callback of an
 * operation, in the send CQ's own work item (IB_POLL_WORKQUEUE), on another
 * QP whose send CQ (@how DESTROY_SEND) or receive CQ (DESTROY_RECV) is that
 * CQ: a drain there would wait for completions only that work item
 * delivers, and the call warns so. The QP destroyed is a created one still
 * in RESET, which has nothing to drain (RESET to ERR is no transition): the
 * call returns, and the test sees the warning. DESTROY_ATTACHED: an
 * attached QP whose receive CQ is that CQ, which destroy only detaches
 * (nothing waits for its receive CQ): no warning; the ULP then destroys it.
 */
struct destroyself {
	struct mlx_ext_atomic op;
	struct mlx_ext_qp *victim;
	struct completion done;
};

static void destroyself_done(struct mlx_ext_atomic *op)
{
	struct destroyself *s = op->context;

	mlx_ext_destroy_qp(s->victim);
	s->victim = NULL;
	complete(&s->done);
}

int run_destroyself(struct ib_device *dev, enum destroy_how how)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *ulp_qp = NULL;
	struct destroyself *s;
	struct loop l = {};
	const char *stage;
	int err = 0;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	init_completion(&s->done);
	stage = loop_setup_api(&l, dev, dev, IB_POLL_WORKQUEUE, ALL_ACCESS, ALL_ACCESS, true, 0,
			       &err);
	if (stage)
		goto out;
	/* The done callback runs in l.cq's work item; l.cq_b has its own. */
	init.send_cq = how == DESTROY_SEND ? l.cq : l.cq_b;
	init.recv_cq = l.cq;
	stage = "victim";
	if (how == DESTROY_ATTACHED) {
		ulp_qp = ib_create_qp(l.pd, &init);
		if (IS_ERR(ulp_qp)) {
			err = PTR_ERR(ulp_qp);
			ulp_qp = NULL;
			goto out;
		}
		s->victim = mlx_ext_attach_qp(ulp_qp, 0);
	} else {
		s->victim = mlx_ext_create_qp(l.pd, &init);
	}
	if (IS_ERR(s->victim)) {
		err = PTR_ERR(s->victim);
		s->victim = NULL;
		goto out;
	}
	stage = NULL;
	err = post_and_wait(&l, &s->op, destroyself_done, s, &s->done);
	if (err == 1) {
		/* The callback is stuck in mlx_ext_destroy_qp(): nothing to free. */
		snprintf(tu_result, RESULT_MAX, "hung\n");
		return 0;
	}
	if (err) {
		stage = "post";
		goto out;
	}
	snprintf(tu_result, RESULT_MAX, "status %d destroyed %d\n", s->op.status, !s->victim);
out:
	if (s->victim)
		mlx_ext_destroy_qp(s->victim);
	if (ulp_qp)
		ib_destroy_qp(ulp_qp);
	loop_destroy(&l);
	kfree(s);
	if (stage)
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/* syncwait: one mlx_ext_atomic() from the writer's own task, which the test
 * may kill meanwhile; its return is kept for "syncresult".
 */
int sync_ret = 1;

int run_syncwait(struct ib_device *dev)
{
	struct mlx_ext_atomic op = {};
	struct loop l = {};
	const char *stage;
	int err = 0;

	sync_ret = 1;
	stage = loop_setup_api(&l, dev, dev, IB_POLL_SOFTIRQ, ALL_ACCESS, ALL_ACCESS, true, 0,
			       &err);
	if (!stage) {
		fetch_add_one(&op, word_addr(&l, 0), l.mr->rkey);
		/* The test waits for this line before it kills the task. */
		pr_info("mlx_ext_test_ulp: syncwait: waiting in mlx_ext_atomic()\n");
		sync_ret = mlx_ext_atomic(l.xqa, &op);
		snprintf(tu_result, RESULT_MAX, "ret %d response %llu\n", sync_ret, op.response);
	}
	/* Waits for the operation if the wait was cut short. */
	loop_destroy(&l);
	if (stage)
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/* One error case: a fresh loopback, the case's setup, one atomic. */
enum err_case {
	WRONG_RKEY, WRONG_VARIANT, NO_ATOMIC_ACCESS, MISALIGNED, OUT_OF_BOUNDS,
	AFTER_INVALIDATE, LOCAL_LENGTH, QP_NO_REMOTE_ATOMIC, FLUSH_AFTER_ERROR,
	MASKED_CAS, MASKED_FA, NCASES,
};

static const char *const case_names[NCASES] = {
	"wrong_rkey", "wrong_variant", "no_atomic_access", "misaligned",
	"out_of_bounds", "after_invalidate", "local_length",
	"qp_no_remote_atomic", "flush_after_error", "masked_cas", "masked_fa",
};

static int run_case(struct ib_device *dev, enum ib_poll_context poll,
		    enum err_case c)
{
	int qp_access = ALL_ACCESS, mr_access = ALL_ACCESS, err;
	enum ib_wr_opcode opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
	u32 rkey, len = sizeof(u64);
	struct loop l = {};
	const char *stage;
	struct op op;
	u64 addr;

	if (c == NO_ATOMIC_ACCESS)
		mr_access &= ~IB_ACCESS_REMOTE_ATOMIC;
	if (c == QP_NO_REMOTE_ATOMIC)
		qp_access &= ~IB_ACCESS_REMOTE_ATOMIC;
	stage = loop_setup(&l, dev, dev, poll, qp_access, mr_access, &err);
	if (stage) {
		err = err ? err : -EIO;
		goto out;
	}
	rkey = l.mr->rkey;
	addr = word_addr(&l, 0);
	switch (c) {
	case WRONG_RKEY:
		rkey += 0x100;
		break;
	case WRONG_VARIANT:
		rkey ^= 0x1;
		break;
	case MISALIGNED:
		addr += 4;
		break;
	case OUT_OF_BOUNDS:
		addr = l.mr->iova + PAGE_SIZE;
		break;
	case AFTER_INVALIDATE: {
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = rkey,
		};

		tu_op_init(&op);
		inv.wr_cqe = &op.cqe;
		err = ib_post_send(l.qb, &inv, NULL);
		if (!err)
			err = tu_op_wait(&l, &op);
		if (err)
			goto out;
		break;
	}
	case LOCAL_LENGTH:
		len = 4;
		break;
	case MASKED_CAS:
		opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
		break;
	case MASKED_FA:
		opcode = IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
		break;
	case FLUSH_AFTER_ERROR:
		rkey += 0x100;
		break;
	default:
		break;
	}
	err = tu_post_atomic(&l, &op, opcode, addr, rkey, len, 1, 0, 0, 0);
	if (!err)
		err = tu_op_wait(&l, &op);
	if (c == FLUSH_AFTER_ERROR && err > 0) {
		/* The QP is in ERR now: the next request is flushed. */
		err = tu_post_atomic(&l, &op, opcode, word_addr(&l, 0), l.mr->rkey,
				     sizeof(u64), 1, 0, 0, 0);
		if (!err)
			err = tu_op_wait(&l, &op);
	}
out:
	loop_destroy(&l);
	return err;
}

int run_errors(struct ib_device *dev, enum ib_poll_context poll)
{
	size_t n = 0;
	int c;

	tu_result[0] = 0;
	for (c = 0; c < NCASES; c++)
		n += scnprintf(tu_result + n, RESULT_MAX - n, "%s %d\n", case_names[c],
			       run_case(dev, poll, c));
	return 0;
}
