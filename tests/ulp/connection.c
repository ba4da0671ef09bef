// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_test_ulp: connections. The loopback (or two-device) connection
 * of struct loop: its two sides' PD, CQ and RC QP (the requester's made
 * through mlx_ext's API as "qpmode" says), the FRWR region it targets,
 * and its teardown; posting one verbs atomic and waiting for it; the
 * random numbers of the digests.
 */

#include <linux/delay.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#include "test_ulp.h"

enum qp_mode qp_mode;

static void op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct op *op = container_of(wc->wr_cqe, struct op, cqe);

	op->status = wc->status;
	complete(&op->done);
}

void tu_op_init(struct op *op)
{
	op->cqe.done = op_done;
	init_completion(&op->done);
	op->status = IB_WC_GENERAL_ERR;
}

/* Waits for @op: returns its status, or -ETIMEDOUT. */
int tu_op_wait(struct loop *l, struct op *op)
{
	unsigned long end = jiffies + msecs_to_jiffies(TIMEOUT_MS);

	if (l->poll == IB_POLL_DIRECT) {
		while (!completion_done(&op->done)) {
			if (time_after(jiffies, end))
				return -ETIMEDOUT;
			if (!ib_process_cq_direct(l->cq, 16) &&
			    !ib_process_cq_direct(l->cq_b, 16))
				usleep_range(100, 200);
		}
		return op->status;
	}
	if (!wait_for_completion_timeout(&op->done, msecs_to_jiffies(TIMEOUT_MS)))
		return -ETIMEDOUT;
	return op->status;
}

/* The address of port 1 of @dst as @src reaches it: its LID on
 * InfiniBand; on RoCE (loopback only) its IPv4-mapped GID and MAC.
 */
static int fill_av(struct ib_device *src, struct ib_device *dst,
		   struct rdma_ah_attr *ah)
{
	struct ib_port_attr pa;
	union ib_gid gid;
	int ret, i;

	ret = ib_query_port(dst, 1, &pa);
	if (ret)
		return ret;
	ah->type = rdma_ah_find_type(src, 1);
	rdma_ah_set_port_num(ah, 1);
	if (rdma_protocol_ib(src, 1)) {
		rdma_ah_set_dlid(ah, pa.lid);
		return 0;
	}
	if (src != dst)
		return -EOPNOTSUPP;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		const struct ib_gid_attr *attr = rdma_get_gid_attr(dst, 1, i);
		struct net_device *ndev;

		if (IS_ERR(attr))
			continue;
		if (!ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			rdma_put_gid_attr(attr);
			continue;
		}
		gid = attr->gid;
		rdma_ah_set_grh(ah, &gid, 0, i, 1, 0);
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(attr);
		if (!IS_ERR(ndev))
			memcpy(ah->roce.dmac, ndev->dev_addr, ETH_ALEN);
		rcu_read_unlock();
		rdma_put_gid_attr(attr);
		return IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
	}
	return -ENOENT;
}

/* RESET to INIT; @live: the QP left RESET. */
int qp_to_init(struct ib_qp *qp, int access, bool *live)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				    IB_QP_ACCESS_FLAGS);
	if (!ret)
		*live = true;
	return ret;
}

/* Any state to RESET; @live: the QP is out of RESET no more. */
int qp_to_reset(struct ib_qp *qp, bool *live)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int ret = ib_modify_qp(qp, &a, IB_QP_STATE);

	if (!ret)
		*live = false;
	return ret;
}

int connect_qp(struct ib_qp *qp, struct ib_qp *dest, int access, u8 rd_atomic,
	       bool *live)
{
	struct ib_qp_attr a = {};
	int ret;

	ret = qp_to_init(qp, access, live);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dest->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 12;
	ret = fill_av(qp->device, dest->device, &a.ah_attr);
	if (ret)
		return ret;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
				    IB_QP_DEST_QPN | IB_QP_RQ_PSN |
				    IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atomic;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				     IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
				     IB_QP_MAX_QP_RD_ATOMIC);
}

