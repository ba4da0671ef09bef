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
 *   bench DEV POLL OPS [short]
 *	The benchmark (run_bench): "NAME VALUE UNIT (W WR/op)" lines; with
 *	"short" only masked CAS and FA on a warm word. The sequential figures
 *	are taken in 8 rounds of OPS / 8 operations, each kind in turn.
 *   burst DEV POLL N
 *	N (up to 8) masked fetch-and-adds posted at once on one word from one
 *	QP, 50 times (run_burst): "ok ops O attempts A word W" or "bad ...".
 *   flight DEV POLL DEPTH OPS KIND
 *	DEPTH (up to 256) operations kept in flight on one QP, each reposted
 *	from its done callback, until OPS are done (run_flight): KIND masked
 *	(masked FA of 1 on the low 32-bit field of a word) or std (FA of 1).
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
 *	DEV's PORT since the ULP was loaded, and the last one's up and count.
 *   lastfail
 *	"softirq S": whether the last burst operation that failed was ended
 *	in softirq context (1) or not (0); -1 before any.
 *   syncself DEV POLL
 *	mlx_ext_atomic() called from the done callback of an operation on the
 *	same QP (its send CQ's completion context): "status S inner R", R
 *	what mlx_ext_atomic() returned (-EDEADLK expected), or "hung".
 *   syncwait DEV
 *	One mlx_ext_atomic() (fetch-and-add 1) from the writing task, which a
 *	test may kill meanwhile: "ret R response V"; "syncresult" gives R.
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
 *   qpmode create|attach|attach_drain
 *	How the commands that use the API get their QPs from then on: made by
 *	mlx_ext_create_qp() and ended by mlx_ext_destroy_qp() (create, the
 *	default), or created by the ULP (mlx_ext_init_qp_attr(),
 *	ib_create_qp()) and attached (mlx_ext_attach_qp()), ended by
 *	mlx_ext_detach_qp() and then the ULP's drain and destroy (attach) or
 *	the ULP's drain, the detach, and the destroy (attach_drain).
 *   attachflags DEV
 *	The refusals of mlx_ext_init_qp_attr() and mlx_ext_attach_qp(), one
 *	"CASE RESULT" line each.
 *
 * POLL is the CQ's poll context: direct, softirq, workqueue or unbound.
 * DEV may be NAME|OTHER: the device with either name (one a test renames).
 */

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/inetdevice.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#define NWORDS 8
#define TIMEOUT_MS 5000
#define RESULT_MAX 1024

static DEFINE_MUTEX(ulp_lock);
static char result[RESULT_MAX];

/* What one connection holds: the requester side A (PD, CQ, QP qa, a reply
 * word) and the responder side B (PD, CQ, QP qb, an FRWR region over one
 * page of NWORDS target words), on one device (loopback) or two.
 */
/* How the API's QPs are made and ended ("qpmode"). */
enum qp_mode { QP_CREATE, QP_ATTACH, QP_ATTACH_DRAIN };
static enum qp_mode qp_mode;

struct loop {
	enum qp_mode mode;	/* of xqa and the contenders' QPs */
	struct ib_device *dev;	/* A's */
	struct ib_device *dev_b;
	enum ib_poll_context poll;
	struct ib_pd *pd, *pd_b;
	struct ib_cq *cq, *cq_b;
	struct ib_qp *qa, *qb;
	/* qa's owner when made through mlx_ext's API */
	struct mlx_ext_qp *xqa;
	/* Out of RESET: there is something to drain (RESET -> ERR is not a
	 * transition the IB specification allows).
	 */
	bool qa_live, qb_live;
	struct ib_mr *mr;
	u64 *target;
	u64 *reply;
	struct scatterlist sg;
	bool sg_mapped;
	u64 reply_dma;
	bool reply_mapped;
	/* API operations "hold" posted on xqa whose done has not run */
	atomic_t pending;
	/* Set before loop_setup_api(), or 0 for 16 and 1: qa's send queue
	 * (and the CQs, twice it), and the RDMA reads and atomics each QP may
	 * have outstanding (capped by both devices' attributes).
	 */
	u32 sq_depth;
	u8 rd_atomic;
};

struct op {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct op *op = container_of(wc->wr_cqe, struct op, cqe);

	op->status = wc->status;
	complete(&op->done);
}

static void op_init(struct op *op)
{
	op->cqe.done = op_done;
	init_completion(&op->done);
	op->status = IB_WC_GENERAL_ERR;
}

/* Waits for @op: returns its status, or -ETIMEDOUT. */
static int op_wait(struct loop *l, struct op *op)
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

static int connect_qp(struct ib_qp *qp, struct ib_qp *dest, int access, u8 rd_atomic,
		      bool *live)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				    IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	*live = true;
	memset(&a, 0, sizeof(a));
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
 * mlx_ext_create_qp(), or by the ULP with mlx_ext's room and attached. On
 * an attach failure *@qp is the ULP's QP, to destroy.
 */
static struct mlx_ext_qp *xqp_make(enum qp_mode mode, struct ib_pd *pd,
				   struct ib_qp_init_attr *init, u32 create_flags,
				   struct ib_qp **qp, const char **stage)
{
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
	return mlx_ext_attach_qp(*qp, (create_flags & MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY) ?
				 MLX_EXT_QP_ATOMIC_BE_REPLY : 0);
}

static atomic_t api_other;
/* "hold" operations still pending when their QP's end began */
static atomic_t api_at_end;

/*
 * Ends what xqp_make() made; @live: @qp left RESET. @pending (if given)
 * counts the API operations whose done has not run: none may be left when
 * mlx_ext_destroy_qp() or mlx_ext_detach_qp() returns (counted in
 * apistats' "other" otherwise).
 */
static void xqp_end(enum qp_mode mode, struct mlx_ext_qp *xqp, struct ib_qp *qp,
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

static void loop_destroy(struct loop *l)
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
	op_init(&op);
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
	ret = op_wait(l, &op);
	/* Timed out: the request still refers to @op, on this stack; drain
	 * (ERR, flush) so that it completes before we return.
	 */
	if (ret == -ETIMEDOUT)
		ib_drain_qp(l->qb);
	return ret ? (ret < 0 ? ret : -EIO) : 0;
}

#define ALL_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/* Makes one side: PD, CQ and RC QP on @dev (through the API as qp_mode
 * says when @xqp is given).
 */
static const char *side_setup(struct ib_device *dev, enum ib_poll_context poll,
			      u32 sq_depth, struct ib_pd **pd, struct ib_cq **cq,
			      struct ib_qp **qp, struct mlx_ext_qp **xqp,
			      u32 api_flags, int *err)
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

		*xqp = xqp_make(qp_mode, *pd, &init, api_flags, qp, &stage);
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
static const char *loop_setup_api(struct loop *l, struct ib_device *dev,
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
			   api ? &l->xqa : NULL, api_flags, err);
	if (stage)
		return stage;
	stage = side_setup(dev_b, poll, 16, &l->pd_b, &l->cq_b, &l->qb, NULL, 0, err);
	if (stage)
		return stage;
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

static const char *loop_setup(struct loop *l, struct ib_device *dev,
			      struct ib_device *dev_b, enum ib_poll_context poll,
			      int qp_access, int mr_access, int *err)
{
	return loop_setup_api(l, dev, dev_b, poll, qp_access, mr_access, false,
			      0, err);
}

/* Posts one atomic on qa against word @word of the region; waits unless
 * @op is NULL-waited by the caller. Returns the post's errno.
 */
