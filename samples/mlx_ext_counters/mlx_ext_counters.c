// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_counters: masked atomics on a QP the ULP owns, made with rdma_cm,
 * as kernel ULPs make theirs. Loading it connects to itself through the
 * RDMA device behind IPv4 address @addr (rxe0's netdev in the tests): the
 * server side owns one 64-bit word of four 16-bit counters, registered for
 * remote atomics with FRWR and announced in a SEND; the client side makes
 * room for mlx_ext (mlx_ext_init_qp_attr), creates its QP with
 * rdma_create_qp and attaches mlx_ext to it, and 4 threads each add 1 to
 * their own counter @count times with masked fetch-and-add: the field
 * boundaries (bits 15, 31, 47, 63) keep one counter's carry out of the
 * next. Each response must show the thread's own counter at its own count.
 * It logs the word the server ends with. Unloading, or a device removal
 * (RDMA_CM_EVENT_DEVICE_REMOVAL), detaches, drains and destroys.
 * Documentation/ulp-api.rst, "A sample: counters in one word".
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <rdma/rdma_cm.h>
#include <mlx_ext/mlx_ext.h>

static char *addr = "10.0.2.15";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address of the RDMA device to loop through");
static uint count = 1000;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "additions per counter");

#define NT 4
#define BOUNDARY 0x8000800080008000ULL	/* the top bit of each counter */

struct key_msg {		/* what the server SENDs the client */
	__be64 addr;
	__be32 rkey;
};

struct side {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct key_msg *msg;	/* the server's SEND, the client's RECV */
	u64 msg_dma;
	struct ib_cqe cqe;
	bool live;		/* connected: drain before destroying */
};

static struct rdma_cm_id *listener;
static struct side srv, cli;
static struct mlx_ext_qp *mqp;	/* the client's QP, attached */
static u64 *word;		/* the server's counters */
static u64 word_dma;
static struct ib_mr *mr;
static u64 raddr;
static u32 rkey;
static int status = -ETIMEDOUT;
static DECLARE_COMPLETION(ready);	/* the client has the key, or failed */
/*
 * The sides, between the rdma_cm handlers, init and exit. A device
 * removal's handler tears its side down (it may not destroy its own id: it
 * returns non-zero and cma does). Exit and a failed init set @exiting and
 * tear everything down under the lock: a handler then stands back, or
 * rdma_destroy_id() would wait for a handler that waits for the lock.
 */
static DEFINE_MUTEX(lock);
static bool exiting;
static bool stop;			/* no more threads; those running, stop */
static unsigned int running;		/* threads started */
static struct completion done[NT];
static struct task_struct *tasks[NT];
static u32 bad[NT];

static void cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->wr_cqe == &cli.cqe && wc->status == IB_WC_SUCCESS) {
		ib_dma_sync_single_for_cpu(cq->device, cli.msg_dma, sizeof(*cli.msg),
					   DMA_BIDIRECTIONAL);
		raddr = be64_to_cpu(cli.msg->addr);
		rkey = be32_to_cpu(cli.msg->rkey);
		status = 0;
		complete(&ready);
	} else if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR) {
		status = -EIO;
		complete(&ready);
	}
}

/* PD, CQ (ib_cqe model) and QP on @sd's id; @ops: mlx_ext's room, if any. */
static int side_create(struct side *sd, u32 ops)
{
	struct ib_qp_init_attr attr = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		/* own: REG_MR + SEND (server) or nothing (client), a drain */
		.cap = { .max_send_wr = 3, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_device *dev = sd->id->device;
	struct ib_recv_wr rwr = { .wr_cqe = &sd->cqe, .num_sge = 1 };
	struct ib_sge sge;
	int ret;

	sd->cqe.done = cqe_done;
	sd->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(sd->pd))
		return PTR_ERR(sd->pd);
	sd->cq = ib_alloc_cq(dev, NULL, 64, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(sd->cq))
		return PTR_ERR(sd->cq);
	attr.send_cq = sd->cq;
	attr.recv_cq = sd->cq;
	if (ops) {
		ret = mlx_ext_init_qp_attr(dev, &attr, ops);
		if (ret)
			return ret;
	}
	ret = rdma_create_qp(sd->id, sd->pd, &attr);
	if (ret)
		return ret;
	sd->msg_dma = ib_dma_map_single(dev, sd->msg, sizeof(*sd->msg),
					DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, sd->msg_dma)) {
		sd->msg_dma = 0;
		return -ENOMEM;
	}
	if (!ops)
		return 0;
	/* The client: its RECV for the key, then mlx_ext on its QP. */
	sge = (struct ib_sge){ sd->msg_dma, sizeof(*sd->msg), sd->pd->local_dma_lkey };
	rwr.sg_list = &sge;
	ret = ib_post_recv(sd->id->qp, &rwr, NULL);
	if (ret)
		return ret;
	mqp = mlx_ext_attach_qp(sd->id->qp, 0);
	return PTR_ERR_OR_ZERO(mqp);
}