/*
 * A QP that mlx_ext's API posts on, made as @mode says: by
 * mlx_ext_create_qp(), or by the ULP with mlx_ext's room and attached (in
 * QP_ATTACH_GROUP mode, in the group of @member, or of its own if NULL).
 * On an attach failure *@qp is the ULP's QP, to destroy.
 */
struct mlx_ext_qp *xqp_make(enum qp_mode mode, struct ib_pd *pd,
			    struct ib_qp_init_attr *init, u32 create_flags,
			    struct mlx_ext_qp *member, struct ib_qp **qp,
			    const char **stage)
{
	u32 flags;

	struct mlx_ext_qp *xqp;
	int err;

	*qp = NULL;
	*stage = "qp";
	if (mode == QP_CREATE) {
		init->create_flags = create_flags;
		xqp = mlx_ext_create_qp(pd, init);
		if (!IS_ERR(xqp))
			*qp = mlx_ext_qp_ib(xqp);
		return xqp;
	}
	/* The ULP's own room: half of what mlx_ext_create_qp()'s users ask. */
	init->cap.max_send_wr /= 2;
	err = mlx_ext_init_qp_attr(pd->device, init, init->cap.max_send_wr);
	if (err) {
		*stage = "qpattr";
		return ERR_PTR(err);
	}
	*qp = ib_create_qp(pd, init);
	if (IS_ERR(*qp)) {
		xqp = ERR_CAST(*qp);
		*qp = NULL;
		return xqp;
	}
	*stage = "attach";
	flags = (create_flags & MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY) ?
		MLX_EXT_QP_ATOMIC_BE_REPLY : 0;
	if (mode == QP_ATTACH_GROUP)
		return mlx_ext_attach_qp_group(*qp, flags, member);
	return mlx_ext_attach_qp(*qp, flags);
}

atomic_t api_other;
/* "hold" operations still pending when their QP's end began */
atomic_t api_at_end;

/*
 * Ends what xqp_make() made; @live: @qp left RESET. @pending (if given)
 * counts the API operations whose done has not run: none may be left when
 * mlx_ext_destroy_qp() or mlx_ext_detach_qp() returns (counted in
 * apistats' "other" otherwise).
 */
void xqp_end(enum qp_mode mode, struct mlx_ext_qp *xqp, struct ib_qp *qp,
	     bool live, atomic_t *pending)
{
	if (pending)
		atomic_add(atomic_read(pending), &api_at_end);
	switch (mode) {
	case QP_CREATE:
		/* ERR, drain, every mlx_ext operation finished, destroy. */
		mlx_ext_destroy_qp(xqp);
		if (pending && atomic_read(pending))
			atomic_inc(&api_other);
		return;
	case QP_ATTACH:
	case QP_ATTACH_GROUP:
		/* Every mlx_ext operation finished (the QP still in RTS),
		 * then the ULP's own teardown.
		 */
		mlx_ext_detach_qp(xqp);
		if (pending && atomic_read(pending))
			atomic_inc(&api_other);
		if (live)
			ib_drain_qp(qp);
		break;
	case QP_ATTACH_DRAIN:
		/* The ULP drains first (ERR: the operations are flushed). */
		if (live)
			ib_drain_qp(qp);
		mlx_ext_detach_qp(xqp);
		if (pending && atomic_read(pending))
			atomic_inc(&api_other);
		break;
	}
	ib_destroy_qp(qp);
}