static int post_atomic(struct loop *l, struct op *op, enum ib_wr_opcode opcode,
		       u64 addr, u32 rkey, u32 len, u64 a, u64 amask, u64 b, u64 bmask)
{
	struct ib_atomic_wr wr = {};
	struct ib_sge sge = {
		.addr = l->reply_dma,
		.length = len,
		.lkey = l->pd->local_dma_lkey,
	};

	op_init(op);
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
static u64 mix64(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u64 next_u64(u64 *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(*state);
}

static u64 word_addr(struct loop *l, unsigned int w)
{
	return l->mr->iova + w * sizeof(u64);
}

static int run_atomics(struct ib_device *dev, struct ib_device *dev_b,
		       enum ib_poll_context poll, u64 seed, u32 count, bool masked,
		       bool be)
{
	struct loop l = {};
	const char *stage;
	u64 rng = seed, digest = seed;
	struct op op;
	int err = 0;
	u32 i, w;

	stage = loop_setup(&l, dev, dev_b, poll, ALL_ACCESS, ALL_ACCESS, &err);
	if (stage)
		goto out;
	for (w = 0; w < NWORDS; w++)
		WRITE_ONCE(l.target[w], next_u64(&rng));
	for (i = 0; i < count; i++) {
		u64 r = next_u64(&rng), a = next_u64(&rng), b = next_u64(&rng);
		u64 c = next_u64(&rng), d = next_u64(&rng), old;
		bool first = (r >> 8) & 1, take_mem = (r >> 9) & 1;
		enum ib_wr_opcode opcode;

		w = r % NWORDS;
		if (take_mem)
			a = READ_ONCE(l.target[w]);
		if (masked)
			opcode = first ? IB_WR_MASKED_ATOMIC_CMP_AND_SWP :
					 IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
		else
			opcode = first ? IB_WR_ATOMIC_CMP_AND_SWP :
					 IB_WR_ATOMIC_FETCH_AND_ADD;
		/* Masked FA: compare_add = add, compare_add_mask = boundary. */
		err = post_atomic(&l, &op, opcode, word_addr(&l, w), l.mr->rkey,
				  sizeof(u64), a, c, b, d);
		if (err) {
			stage = "post";
			goto out;
		}
		err = op_wait(&l, &op);
		if (err) {
			stage = "op";
			goto out;
		}
		old = READ_ONCE(*l.reply);
		if (be)
			old = be64_to_cpu((__force __be64)old);
		digest = mix64(digest ^ old);
	}
	for (w = 0; w < NWORDS; w++)
		digest = mix64(digest ^ READ_ONCE(l.target[w]));
out:
	loop_destroy(&l);
	if (stage)
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
	else
		snprintf(result, RESULT_MAX, "ok %016llx\n", digest);
	return 0;
}

/* The kinds of run_api: as "atomics" std and masked, or 4-byte operations. */
enum api_kind { API_STD, API_MASKED, API_NARROW };

/* The bit shift of 4-byte half @h (at byte offset 4 * @h) of a word. */
static unsigned int half_shift(unsigned int h)
{
	return (IS_ENABLED(CONFIG_CPU_BIG_ENDIAN) ? 1 - h : h) * 32;
}

/*
 * The same random operations as run_atomics, through mlx_ext's API; with
 * API_NARROW, 4-byte operations (standard or masked, by bit 11 of each
 * draw) on the half of the word that bit 10 picks, as
 * core/examples/ulp_digest.rs computes them.
 */
static int run_api(struct ib_device *dev, struct ib_device *dev_b,
		   enum ib_poll_context poll, u64 seed, u32 count,
		   enum api_kind kind, u32 flags)
{
	struct loop l = {};
	const char *stage;
	u64 rng = seed, digest = seed, attempts = 0;
	int err = 0;
	u32 i, w;

	if (poll == IB_POLL_DIRECT) {
		snprintf(result, RESULT_MAX, "err poll %d\n", -EINVAL);
		return 0;
	}
	stage = loop_setup_api(&l, dev, dev_b, poll, ALL_ACCESS, ALL_ACCESS, true,
			       flags, &err);
	if (stage)
		goto out;
	for (w = 0; w < NWORDS; w++)
		WRITE_ONCE(l.target[w], next_u64(&rng));
	for (i = 0; i < count; i++) {
		u64 r = next_u64(&rng), a = next_u64(&rng), b = next_u64(&rng);
		u64 c = next_u64(&rng), d = next_u64(&rng);
		bool first = (r >> 8) & 1, take_mem = (r >> 9) & 1;
		bool masked = kind == API_MASKED || (kind == API_NARROW && ((r >> 11) & 1));
		unsigned int h = (r >> 10) & 1;
		struct mlx_ext_atomic op = {};

		w = r % NWORDS;
		if (kind == API_NARROW) {
			a = (u32)a;
			b = (u32)b;
			c = (u32)c;
			d = (u32)d;
		}
		if (take_mem)
			a = kind == API_NARROW ?
			    (READ_ONCE(l.target[w]) >> half_shift(h)) & U32_MAX :
			    READ_ONCE(l.target[w]);
		if (masked)
			op.opcode = first ? MLX_EXT_MASKED_CMP_SWP :
					    MLX_EXT_MASKED_FETCH_ADD;
		else
			op.opcode = first ? MLX_EXT_ATOMIC_CMP_SWP :
					    MLX_EXT_ATOMIC_FETCH_ADD;
		op.size = kind == API_NARROW ? 4 : 8;
		op.remote_addr = word_addr(&l, w) + (kind == API_NARROW ? 4 * h : 0);
		op.rkey = l.mr->rkey;
		op.compare_add = a;
		op.compare_add_mask = c;
		op.swap = b;
		op.swap_mask = d;
		err = mlx_ext_atomic(l.xqa, &op);
		if (err) {
			stage = "op";
			goto out;
		}
		/* The raw value is the adapter's bytes: big-endian exactly
		 * when the QP accepted big-endian replies; for a 4-byte
		 * operation, of its whole word, whose half is the response.
		 */
		if (kind == API_NARROW ?
		    ((((flags & MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY) ?
		       be64_to_cpu((__force __be64)op.raw_response) :
		       op.raw_response) >> half_shift(h)) & U32_MAX) != op.response ||
		    op.response > U32_MAX :
		    op.raw_response != ((flags & MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY) ?
					(__force u64)cpu_to_be64(op.response) :
					op.response)) {
			stage = "raw";
			err = -EIO;
			goto out;
		}
		attempts += op.attempts;
		digest = mix64(digest ^ op.response);
	}
	for (w = 0; w < NWORDS; w++)
		digest = mix64(digest ^ READ_ONCE(l.target[w]));
out:
	loop_destroy(&l);
	if (stage)
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
	else
		snprintf(result, RESULT_MAX, "ok %016llx attempts %llu\n", digest,
			 attempts);
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
static int run_abi(struct ib_device *dev)
{
	const u32 v = MLX_EXT_API_VERSION;
	const u32 major = MLX_EXT_API_VERSION_MAJOR << 16;
	const size_t sz = sizeof(struct mlx_ext_atomic);
	struct mlx_ext_caps caps;
	size_t n = 0;

#define CASE(name, expr) \
	(n += scnprintf(result + n, RESULT_MAX - n, "%s %d ", name, (expr)))
	result[0] = 0;
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

static int run_apiflags(struct ib_device *dev)
{
	struct mlx_ext_caps caps;
	size_t n = 0;
	int ret;

#define CASE(name, expr) \
	(n += scnprintf(result + n, RESULT_MAX - n, "%s %d\n", name, (expr)))
	result[0] = 0;
	ret = mlx_ext_query_caps(dev, &caps);
	CASE("query", ret);
	if (!ret)
		n += scnprintf(result + n, RESULT_MAX - n,
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
 */
static int attach_one(struct ib_device *dev, enum ib_qp_type type,
		      const char *cq_kind, enum ib_poll_context poll, u32 flags,
		      bool destroy)
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
	xqp = mlx_ext_attach_qp(qp, flags);
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

static int run_attachflags(struct ib_device *dev)
{
	struct ib_qp_init_attr init = { .qp_type = IB_QPT_RC };
	size_t n = 0;
	int ret;

#define CASE(name, expr) \
	(n += scnprintf(result + n, RESULT_MAX - n, "%s %d\n", name, (expr)))
	result[0] = 0;
	init.cap.max_send_wr = 8;
	ret = mlx_ext_init_qp_attr(dev, &init, 4);
	n += scnprintf(result + n, RESULT_MAX - n, "init_adds %d %u %u\n", ret,
		       init.cap.max_send_wr, init.cap.max_send_sge);
	init.cap.max_send_wr = U32_MAX - 1;
	CASE("init_overflow", mlx_ext_init_qp_attr(dev, &init, 2));
	init.qp_type = IB_QPT_UD;
	CASE("init_not_rc", mlx_ext_init_qp_attr(dev, &init, 2));
	CASE("init_null", mlx_ext_init_qp_attr(dev, NULL, 2));
	CASE("attach_null", PTR_ERR_OR_ZERO(mlx_ext_attach_qp(NULL, 0)));
	CASE("attach", attach_one(dev, IB_QPT_RC, "alloc", IB_POLL_SOFTIRQ, 0,
				  false));
	CASE("attach_be", attach_one(dev, IB_QPT_RC, "alloc", IB_POLL_SOFTIRQ,
				     MLX_EXT_QP_ATOMIC_BE_REPLY, false));
	CASE("attach_unknown_flag", attach_one(dev, IB_QPT_RC, "alloc",
					       IB_POLL_SOFTIRQ, BIT(5), false));
	CASE("attach_create_flag", attach_one(dev, IB_QPT_RC, "alloc",
					      IB_POLL_SOFTIRQ,
					      MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY,
					      false));
	CASE("attach_direct_cq", attach_one(dev, IB_QPT_RC, "alloc",
					    IB_POLL_DIRECT, 0, false));
	CASE("attach_created_cq", attach_one(dev, IB_QPT_RC, "create",
					     IB_POLL_SOFTIRQ, 0, false));
	CASE("attach_uc", attach_one(dev, IB_QPT_UC, "alloc", IB_POLL_SOFTIRQ, 0,
				     false));
	/* The handle given to mlx_ext_destroy_qp(): detached, QP left. */
	CASE("destroy_attached", attach_one(dev, IB_QPT_RC, "alloc",
					    IB_POLL_SOFTIRQ, 0, true));
#undef CASE
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

/*
 * Contention: NT kernel threads, each with its own requester QP (made by
 * mlx_ext) connected to its own responder QP, all on one word of one
 * region. Thread t owns field t (bits 12t..12t+11) and adds to it with
 * masked fetch-and-add or masked compare-and-swap; every thread also adds
 * to the top field (bits 48..63) with plain fetch-and-add and plain
 * compare-and-swap. Since only t writes field t, every response t gets
 * must show field t equal to t's own count (no lost update, no torn or
 * invented value), and every field only grows, so the fields t sees never
 * go back. The final word must hold every thread's count and the top
 * field every plain add and successful plain compare-and-swap.
 */
#define NT 4
#define FIELD_BITS 12
#define FIELD(t) (0xfffULL << (FIELD_BITS * (t)))
#define TOP_SHIFT 48
#define BOUNDARY ((1ULL << 11) | (1ULL << 23) | (1ULL << 35) | (1ULL << 47) | \
		  (1ULL << 63))

struct contender {
	struct loop *l;
	struct mlx_ext_qp *xq;
	struct ib_qp *qa, *qb;
	bool qa_live, qb_live;
	unsigned int t;
	u32 ops;
	u32 mine;		/* ops on field t */
	u32 top;		/* plain FA + successful plain CAS */
	u64 attempts;
	u32 max_attempts;
	int err;		/* 0, an errno, or 1 for a wrong response */
	u32 opcode;		/* bench_thread's operation */
	bool shared;		/* bench_thread uses thread 0's QP */
	char what[96];
	struct completion done;
};

static u32 field_of(u64 v, unsigned int f)
{
	return f == NT ? v >> TOP_SHIFT : (v >> (FIELD_BITS * f)) & 0xfff;
}

static int contender_run(void *arg)
{
	struct contender *c = arg;
	u32 seen[NT + 1] = {};
	u64 last = 0;
	u32 k, f;

	for (k = 0; k < c->ops && !c->err; k++) {
		struct mlx_ext_atomic op = {
			.size = 8,
			.remote_addr = word_addr(c->l, 0),
			.rkey = c->l->mr->rkey,
		};
		unsigned int kind = k % 8;
		int ret;

		if (kind < 5) {
			op.opcode = MLX_EXT_MASKED_FETCH_ADD;
			op.compare_add = 1ULL << (FIELD_BITS * c->t);
			op.compare_add_mask = BOUNDARY;
		} else if (kind == 5) {
			op.opcode = MLX_EXT_MASKED_CMP_SWP;
			op.compare_add = (u64)c->mine << (FIELD_BITS * c->t);
			op.compare_add_mask = FIELD(c->t);
			op.swap = (u64)(c->mine + 1) << (FIELD_BITS * c->t);
			op.swap_mask = FIELD(c->t);
		} else if (kind == 6) {
			op.opcode = MLX_EXT_ATOMIC_FETCH_ADD;
			op.compare_add = 1ULL << TOP_SHIFT;
		} else {
			op.opcode = MLX_EXT_ATOMIC_CMP_SWP;
			op.compare_add = last;
			op.swap = last + (1ULL << TOP_SHIFT);
		}
		ret = mlx_ext_atomic(c->xq, &op);
		if (ret) {
			c->err = ret;
			snprintf(c->what, sizeof(c->what), "op %u: %d", k, ret);
			break;
		}
		c->attempts += op.attempts;
		c->max_attempts = max(c->max_attempts, op.attempts);
		if (field_of(op.response, c->t) != (c->mine & 0xfff)) {
			c->err = 1;
			snprintf(c->what, sizeof(c->what),
				 "op %u: own field %u, expected %u (response %016llx)",
				 k, field_of(op.response, c->t), c->mine & 0xfff,
				 op.response);
			break;
		}
		for (f = 0; f <= NT; f++) {
			if (field_of(op.response, f) < seen[f]) {
				c->err = 1;
				snprintf(c->what, sizeof(c->what),
					 "op %u: field %u went back from %u to %u",
					 k, f, seen[f], field_of(op.response, f));
				break;
			}
			seen[f] = field_of(op.response, f);
		}
		if (kind <= 5)
			c->mine++;
		else if (kind == 6 || op.response == last)
			c->top++;
		last = op.response;
	}
	kthread_complete_and_exit(&c->done, 0);
}

/* A loopback with NT requester QPs (mlx_ext's) on one region. */
struct contend_set {
	struct loop l;
	struct contender c[NT];
};

static const char *contend_setup(struct contend_set *cs, struct ib_device *dev,
				 enum ib_poll_context poll, u32 ops, int *err)
{
	struct loop *l = &cs->l;
	const char *stage;
	unsigned int t;

	stage = loop_setup_api(l, dev, dev, poll, ALL_ACCESS, ALL_ACCESS, true, 0,
			       err);
	if (stage)
		return stage;
	/* Thread 0 uses the loop's own pair; the others get one each. */
	for (t = 0; t < NT; t++) {
		struct contender *ct = &cs->c[t];
		struct ib_qp_init_attr init = {
			.cap = { .max_send_wr = 16, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.sq_sig_type = IB_SIGNAL_REQ_WR,
			.qp_type = IB_QPT_RC,
		};
		struct mlx_ext_qp *xq;
		struct ib_qp *qb;

		ct->l = l;
		ct->t = t;
		ct->ops = ops;
		init_completion(&ct->done);
		if (!t) {
			ct->xq = l->xqa;
			continue;
		}
		init.send_cq = l->cq;
		init.recv_cq = l->cq;
		xq = xqp_make(l->mode, l->pd, &init, 0, &ct->qa, &stage);
		if (IS_ERR(xq)) {
			*err = PTR_ERR(xq);
			return stage;
		}
		ct->xq = xq;
		init.cap.max_send_wr = 16;
		init.send_cq = l->cq_b;
		init.recv_cq = l->cq_b;
		qb = ib_create_qp(l->pd_b, &init);
		if (IS_ERR(qb)) {
			*err = PTR_ERR(qb);
			return "qp";
		}
		ct->qb = qb;
		*err = connect_qp(mlx_ext_qp_ib(ct->xq), ct->qb, ALL_ACCESS, 1,
				  &ct->qa_live);
		if (!*err)
			*err = connect_qp(ct->qb, mlx_ext_qp_ib(ct->xq), ALL_ACCESS, 1,
					  &ct->qb_live);
		if (*err)
			return "connect";
	}
	return NULL;
}

static void contend_teardown(struct contend_set *cs)
{
	unsigned int t;

	for (t = 1; t < NT; t++) {
		struct contender *ct = &cs->c[t];

		if (ct->xq)
			xqp_end(cs->l.mode, ct->xq, ct->qa, ct->qa_live, NULL);
		else if (ct->qa)
			ib_destroy_qp(ct->qa);
		if (ct->qb) {
			if (ct->qb_live)
				ib_drain_qp(ct->qb);
			ib_destroy_qp(ct->qb);
		}
	}
	loop_destroy(&cs->l);
}

/* Runs @fn on each contender in its own thread and waits for them all. */
static int contend_go(struct contend_set *cs, int (*fn)(void *))
{
	unsigned int t, started = 0;
	int err = 0;

	for (t = 0; t < NT; t++) {
		struct task_struct *k = kthread_run(fn, &cs->c[t],
						    "mlx_ext_contend%u", t);

		if (IS_ERR(k)) {
			err = PTR_ERR(k);
			break;
		}
		started++;
	}
	for (t = 0; t < started; t++)
		wait_for_completion(&cs->c[t].done);
	return err;
}

static int run_contend(struct ib_device *dev, enum ib_poll_context poll, u32 ops)
{
	struct contend_set *cs;
	struct contender *c;
	const char *stage;
	u64 attempts = 0, word;
	u32 max_attempts = 0, top = 0;
	unsigned int t;
	int err = 0;

	if (ops > 4000 || poll == IB_POLL_DIRECT)
		return -EINVAL;
	cs = kzalloc(sizeof(*cs), GFP_KERNEL);
	if (!cs)
		return -ENOMEM;
	c = cs->c;
	stage = contend_setup(cs, dev, poll, ops, &err);
	if (stage)
		goto out;
	WRITE_ONCE(cs->l.target[0], 0);
	err = contend_go(cs, contender_run);
	if (err) {
		stage = "thread";
		goto out;
	}
	word = READ_ONCE(cs->l.target[0]);
	for (t = 0; t < NT; t++) {
		if (c[t].err) {
			stage = "thread";
			err = c[t].err;
			snprintf(result, RESULT_MAX, "bad %u %s\n", t, c[t].what);
			goto out;
		}
		if (field_of(word, t) != (c[t].mine & 0xfff)) {
			stage = "thread";
			err = 1;
			snprintf(result, RESULT_MAX, "bad %u final field %u, expected %u\n",
				 t, field_of(word, t), c[t].mine & 0xfff);
			goto out;
		}
		attempts += c[t].attempts;
		max_attempts = max(max_attempts, c[t].max_attempts);
		top += c[t].top;
	}
	if (field_of(word, NT) != (top & 0xffff)) {
		stage = "thread";
		err = 1;
		snprintf(result, RESULT_MAX, "bad top final %u, expected %u\n",
			 field_of(word, NT), top & 0xffff);
		goto out;
	}
	snprintf(result, RESULT_MAX,
		 "ok ops %u attempts %llu max %u word %016llx\n", NT * ops,
		 attempts, max_attempts, word);
out:
	contend_teardown(cs);
	kfree(cs);
	if (stage && strncmp(result, "bad ", 4))
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/*
 * The benchmark (tests/vm/bench.sh, make bench): ns per operation through
 * the API, sequential on one QP, and throughput of NT threads with a QP
 * each on one word.
 */
#define WORDS_PER_PAGE (PAGE_SIZE / sizeof(u64))

static void bench_fill(struct mlx_ext_atomic *op, u32 opcode, u64 addr, u32 rkey,
		       u64 last)
{
	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->size = 8;
	op->remote_addr = addr;
	op->rkey = rkey;
	switch (opcode) {
	case MLX_EXT_ATOMIC_CMP_SWP:
		op->compare_add = last;
		op->swap = last + 1;
		break;
	case MLX_EXT_ATOMIC_FETCH_ADD:
		op->compare_add = 1;
		break;
	case MLX_EXT_MASKED_CMP_SWP:
		/* Compare and swap the low byte: it takes place. */
		op->compare_add = last;
		op->compare_add_mask = 0xff;
		op->swap = last + 1;
		op->swap_mask = 0xff;
		break;
	default:
		op->compare_add = 0x0101010101010101ULL;
		op->compare_add_mask = 0x8080808080808080ULL;
		break;
	}
}

/*
 * @ops sequential operations of @opcode; @cold: each on another word of the
 * page (512 words, more than the guess cache holds, each holding a value
 * the guess of zero misses), else all on word 0. Returns ns per operation,
 * or a negative errno; *@wrs gets the work requests they took.
 */
static s64 bench_seq(struct loop *l, u32 opcode, u32 ops, bool cold, u64 *wrs)
{
	u64 last = 0, t0;
	u32 i;
	int ret;

	*wrs = 0;
	t0 = ktime_get_ns();
	for (i = 0; i < ops; i++) {
		u32 w = cold ? i % WORDS_PER_PAGE : 0;
		struct mlx_ext_atomic op;

		bench_fill(&op, opcode, word_addr(l, w), l->mr->rkey, last);
		ret = mlx_ext_atomic(l->xqa, &op);
		if (ret)
			return ret;
		last = op.response;
		*wrs += op.attempts;
	}
	return div_u64(ktime_get_ns() - t0, ops);
}

/* The same with plain verbs, no mlx_ext: CAS on word 0. */
static s64 bench_verbs_cas(struct loop *l, u32 ops)
{
	u64 t0 = ktime_get_ns(), last = 0;
	struct op op;
	u32 i;
	int ret;

	for (i = 0; i < ops; i++) {
		ret = post_atomic(l, &op, IB_WR_ATOMIC_CMP_AND_SWP, word_addr(l, 0),
				  l->mr->rkey, sizeof(u64), last, 0, last + 1, 0);
		if (!ret)
			ret = op_wait(l, &op);
		if (ret)
			return ret < 0 ? ret : -EIO;
		last = READ_ONCE(*l->reply);
	}
	return div_u64(ktime_get_ns() - t0, ops);
}

static int bench_thread(void *arg)
{
	struct contender *c = arg;
	u32 k;

	for (k = 0; k < c->ops && !c->err; k++) {
		struct mlx_ext_atomic op;

		bench_fill(&op, c->opcode, word_addr(c->l, 0), c->l->mr->rkey, 0);
		c->err = mlx_ext_atomic(c->shared ? c->l->xqa : c->xq, &op);
		c->attempts += op.attempts;
	}
	kthread_complete_and_exit(&c->done, 0);
}

/*
 * NT threads, @ops each, of @opcode on word 0, each on its own QP or all on
 * one (@shared): total operations per second.
 */
static s64 bench_4way(struct contend_set *cs, u32 opcode, u32 ops, bool shared,
		      u64 *wrs)
{
	unsigned int t;
	u64 t0, ns;
	int err;

	*wrs = 0;
	for (t = 0; t < NT; t++) {
		cs->c[t].opcode = opcode;
		cs->c[t].shared = shared;
		cs->c[t].ops = ops;
		cs->c[t].err = 0;
		cs->c[t].attempts = 0;
		reinit_completion(&cs->c[t].done);
	}
	t0 = ktime_get_ns();
	err = contend_go(cs, bench_thread);
	ns = ktime_get_ns() - t0;
	if (err)
		return err;
	for (t = 0; t < NT; t++) {
		if (cs->c[t].err)
			return cs->c[t].err;
		*wrs += cs->c[t].attempts;
	}
	return div64_u64((u64)NT * ops * NSEC_PER_SEC, max_t(u64, ns, 1));
}

static size_t bench_line(size_t n, const char *name, s64 v, const char *unit,
			 u64 wrs, u32 ops)
{
	if (v < 0)
		return n + scnprintf(result + n, RESULT_MAX - n, "%s error %lld\n",
				     name, v);
	return n + scnprintf(result + n, RESULT_MAX - n,
			     "%s %lld %s (%llu.%02llu WR/op)\n", name, v, unit,
			     div_u64(wrs, ops), div_u64(wrs * 100, ops) % 100);
}

#define BENCH_ROUNDS 8

static const struct bench_kind {
	const char *name;
	u32 opcode;
	bool cold, verbs, short_run;
} kinds[] = {
	{ "verbs_cas", MLX_EXT_ATOMIC_CMP_SWP, false, true, false },
	{ "cas", MLX_EXT_ATOMIC_CMP_SWP, false, false, false },
	{ "masked_cas_warm", MLX_EXT_MASKED_CMP_SWP, false, false, true },
	{ "masked_fa_warm", MLX_EXT_MASKED_FETCH_ADD, false, false, true },
	{ "masked_cas_cold", MLX_EXT_MASKED_CMP_SWP, true, false, false },
	{ "masked_fa_cold", MLX_EXT_MASKED_FETCH_ADD, true, false, false },
};

static int run_bench(struct ib_device *dev, enum ib_poll_context poll, u32 ops,
		     bool full)
{
	s64 ns[ARRAY_SIZE(kinds)] = {};
	u64 wr[ARRAY_SIZE(kinds)] = {};
	u32 per_round = ops / BENCH_ROUNDS;
	struct contend_set *cs;
	struct loop *l;
	const char *stage;
	unsigned int r, k;
	size_t n = 0;
	u64 wrs;
	s64 v;
	int err = 0;
	u32 w;

	if (per_round == 0 || ops > 100000 || poll == IB_POLL_DIRECT)
		return -EINVAL;
	cs = kzalloc(sizeof(*cs), GFP_KERNEL);
	if (!cs)
		return -ENOMEM;
	l = &cs->l;
	result[0] = 0;
	stage = contend_setup(cs, dev, poll, ops, &err);
	if (stage) {
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
		goto out;
	}
	for (w = 0; w < WORDS_PER_PAGE; w++)
		WRITE_ONCE(l->target[w], 0x5555555555555555ULL + w);
	/*
	 * The sequential figures are taken in rounds, each kind in turn, so
	 * that a drift of the machine's speed (an emulated CPU's is large)
	 * weighs on all of them alike.
	 */
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			if (!full && !kinds[k].short_run)
				continue;
			if (kinds[k].verbs) {
				v = bench_verbs_cas(l, per_round);
				wrs = per_round;
			} else {
				v = bench_seq(l, kinds[k].opcode, per_round,
					      kinds[k].cold, &wrs);
			}
			if (v < 0) {
				ns[k] = v;
				continue;
			}
			if (ns[k] >= 0)
				ns[k] += v * per_round;
			wr[k] += wrs;
		}
	}
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		if (!full && !kinds[k].short_run)
			continue;
		n = bench_line(n, kinds[k].name,
			       ns[k] < 0 ? ns[k] : div_u64(ns[k], per_round * BENCH_ROUNDS),
			       "ns/op", wr[k], per_round * BENCH_ROUNDS);
	}
	if (!full)
		goto out;
	v = bench_4way(cs, MLX_EXT_ATOMIC_FETCH_ADD, ops / NT, false, &wrs);
	n = bench_line(n, "fa_4way", v, "ops/s", wrs, ops / NT * NT);
	v = bench_4way(cs, MLX_EXT_MASKED_FETCH_ADD, ops / NT, false, &wrs);
	n = bench_line(n, "masked_fa_4way", v, "ops/s", wrs, ops / NT * NT);
	v = bench_4way(cs, MLX_EXT_ATOMIC_FETCH_ADD, ops / NT, true, &wrs);
	n = bench_line(n, "fa_4way_1qp", v, "ops/s", wrs, ops / NT * NT);
	v = bench_4way(cs, MLX_EXT_MASKED_FETCH_ADD, ops / NT, true, &wrs);
	n = bench_line(n, "masked_fa_4way_1qp", v, "ops/s", wrs, ops / NT * NT);
out:
	contend_teardown(cs);
	kfree(cs);
	return 0;
}

/*
 * Combining: N (up to 8) masked fetch-and-adds posted at once on one word
 * from one QP, op i adding 1 to byte-wide field i, for ROUNDS rounds. Each
 * response must show field i as the round number (i's own count), and the
 * responses of a round must agree on one order: of two ops i and j,
 * exactly one saw the other's add.
 */
#define BURST_ROUNDS 50

struct burst {
	struct mlx_ext_atomic op[8];
	atomic_t left;
	struct completion all;
};

/* Where the last operation that failed was ended: for "lastfail". */
static atomic_t lastfail_softirq = ATOMIC_INIT(-1);

static void burst_done(struct mlx_ext_atomic *op)
{
	struct burst *b = op->context;

	if (op->status)
		atomic_set(&lastfail_softirq, !!in_serving_softirq());

	if (atomic_dec_and_test(&b->left))
		complete(&b->all);
}

static int run_burst(struct ib_device *dev, enum ib_poll_context poll, u32 n)
{
	struct loop l = {};
	struct burst *b;
	const char *stage;
	u64 attempts = 0;
	u32 r, i, j;
	int err = 0;

	if (!n || n > 8 || poll == IB_POLL_DIRECT)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	stage = loop_setup_api(&l, dev, dev, poll, ALL_ACCESS, ALL_ACCESS, true, 0,
			       &err);
	if (stage)
		goto out;
	WRITE_ONCE(l.target[0], 0);
	for (r = 0; r < BURST_ROUNDS; r++) {
		atomic_set(&b->left, n);
		init_completion(&b->all);
		for (i = 0; i < n; i++) {
			struct mlx_ext_atomic *op = &b->op[i];

			memset(op, 0, sizeof(*op));
			op->opcode = MLX_EXT_MASKED_FETCH_ADD;
			op->size = 8;
			op->remote_addr = word_addr(&l, 0);
			op->rkey = l.mr->rkey;
			op->compare_add = 1ULL << (8 * i);
			op->compare_add_mask = 0x8080808080808080ULL;
			op->done = burst_done;
			op->context = b;
		}
		for (i = 0; i < n; i++) {
			err = mlx_ext_post_atomic(l.xqa, &b->op[i], GFP_KERNEL);
			if (err) {
				/* Those posted still complete: wait for them. */
				if (atomic_sub_and_test(n - i, &b->left))
					complete(&b->all);
				wait_for_completion(&b->all);
				stage = "post";
				goto out;
			}
		}
		wait_for_completion(&b->all);
		for (i = 0; i < n; i++) {
			u64 resp = b->op[i].response;

			attempts += b->op[i].attempts;
			if (b->op[i].status) {
				stage = "op";
				err = b->op[i].status;
				goto out;
			}
			if (((resp >> (8 * i)) & 0xff) != r) {
				snprintf(result, RESULT_MAX,
					 "bad round %u op %u: own field %llu (response %016llx)\n",
					 r, i, (resp >> (8 * i)) & 0xff, resp);
				stage = "bad";
				goto out;
			}
			for (j = 0; j < i; j++) {
				bool i_saw_j = ((resp >> (8 * j)) & 0xff) == r + 1;
				bool j_saw_i = ((b->op[j].response >> (8 * i)) & 0xff) == r + 1;

				if (i_saw_j == j_saw_i) {
					snprintf(result, RESULT_MAX,
						 "bad round %u: ops %u and %u %s\n", r, i, j,
						 i_saw_j ? "saw each other" : "saw neither");
					stage = "bad";
					goto out;
				}
			}
		}
	}
	for (i = 0; i < n; i++) {
		if (((READ_ONCE(l.target[0]) >> (8 * i)) & 0xff) != BURST_ROUNDS) {
			snprintf(result, RESULT_MAX, "bad final field %u: %016llx\n", i,
				 READ_ONCE(l.target[0]));
			stage = "bad";
			goto out;
		}
	}
	snprintf(result, RESULT_MAX, "ok ops %u attempts %llu word %016llx\n",
		 n * BURST_ROUNDS, attempts, READ_ONCE(l.target[0]));
out:
	loop_destroy(&l);
	kfree(b);
	if (stage && strcmp(stage, "bad"))
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/*
 * flight: @depth operations kept in flight on one QP, each reposted from
 * its done callback (GFP_ATOMIC there) until @ops have been posted: the
 * asynchronous path, and the request pool's growth and reuse. Masked: a
 * masked fetch-and-add of 1 on the low 32-bit field of word 0 (a boundary
 * at bit 31); std: a fetch-and-add of 1. Each QP may have up to @depth
 * atomics outstanding at the responder (capped by the devices). Afterwards
 * the field holds @ops and the rest of the word is untouched.
 */
#define FLIGHT_MAX 256

struct flight {
	struct loop l;
	struct mlx_ext_atomic op[FLIGHT_MAX];
	bool masked;
	atomic_t to_post;	/* posts left */
	atomic_t inflight;	/* posted and not done, plus the starter's */
	atomic_t ok;
	atomic_t err;		/* the first error */
	atomic64_t attempts;
	struct completion all;
};

static void flight_fill(struct flight *f, struct mlx_ext_atomic *op);

static void flight_put(struct flight *f)
{
	if (atomic_dec_and_test(&f->inflight))
		complete(&f->all);
}

/* Posts @op if posts are left and nothing failed; false if it did not. */
static bool flight_post(struct flight *f, struct mlx_ext_atomic *op, gfp_t gfp)
{
	int err;

	if (atomic_read(&f->err) || atomic_dec_return(&f->to_post) < 0)
		return false;
	flight_fill(f, op);
	atomic_inc(&f->inflight);
	err = mlx_ext_post_atomic(f->l.xqa, op, gfp);
	if (err) {
		atomic_cmpxchg(&f->err, 0, err);
		flight_put(f);
		return false;
	}
	return true;
}

static void flight_done(struct mlx_ext_atomic *op)
{
	struct flight *f = op->context;

	atomic64_add(op->attempts, &f->attempts);
	if (op->status)
		atomic_cmpxchg(&f->err, 0, op->status);
	else
		atomic_inc(&f->ok);
	/* Before this one's put, so that inflight cannot reach 0 early. */
	flight_post(f, op, GFP_ATOMIC);
	flight_put(f);
}

static void flight_fill(struct flight *f, struct mlx_ext_atomic *op)
{
	memset(op, 0, sizeof(*op));
	op->opcode = f->masked ? MLX_EXT_MASKED_FETCH_ADD : MLX_EXT_ATOMIC_FETCH_ADD;
	op->size = 8;
	op->remote_addr = word_addr(&f->l, 0);
	op->rkey = f->l.mr->rkey;
	op->compare_add = 1;
	op->compare_add_mask = f->masked ? 1ULL << 31 : 0;
	op->done = flight_done;
	op->context = f;
}

#define FLIGHT_HIGH 0x5a5a5a5a00000000ULL

static int run_flight(struct ib_device *dev, enum ib_poll_context poll, u32 depth,
		      u32 ops, const char *kind)
{
	const char *stage = NULL;
	struct flight *f;
	u64 t0, ns, word;
	int err = 0;
	u32 i;

	if (!depth || depth > FLIGHT_MAX || !ops || ops > 10000000 ||
	    poll == IB_POLL_DIRECT || (strcmp(kind, "masked") && strcmp(kind, "std")))
		return -EINVAL;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->masked = !strcmp(kind, "masked");
	f->l.sq_depth = depth;
	f->l.rd_atomic = min_t(u32, depth, U8_MAX);
	stage = loop_setup_api(&f->l, dev, dev, poll, ALL_ACCESS, ALL_ACCESS, true, 0,
			       &err);
	if (stage)
		goto out;
	WRITE_ONCE(f->l.target[0], FLIGHT_HIGH);
	atomic_set(&f->to_post, ops);
	atomic_set(&f->inflight, 1);
	init_completion(&f->all);
	t0 = ktime_get_ns();
	for (i = 0; i < depth; i++)
		if (!flight_post(f, &f->op[i], GFP_KERNEL))
			break;
	flight_put(f);
	if (!wait_for_completion_timeout(&f->all, msecs_to_jiffies(120000))) {
		/* Still in flight: leak f rather than free it under them. */
		snprintf(result, RESULT_MAX, "err timeout %d\n", -ETIMEDOUT);
		return 0;
	}
	ns = ktime_get_ns() - t0;
	err = atomic_read(&f->err);
	if (err) {
		stage = "op";
		goto out;
	}
	word = READ_ONCE(f->l.target[0]);
	if (atomic_read(&f->ok) != ops || word != (FLIGHT_HIGH | ops)) {
		snprintf(result, RESULT_MAX, "bad ok %d word %016llx\n",
			 atomic_read(&f->ok), word);
		goto free;
	}
	snprintf(result, RESULT_MAX, "ok ops %u ns_per_op %llu attempts %lld\n", ops,
		 div_u64(ns, ops), (s64)atomic64_read(&f->attempts));
out:
	if (stage)
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
free:
	loop_destroy(&f->l);
	kfree(f);
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

	s->inner.opcode = MLX_EXT_ATOMIC_FETCH_ADD;
	s->inner.size = 8;
	s->inner.remote_addr = op->remote_addr;
	s->inner.rkey = op->rkey;
	s->inner.compare_add = 1;
	s->inner_ret = mlx_ext_atomic(s->qp, &s->inner);
	complete(&s->done);
}

static int run_syncself(struct ib_device *dev, enum ib_poll_context poll)
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
	s->op.opcode = MLX_EXT_ATOMIC_FETCH_ADD;
	s->op.size = 8;
	s->op.remote_addr = word_addr(&l, 0);
	s->op.rkey = l.mr->rkey;
	s->op.compare_add = 1;
	s->op.done = syncself_done;
	s->op.context = s;
	err = mlx_ext_post_atomic(l.xqa, &s->op, GFP_KERNEL);
	if (err) {
		stage = "post";
		goto out;
	}
	if (!wait_for_completion_timeout(&s->done, msecs_to_jiffies(TIMEOUT_MS))) {
		/* The callback is stuck in mlx_ext_atomic(): nothing to free. */
		snprintf(result, RESULT_MAX, "hung\n");
		return 0;
	}
	snprintf(result, RESULT_MAX, "status %d inner %d\n", s->op.status, s->inner_ret);
out:
	loop_destroy(&l);
	kfree(s);
	if (stage)
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/* syncwait: one mlx_ext_atomic() from the writer's own task, which the test
 * may kill meanwhile; its return is kept for "syncresult".
 */
static int sync_ret = 1;

static int run_syncwait(struct ib_device *dev)
{
	struct mlx_ext_atomic op = {};
	struct loop l = {};
	const char *stage;
	int err = 0;

	sync_ret = 1;
	stage = loop_setup_api(&l, dev, dev, IB_POLL_SOFTIRQ, ALL_ACCESS, ALL_ACCESS, true, 0,
			       &err);
	if (!stage) {
		op.opcode = MLX_EXT_ATOMIC_FETCH_ADD;
		op.size = 8;
		op.remote_addr = word_addr(&l, 0);
		op.rkey = l.mr->rkey;
		op.compare_add = 1;
		/* The test waits for this line before it kills the task. */
		pr_info("mlx_ext_test_ulp: syncwait: waiting in mlx_ext_atomic()\n");
		sync_ret = mlx_ext_atomic(l.xqa, &op);
		snprintf(result, RESULT_MAX, "ret %d response %llu\n", sync_ret, op.response);
	}
	/* Waits for the operation if the wait was cut short. */
	loop_destroy(&l);
	if (stage)
		snprintf(result, RESULT_MAX, "err %s %d\n", stage, err);
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

		op_init(&op);
		inv.wr_cqe = &op.cqe;
		err = ib_post_send(l.qb, &inv, NULL);
		if (!err)
			err = op_wait(&l, &op);
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
	err = post_atomic(&l, &op, opcode, addr, rkey, len, 1, 0, 0, 0);
	if (!err)
		err = op_wait(&l, &op);
	if (c == FLUSH_AFTER_ERROR && err > 0) {
		/* The QP is in ERR now: the next request is flushed. */
		err = post_atomic(&l, &op, opcode, word_addr(&l, 0), l.mr->rkey,
				  sizeof(u64), 1, 0, 0, 0);
		if (!err)
			err = op_wait(&l, &op);
	}
out:
	loop_destroy(&l);
	return err;
}

static int run_errors(struct ib_device *dev, enum ib_poll_context poll)
{
	size_t n = 0;
	int c;

	result[0] = 0;
	for (c = 0; c < NCASES; c++)
		n += scnprintf(result + n, RESULT_MAX - n, "%s %d\n", case_names[c],
			       run_case(dev, poll, c));
	return 0;
}

/* Devices, and what "hold" keeps on them. */
static struct ib_sa_client sa_client;

/* The GUID-change notifications seen, per device, port and function. */
#define NGUIDEVS 128

struct guidev {
	char dev[IB_DEVICE_NAME_MAX];
	u32 port;
	u16 function;
	u32 calls;
	bool up;
	u32 count;
};

static struct guidev guidevs[NGUIDEVS];
static DEFINE_SPINLOCK(guidev_lock);

static struct guidev *guidev_find(const char *dev, u32 port, u16 function, bool add)
{
	int i;

	for (i = 0; i < NGUIDEVS; i++) {
		struct guidev *g = &guidevs[i];

		if (g->dev[0] && !strcmp(g->dev, dev) && g->port == port &&
		    g->function == function)
			return g;
		if (!g->dev[0] && add) {
			strscpy(g->dev, dev, sizeof(g->dev));
			g->port = port;
			g->function = function;
			return g;
		}
	}
	return NULL;
}

static int guid_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct mlx_ext_guid_event *e = data;
	struct guidev *g;

	if (action != MLX_EXT_GUID_CHANGE)
		return NOTIFY_DONE;
	spin_lock(&guidev_lock);
	g = guidev_find(dev_name(&e->device->dev), e->port, e->function, true);
	if (g) {
		g->calls++;
		g->up = e->up;
		g->count = e->count;
	}
	spin_unlock(&guidev_lock);
	return NOTIFY_OK;
}

static struct notifier_block guid_nb = { .notifier_call = guid_event };

struct guidinfo {
	struct completion done;
	int status;
	struct ib_sa_guidinfo_rec rec;
};

static void guidinfo_done(int status, struct ib_sa_guidinfo_rec *resp, void *context)
{
	struct guidinfo *g = context;

	g->status = status;
	if (!status && resp)
		g->rec = *resp;
	complete(&g->done);
}

static int run_guidinfo(struct ib_device *dev, const char *args)
{
	unsigned long long guids[8] = {};
	struct ib_sa_guidinfo_rec rec = {};
	struct ib_port_attr attr;
	struct ib_sa_query *query;
	struct guidinfo g = {};
	unsigned int port, block, mask, i;
	char method_s[16];
	ib_sa_comp_mask comp;
	u8 method;
	ktime_t start;
	size_t n;
	int id, ret;

	ret = sscanf(args, "%u %15s %u %x %llx %llx %llx %llx %llx %llx %llx %llx", &port,
		     method_s, &block, &mask, &guids[0], &guids[1], &guids[2], &guids[3],
		     &guids[4], &guids[5], &guids[6], &guids[7]);
	if (ret < 4 || block > 15 || mask > 0xff || !rdma_is_port_valid(dev, port))
		return -EINVAL;
	if (!strcmp(method_s, "set"))
		method = IB_MGMT_METHOD_SET;
	else if (!strcmp(method_s, "delete"))
		method = IB_SA_METHOD_DELETE;
	else
		return -EINVAL;
	ret = ib_query_port(dev, port, &attr);
	if (ret)
		return ret;
	rec.lid = cpu_to_be16(attr.lid);
	rec.block_num = block;
	comp = IB_SA_GUIDINFO_REC_LID | IB_SA_GUIDINFO_REC_BLOCK_NUM;
	for (i = 0; i < 8; i++) {
		__be64 v = cpu_to_be64(guids[i]);

		memcpy(&rec.guid_info_list[8 * i], &v, 8);
		if (mask & (1 << i))
			comp |= IB_SA_COMP_MASK(4 + i);	/* IB_SA_GUIDINFO_REC_GID0 + i */
	}
	init_completion(&g.done);
	start = ktime_get();
	id = ib_sa_guid_info_rec_query(&sa_client, dev, port, &rec, comp, method, 1000,
				       GFP_KERNEL, guidinfo_done, &g, &query);
	if (id < 0) {
		snprintf(result, RESULT_MAX, "err %d ms 0\n", id);
		return 0;
	}
	/* ib_sa calls back exactly once: answered, timed out or cancelled. */
	if (!wait_for_completion_timeout(&g.done, msecs_to_jiffies(TIMEOUT_MS))) {
		ib_sa_cancel_query(id, query);
		wait_for_completion(&g.done);
	}
	if (g.status) {
		snprintf(result, RESULT_MAX, "err %d ms %lld\n", g.status,
			 ktime_ms_delta(ktime_get(), start));
		return 0;
	}
	n = snprintf(result, RESULT_MAX, "ok %x %u", be16_to_cpu(g.rec.lid), g.rec.block_num);
	for (i = 0; i < 8; i++) {
		__be64 v;

		memcpy(&v, &g.rec.guid_info_list[8 * i], 8);
		n += snprintf(result + n, RESULT_MAX - n, " %llx", be64_to_cpu(v));
	}
	snprintf(result + n, RESULT_MAX - n, " ms %lld\n", ktime_ms_delta(ktime_get(), start));
	return 0;
}

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
		kfree(d->held);
		kfree(d->ops);
		kfree(d->api_ops);
		kfree(d->api_calls);
		d->held = NULL;
		d->ops = NULL;
		d->api_ops = NULL;
		d->api_calls = NULL;
		return -ENOMEM;
	}
	stage = loop_setup_api(d->held, d->dev, d->dev, IB_POLL_WORKQUEUE,
			       ALL_ACCESS, ALL_ACCESS, api, 0, &err);
	for (i = 0; !stage && i < n && !err; i++) {
		struct mlx_ext_atomic *op = &d->api_ops[i];

		if (!api) {
			err = post_atomic(d->held, &d->ops[i],
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

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char cmd[16], name[2 * IB_DEVICE_NAME_MAX], poll_s[16], kind[16], reply[16];
	struct ulp_dev *d, *d_b;
	enum ib_poll_context poll;
	char *name_b;
	unsigned long long seed;
	unsigned int count;
	char *buf;
	int ret;

	if (len >= 256)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	mutex_lock(&ulp_lock);
	ret = -EINVAL;
	if (sysfs_streq(buf, "lastfail")) {
		snprintf(result, RESULT_MAX, "softirq %d\n", atomic_read(&lastfail_softirq));
		ret = 0;
		goto out;
	}
	if (sysfs_streq(buf, "syncresult")) {
		snprintf(result, RESULT_MAX, "ret %d\n", sync_ret);
		ret = 0;
		goto out;
	}
	if (sysfs_streq(buf, "capsresult")) {
		snprintf(result, RESULT_MAX, "ok %d enodev %d other %d running %d\n",
			 atomic_read(&caps_ok), atomic_read(&caps_enodev),
			 atomic_read(&caps_other), atomic_read(&caps_running));
		caps_reap(false);
		ret = 0;
		goto out;
	}
	if (sysfs_streq(buf, "repost 0") || sysfs_streq(buf, "repost 1")) {
		WRITE_ONCE(repost_on_done, buf[7] == '1');
		snprintf(result, RESULT_MAX, "repost %d\n", repost_on_done);
		ret = 0;
		goto out;
	}
	if (!strncmp(buf, "qpmode ", 7)) {
		if (sysfs_streq(buf + 7, "create"))
			qp_mode = QP_CREATE;
		else if (sysfs_streq(buf + 7, "attach"))
			qp_mode = QP_ATTACH;
		else if (sysfs_streq(buf + 7, "attach_drain"))
			qp_mode = QP_ATTACH_DRAIN;
		else
			goto out;
		snprintf(result, RESULT_MAX, "qpmode %d\n", qp_mode);
		ret = 0;
		goto out;
	}
	if (sysfs_streq(buf, "apistats")) {
		/* Read and reset: each test phase sees its own. */
		snprintf(result, RESULT_MAX,
			 "posted %d done %d ok %d canceled %d shutdown %d other %d atend %d repost_refused %d repost_other %d notbegun %d\n",
			 atomic_xchg(&api_posted, 0), atomic_xchg(&api_done, 0),
			 atomic_xchg(&api_ok, 0), atomic_xchg(&api_canceled, 0),
			 atomic_xchg(&api_shutdown, 0), atomic_xchg(&api_other, 0),
			 atomic_xchg(&api_at_end, 0),
			 atomic_xchg(&api_repost_refused, 0),
			 atomic_xchg(&api_repost_other, 0),
			 atomic_xchg(&api_not_begun, 0));
		ret = 0;
		goto out;
	}
	if (sscanf(buf, "%15s %127s", cmd, name) != 2)
		goto out;
	/* DEV or, for atomics, REQUESTER:RESPONDER. */
	name_b = strchr(name, ':');
	if (name_b)
		*name_b++ = 0;
	d = find_dev(name);
	d_b = name_b ? find_dev(name_b) : d;
	ret = -ENODEV;
	if (!d || !d_b)
		goto out;
	ret = -EINVAL;
	if (d_b != d && strcmp(cmd, "atomics") && strcmp(cmd, "api"))
		goto out;
	ret = -EINVAL;
	if (!strcmp(cmd, "api")) {
		u32 flags = 0;

		if (sscanf(buf, "%*s %*s %15s %llu %u %15s %15s", poll_s, &seed,
			   &count, kind, reply) != 5 || parse_poll(poll_s, &poll))
			goto out;
		if (!strcmp(reply, "be"))
			flags = MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY;
		else if (strcmp(reply, "none"))
			goto out;
		ret = run_api(d->dev, d_b->dev, poll, seed, count,
			      !strcmp(kind, "narrow") ? API_NARROW :
			      !strcmp(kind, "masked") ? API_MASKED : API_STD,
			      flags);
	} else if (!strcmp(cmd, "bench")) {
		kind[0] = 0;
		if (sscanf(buf, "%*s %*s %15s %u %15s", poll_s, &count, kind) < 2 ||
		    parse_poll(poll_s, &poll))
			goto out;
		ret = run_bench(d->dev, poll, count, strcmp(kind, "short"));
	} else if (!strcmp(cmd, "burst")) {
		if (sscanf(buf, "%*s %*s %15s %u", poll_s, &count) != 2 ||
		    parse_poll(poll_s, &poll))
			goto out;
		result[0] = 0;
		ret = run_burst(d->dev, poll, count);
	} else if (!strcmp(cmd, "flight")) {
		unsigned int depth;

		if (sscanf(buf, "%*s %*s %15s %u %u %15s", poll_s, &depth, &count,
			   kind) != 4 || parse_poll(poll_s, &poll))
			goto out;
		ret = run_flight(d->dev, poll, depth, count, kind);
	} else if (!strcmp(cmd, "contend")) {
		if (sscanf(buf, "%*s %*s %15s %u", poll_s, &count) != 2 ||
		    parse_poll(poll_s, &poll))
			goto out;
		result[0] = 0;
		ret = run_contend(d->dev, poll, count);
	} else if (!strcmp(cmd, "apiflags")) {
		ret = run_apiflags(d->dev);
	} else if (!strcmp(cmd, "abi")) {
		ret = run_abi(d->dev);
	} else if (!strcmp(cmd, "attachflags")) {
		ret = run_attachflags(d->dev);
	} else if (!strcmp(cmd, "atomics")) {
		if (sscanf(buf, "%*s %*s %15s %llu %u %15s %15s", poll_s, &seed,
			   &count, kind, reply) != 5 || parse_poll(poll_s, &poll))
			goto out;
		ret = run_atomics(d->dev, d_b->dev, poll, seed, count,
				  !strcmp(kind, "masked"), !strcmp(reply, "be"));
	} else if (!strcmp(cmd, "errors")) {
		if (sscanf(buf, "%*s %*s %15s", poll_s) != 1 || parse_poll(poll_s, &poll))
			goto out;
		ret = run_errors(d->dev, poll);
	} else if (!strcmp(cmd, "hold")) {
		kind[0] = 0;
		if (sscanf(buf, "%*s %*s %u %15s", &count, kind) < 1)
			goto out;
		if (kind[0] && strcmp(kind, "api"))
			goto out;
		ret = hold(d, count, kind[0] != 0);
		snprintf(result, RESULT_MAX, "%s %d\n", cmd, ret);
	} else if (!strcmp(cmd, "guidinfo")) {
		int off = 0;

		/* %n is not counted: the fields after it are the query's. */
		if (sscanf(buf, "%*s %*s %n", &off) >= 0 && off)
			ret = run_guidinfo(d->dev, buf + off);
	} else if (!strcmp(cmd, "guidevents")) {
		unsigned int port, function;
		struct guidev *g;

		if (sscanf(buf, "%*s %*s %u %u", &port, &function) != 2)
			goto out;
		spin_lock(&guidev_lock);
		g = guidev_find(name, port, function, false);
		snprintf(result, RESULT_MAX, "calls %u up %d count %u\n", g ? g->calls : 0,
			 g ? g->up : 0, g ? g->count : 0);
		spin_unlock(&guidev_lock);
		ret = 0;
	} else if (!strcmp(cmd, "events")) {
		ret = 0;
		snprintf(result, RESULT_MAX, "port_err %d port_active %d\n",
			 atomic_read(&d->port_err), atomic_read(&d->port_active));
	} else if (!strcmp(cmd, "syncself")) {
		if (sscanf(buf, "%*s %*s %15s", poll_s) != 1 || parse_poll(poll_s, &poll))
			goto out;
		ret = run_syncself(d->dev, poll);
	} else if (!strcmp(cmd, "syncwait")) {
		ret = run_syncwait(d->dev);
	} else if (!strcmp(cmd, "capsloop")) {
		ret = caps_start(d->dev);
		snprintf(result, RESULT_MAX, "%s %d\n", cmd, ret);
	} else if (!strcmp(cmd, "release")) {
		release(d);
		ret = 0;
		snprintf(result, RESULT_MAX, "%s 0\n", cmd);
	}
out:
	mutex_unlock(&ulp_lock);
	kfree(buf);
	return ret ? ret : len;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&ulp_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, result, strlen(result));
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

	ib_sa_register_client(&sa_client);
	dir = debugfs_create_dir("mlx_ext_test_ulp", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &ctl_fops);
	ret = ib_register_client(&ulp_client);
	if (ret) {
		debugfs_remove(dir);
		ib_sa_unregister_client(&sa_client);
		return ret;
	}
	ret = mlx_ext_register_guid_notifier(&guid_nb);
	if (ret) {
		debugfs_remove(dir);
		ib_unregister_client(&ulp_client);
		ib_sa_unregister_client(&sa_client);
	}
	return ret;
}

static void __exit ulp_exit(void)
{
	caps_reap(true);
	mlx_ext_unregister_guid_notifier(&guid_nb);
	debugfs_remove(dir);
	ib_unregister_client(&ulp_client);
	ib_sa_unregister_client(&sa_client);
}

module_init(ulp_init);
module_exit(ulp_exit);
MODULE_DESCRIPTION("mlx_ext's test ULP: atomics over RC loopback, for the VM tests");
MODULE_LICENSE("GPL");