/* Detached first, then drained and destroyed: the ULP's own teardown. */
static void side_destroy(struct side *sd)
{
	struct ib_device *dev = sd->id ? sd->id->device : NULL;

	if (sd == &cli && !IS_ERR_OR_NULL(mqp))
		mlx_ext_detach_qp(mqp);
	mqp = NULL;
	if (sd->live)
		rdma_disconnect(sd->id);
	if (sd->id && sd->id->qp) {
		if (sd->live)
			ib_drain_qp(sd->id->qp);
		rdma_destroy_qp(sd->id);
	}
	if (sd == &srv && !IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (sd == &srv && word_dma && dev)
		ib_dma_unmap_single(dev, word_dma, sizeof(*word), DMA_BIDIRECTIONAL);
	if (sd->msg_dma && dev)
		ib_dma_unmap_single(dev, sd->msg_dma, sizeof(*sd->msg), DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(sd->cq))
		ib_free_cq(sd->cq);
	if (!IS_ERR_OR_NULL(sd->pd))
		ib_dealloc_pd(sd->pd);
	sd->pd = NULL;
	sd->cq = NULL;
	sd->msg_dma = 0;
	sd->live = false;
	if (sd == &srv) {
		mr = NULL;
		word_dma = 0;
	}
}

/* Server, connected: register the word (FRWR) and SEND where it is. */
static int server_send_key(void)
{
	struct ib_device *dev = srv.id->device;
	struct scatterlist sg;
	struct ib_sge sge = { srv.msg_dma, sizeof(*srv.msg), srv.pd->local_dma_lkey };
	struct ib_send_wr send = { .wr_cqe = &srv.cqe, .opcode = IB_WR_SEND,
				   .sg_list = &sge, .num_sge = 1,
				   .send_flags = IB_SEND_SIGNALED };
	struct ib_reg_wr reg = { .wr = { .wr_cqe = &srv.cqe, .opcode = IB_WR_REG_MR,
					 .next = &send },
				 .access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC };

	word_dma = ib_dma_map_single(dev, word, sizeof(*word), DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, word_dma)) {
		word_dma = 0;
		return -ENOMEM;
	}
	mr = ib_alloc_mr(srv.pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = word_dma;
	sg_dma_len(&sg) = sizeof(*word);
	if (ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	reg.mr = mr;
	reg.key = mr->rkey;
	srv.msg->addr = cpu_to_be64(mr->iova);
	srv.msg->rkey = cpu_to_be32(mr->rkey);
	ib_dma_sync_single_for_device(dev, srv.msg_dma, sizeof(*srv.msg),
				      DMA_BIDIRECTIONAL);
	/* In order on the send queue: registered before the key is sent. */
	return ib_post_send(srv.id->qp, &reg.wr, NULL);
}

static void fail(int err)
{
	status = err;
	complete(&ready);
}

/* Under the lock. The ids this module keeps are never destroyed by
 * returning non-zero, but at a removal: errors go to fail().
 */
static int cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = { .initiator_depth = 1,
					 .responder_resources = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	unsigned int t;
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, 2000);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = side_create(&cli, NT);
		if (!ret)
			ret = rdma_connect_locked(id, &param);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (srv.id)
			return -EBUSY;	/* one client; non-zero: cma destroys @id */
		srv.id = id;
		ret = side_create(&srv, 0);
		if (!ret)
			ret = rdma_accept(id, &param);
		if (ret) {
			side_destroy(&srv);
			srv.id = NULL;
		}
		return ret;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id != srv.id) {
			cli.live = true;
			return 0;
		}
		srv.live = true;
		ret = server_send_key();
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* The threads stop before the client's QP is detached. */
		stop = true;
		fail(-ENODEV);
		for (t = 0; t < running; t++)
			wait_for_completion(&done[t]);
		if (id == listener) {
			listener = NULL;
		} else if (id == srv.id) {
			side_destroy(&srv);
			srv.id = NULL;
		} else if (id == cli.id) {
			side_destroy(&cli);
			cli.id = NULL;
		}
		return 1;	/* cma destroys @id */
	default:		/* errors, rejections */
		pr_info("mlx_ext_counters: %s (%d)\n", rdma_event_msg(ev->event), ev->status);
		ret = -EIO;
		break;
	}
	if (ret)
		fail(ret);
	return 0;
}

static int cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	/* Exiting: the teardown has @id; a new one is refused (destroyed). */
	int ret = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? -EBUSY : 0;

	while (!mutex_trylock(&lock)) {
		if (READ_ONCE(exiting))
			return ret;
		usleep_range(500, 1000);
	}
	if (!exiting)
		ret = cm_event(id, ev);
	mutex_unlock(&lock);
	return ret;
}