void loop_destroy(struct loop *l)
{
	if (l->xqa) {
		xqp_end(l->mode, l->xqa, l->qa, l->qa_live, &l->pending);
		l->qa = NULL;
	}
	if (l->qa) {
		if (l->qa_live)
			ib_drain_qp(l->qa);
		ib_destroy_qp(l->qa);
	}
	if (l->qb) {
		if (l->qb_live)
			ib_drain_qp(l->qb);
		ib_destroy_qp(l->qb);
	}
	if (l->mr)
		ib_dereg_mr(l->mr);
	if (l->sg_mapped)
		ib_dma_unmap_sg(l->dev_b, &l->sg, 1, DMA_BIDIRECTIONAL);
	if (l->reply_mapped)
		ib_dma_unmap_single(l->dev, l->reply_dma, sizeof(u64), DMA_BIDIRECTIONAL);
	if (l->cq)
		ib_free_cq(l->cq);
	if (l->cq_b)
		ib_free_cq(l->cq_b);
	if (l->pd)
		ib_dealloc_pd(l->pd);
	if (l->pd_b)
		ib_dealloc_pd(l->pd_b);
	free_page((unsigned long)l->target);
	kfree(l->reply);
	memset(l, 0, sizeof(*l));
}

/* Registers the target page with @access through @l->qa (IB_WR_REG_MR). */
static int loop_register(struct loop *l, int access)
{
	struct ib_reg_wr reg = {};
	struct op op;
	int ret, n;

	n = ib_map_mr_sg(l->mr, &l->sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(l->mr, ib_inc_rkey(l->mr->rkey) & 0xff);
	tu_op_init(&op);
	/* Posted on the responder's QP: the MR is in its PD. */
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &op.cqe;
	reg.wr.send_flags = IB_SEND_SIGNALED;
	reg.mr = l->mr;
	reg.key = l->mr->rkey;
	reg.access = access;
	ret = ib_post_send(l->qb, &reg.wr, NULL);
	if (ret)
		return ret;
	ret = tu_op_wait(l, &op);
	/* Timed out: the request still refers to @op, on this stack; drain
	 * (ERR, flush) so that it completes before we return.
	 */
	if (ret == -ETIMEDOUT)
		ib_drain_qp(l->qb);
	return ret ? (ret < 0 ? ret : -EIO) : 0;
}

/* Makes one side: PD, CQ and RC QP on @dev (through the API as qp_mode
 * says when @xqp is given).
 */
static const char *side_setup(struct ib_device *dev, enum ib_poll_context poll,
			      u32 sq_depth, struct ib_pd **pd, struct ib_cq **cq,
			      struct ib_qp **qp, struct mlx_ext_qp **xqp,
			      enum qp_mode mode, u32 api_flags, int *err)
{
	struct ib_qp_init_attr init = {};

	*pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(*pd)) {
		*err = PTR_ERR(*pd);
		*pd = NULL;
		return "pd";
	}
	*cq = ib_alloc_cq(dev, NULL, max(64U, 2 * sq_depth), 0, poll);
	if (IS_ERR(*cq)) {
		*err = PTR_ERR(*cq);
		*cq = NULL;
		return "cq";
	}
	init.send_cq = *cq;
	init.recv_cq = *cq;
	init.cap.max_send_wr = sq_depth;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.qp_type = IB_QPT_RC;
	if (xqp) {
		const char *stage;

		*xqp = xqp_make(mode, *pd, &init, api_flags, NULL, qp, &stage);
		if (IS_ERR(*xqp)) {
			*err = PTR_ERR(*xqp);
			*xqp = NULL;
			return stage;
		}
		return NULL;
	}
	*qp = ib_create_qp(*pd, &init);
	if (IS_ERR(*qp)) {
		*err = PTR_ERR(*qp);
		*qp = NULL;
		return "qp";
	}
	return NULL;
}

/* Sets up requester side A on @dev and responder side B on @dev_b (the
 * same device for a loopback); on error returns the stage that failed.
 */
const char *loop_setup_api(struct loop *l, struct ib_device *dev,
			   struct ib_device *dev_b, enum ib_poll_context poll,
			   int qp_access, int mr_access, bool api,
			   u32 api_flags, int *err)
{
	const char *stage;
	u32 sq = l->sq_depth ? l->sq_depth : 16;
	u8 rd = l->rd_atomic ? l->rd_atomic : 1;

	rd = min3(rd, (u8)min(dev->attrs.max_qp_init_rd_atom, dev->attrs.max_qp_rd_atom),
		  (u8)min(dev_b->attrs.max_qp_init_rd_atom, dev_b->attrs.max_qp_rd_atom));
	rd = max_t(u8, rd, 1);
	if (!l->group)
		l->mode = qp_mode;
	l->dev = dev;
	l->dev_b = dev_b;
	l->poll = poll;
	l->target = (u64 *)get_zeroed_page(GFP_KERNEL);
	l->reply = kzalloc(sizeof(u64), GFP_KERNEL);
	*err = -ENOMEM;
	if (!l->target || !l->reply)
		return "alloc";
	stage = side_setup(dev, poll, sq, &l->pd, &l->cq, &l->qa,
			   api ? &l->xqa : NULL, l->mode, api_flags, err);
	if (stage)
		return stage;
	stage = side_setup(dev_b, poll, 16, &l->pd_b, &l->cq_b, &l->qb, NULL,
			   QP_CREATE, 0, err);
	if (stage)
		return stage;
	if (l->qa_init_only)
		*err = qp_to_init(l->qa, qp_access, &l->qa_live);
	else
		*err = connect_qp(l->qa, l->qb, qp_access, rd, &l->qa_live);
	if (!*err)
		*err = connect_qp(l->qb, l->qa, qp_access, rd, &l->qb_live);
	if (*err)
		return "connect";
	sg_init_one(&l->sg, l->target, PAGE_SIZE);
	if (ib_dma_map_sg(dev_b, &l->sg, 1, DMA_BIDIRECTIONAL) != 1) {
		*err = -ENOMEM;
		return "map";
	}
	l->sg_mapped = true;
	l->reply_dma = ib_dma_map_single(dev, l->reply, sizeof(u64), DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, l->reply_dma)) {
		*err = -ENOMEM;
		return "map";
	}
	l->reply_mapped = true;
	l->mr = ib_alloc_mr(l->pd_b, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(l->mr)) {
		*err = PTR_ERR(l->mr);
		l->mr = NULL;
		return "mr";
	}
	*err = loop_register(l, mr_access);
	if (*err)
		return "reg";
	return NULL;
}

const char *loop_setup(struct loop *l, struct ib_device *dev,
		       struct ib_device *dev_b, enum ib_poll_context poll,
		       int qp_access, int mr_access, int *err)
{
	return loop_setup_api(l, dev, dev_b, poll, qp_access, mr_access, false,
			      0, err);
}

/* Posts one atomic on qa against word @word of the region; waits unless
 * @op is NULL-waited by the caller. Returns the post's errno.
 */
int tu_post_atomic(struct loop *l, struct op *op, enum ib_wr_opcode opcode,
		   u64 addr, u32 rkey, u32 len, u64 a, u64 amask, u64 b, u64 bmask)
{
	struct ib_atomic_wr wr = {};
	struct ib_sge sge = {
		.addr = l->reply_dma,
		.length = len,
		.lkey = l->pd->local_dma_lkey,
	};

	tu_op_init(op);
	wr.wr.opcode = opcode;
	wr.wr.wr_cqe = &op->cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = addr;
	wr.rkey = rkey;
	wr.compare_add = a;
	wr.compare_add_mask = amask;
	wr.swap = b;
	wr.swap_mask = bmask;
	return ib_post_send(l->qa, &wr.wr, NULL);
}

/* splitmix64, as core/src/atomics/selftest.rs. */
u64 mix64(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

u64 next_u64(u64 *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(*state);
}

u64 word_addr(struct loop *l, unsigned int w)
{
	return l->mr->iova + w * sizeof(u64);
}