/* Thread @t: @count masked fetch-and-adds of 1 on counter t. */
static int adder(void *arg)
{
	unsigned int t = (uintptr_t)arg, i, shift = 16 * t;
	struct mlx_ext_atomic op = {
		.opcode = MLX_EXT_MASKED_FETCH_ADD, .size = 8,
		.compare_add = 1ULL << shift, .compare_add_mask = BOUNDARY,
	};

	for (i = 0; i < count && !READ_ONCE(stop); i++) {
		op.remote_addr = raddr;
		op.rkey = rkey;
		if (mlx_ext_atomic(mqp, &op)) {
			bad[t]++;
			break;
		}
		/* Only thread t adds to counter t: it shows t's own count. */
		if (((op.response >> shift) & 0xffff) != (i & 0xffff))
			bad[t]++;
	}
	complete_all(&done[t]);	/* init and a removal may both wait */
	return 0;
}

/* Everything, by init's failure or exit: removal handlers stand back. */
static void teardown(void)
{
	WRITE_ONCE(exiting, true);
	mutex_lock(&lock);
	side_destroy(&cli);
	side_destroy(&srv);
	if (cli.id)
		rdma_destroy_id(cli.id);
	if (srv.id)
		rdma_destroy_id(srv.id);
	if (listener)
		rdma_destroy_id(listener);
	mutex_unlock(&lock);
	kfree(word);
	kfree(srv.msg);
	kfree(cli.msg);
}

static int __init counters_init(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(18515) };
	unsigned int t, errors = 0;
	size_t size;
	u64 w;
	int ret;

	if (!in4_pton(addr, -1, (u8 *)&sin.sin_addr.s_addr, -1, NULL) || count > 0xffff)
		return -EINVAL;
	/* Buffers the adapter writes: each in cache lines of its own. */
	size = max_t(size_t, L1_CACHE_BYTES, dma_get_cache_alignment());
	word = kzalloc(size, GFP_KERNEL);
	srv.msg = kzalloc(size, GFP_KERNEL);
	cli.msg = kzalloc(size, GFP_KERNEL);
	ret = -ENOMEM;
	if (!word || !srv.msg || !cli.msg)
		goto out_free;
	listener = rdma_create_id(&init_net, cm_handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(listener)) {
		ret = PTR_ERR(listener);
		listener = NULL;
		goto out_ids;
	}
	cli.id = rdma_create_id(&init_net, cm_handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cli.id)) {
		ret = PTR_ERR(cli.id);
		cli.id = NULL;
		goto out_ids;
	}
	ret = rdma_bind_addr(listener, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(listener, 1);
	if (!ret)
		ret = rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&sin, 2000);
	if (!ret && !wait_for_completion_timeout(&ready, 10 * HZ))
		ret = -ETIMEDOUT;
	if (!ret)
		ret = status;
	if (ret)
		goto out_ids;
	mutex_lock(&lock);
	for (t = 0; t < NT && !stop; t++) {
		init_completion(&done[t]);
		tasks[t] = kthread_run(adder, (void *)(uintptr_t)t, "mlx_ext_add%u", t);
		if (IS_ERR(tasks[t]))
			break;
		get_task_struct(tasks[t]);
		running++;
	}
	mutex_unlock(&lock);
	for (t = 0; t < running; t++) {
		wait_for_completion(&done[t]);
		/* Joined: none runs module code after init returns. */
		kthread_stop(tasks[t]);
		put_task_struct(tasks[t]);
		errors += bad[t];
	}
	mutex_lock(&lock);
	if (srv.id)
		ib_dma_sync_single_for_cpu(srv.id->device, word_dma, sizeof(*word),
					   DMA_BIDIRECTIONAL);
	w = READ_ONCE(*word);
	pr_info("mlx_ext_counters: %u threads x %u masked fetch-and-adds: counters %llu %llu %llu %llu, %u wrong responses%s\n",
		running, count, w & 0xffff, (w >> 16) & 0xffff, (w >> 32) & 0xffff,
		w >> 48, errors, stop ? " (device removed)" : "");
	mutex_unlock(&lock);
	return 0;

out_ids:
	pr_info("mlx_ext_counters: no connection to %s: %d\n", addr, ret);
	teardown();
	return ret;
out_free:
	kfree(word);
	kfree(srv.msg);
	kfree(cli.msg);
	return ret;
}

static void __exit counters_exit(void)
{
	teardown();
}

module_init(counters_init);
module_exit(counters_exit);
MODULE_DESCRIPTION("mlx_ext sample ULP: masked fetch-and-add on counters in one word, over rdma_cm");
MODULE_LICENSE("GPL");
