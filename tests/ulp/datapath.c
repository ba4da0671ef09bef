// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_test_ulp: the data path. Random atomics through verbs
 * ("atomics") and through mlx_ext's API ("api"), contention between
 * threads ("contend"), the benchmark ("bench"), operations posted at once
 * ("burst") and kept in flight ("flight").
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#include "test_ulp.h"

int run_atomics(struct ib_device *dev, struct ib_device *dev_b,
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
		err = tu_post_atomic(&l, &op, opcode, word_addr(&l, w), l.mr->rkey,
				     sizeof(u64), a, c, b, d);
		if (err) {
			stage = "post";
			goto out;
		}
		err = tu_op_wait(&l, &op);
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
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	else
		snprintf(tu_result, RESULT_MAX, "ok %016llx\n", digest);
	return 0;
}

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
int run_api(struct ib_device *dev, struct ib_device *dev_b,
	    enum ib_poll_context poll, u64 seed, u32 count,
	    enum api_kind kind, u32 flags)
{
	struct loop l = {};
	const char *stage;
	u64 rng = seed, digest = seed, attempts = 0;
	int err = 0;
	u32 i, w;

	if (poll == IB_POLL_DIRECT) {
		snprintf(tu_result, RESULT_MAX, "err poll %d\n", -EINVAL);
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
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	else
		snprintf(tu_result, RESULT_MAX, "ok %016llx attempts %llu\n", digest,
			 attempts);
	return 0;
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
		/* In a group, each joins thread 0's. */
		xq = xqp_make(l->group ? QP_ATTACH_GROUP : l->mode, l->pd, &init, 0,
			      l->xqa, &ct->qa, &stage);
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
			xqp_end(cs->l.group ? QP_ATTACH_GROUP : cs->l.mode, ct->xq,
				ct->qa, ct->qa_live, NULL);
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

int run_contend(struct ib_device *dev, enum ib_poll_context poll, u32 ops)
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
			snprintf(tu_result, RESULT_MAX, "bad %u %s\n", t, c[t].what);
			goto out;
		}
		if (field_of(word, t) != (c[t].mine & 0xfff)) {
			stage = "thread";
			err = 1;
			snprintf(tu_result, RESULT_MAX, "bad %u final field %u, expected %u\n",
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
		snprintf(tu_result, RESULT_MAX, "bad top final %u, expected %u\n",
			 field_of(word, NT), top & 0xffff);
		goto out;
	}
	snprintf(tu_result, RESULT_MAX,
		 "ok ops %u attempts %llu max %u word %016llx\n", NT * ops,
		 attempts, max_attempts, word);
out:
	contend_teardown(cs);
	kfree(cs);
	if (stage && strncmp(tu_result, "bad ", 4))
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/*
 * A group's combining (run_group): GROUP_OPS masked fetch-and-adds of 1 on
 * word 0, posted at once, operation i from contender qps[i]'s QP.
 */
#define GROUP_OPS 5

struct group_run {
	struct mlx_ext_atomic op[GROUP_OPS];
	bool done[GROUP_OPS];
	atomic_t left;
	struct completion all;
};

static void group_done(struct mlx_ext_atomic *op)
{
	struct group_run *g = op->context;

	WRITE_ONCE(g->done[op - g->op], true);
	if (atomic_dec_and_test(&g->left))
		complete(&g->all);
}

int run_group(struct ib_device *dev, enum ib_poll_context poll, const char *how)
{
	static const unsigned int usual[GROUP_OPS] = { 0, 0, 1, 2, 3 };
	/* QP 0's operation a follower in the second batch, led by QP 2's. */
	static const unsigned int late[GROUP_OPS] = { 1, 2, 0, 3, 3 };
	bool solo = !strcmp(how, "solo"), fence = !strcmp(how, "fence");
	bool detach = !strcmp(how, "detach"), drain = !strcmp(how, "drain");
	bool destroy = !strcmp(how, "destroy");
	const unsigned int *qps = destroy ? late : usual;
	struct contend_set *cs;
	struct group_run *g;
	const char *stage = NULL;
	unsigned int i, early = 0, pending = 0;
	size_t n;
	int err = 0;

	if (poll == IB_POLL_DIRECT ||
	    !(solo || fence || detach || drain || destroy || !strcmp(how, "group")))
		return -EINVAL;
	cs = kzalloc(sizeof(*cs), GFP_KERNEL);
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!cs || !g) {
		kfree(cs);
		kfree(g);
		return -ENOMEM;
	}
	if (solo && qp_mode == QP_ATTACH_GROUP) {
		/* Solo takes qpmode's QPs, each on its own. */
		err = -EINVAL;
		stage = "qpmode";
		goto out;
	}
	if (!solo) {
		/* QP 0 attached (created, for destroy), the others in its group. */
		cs->l.mode = destroy ? QP_CREATE : QP_ATTACH_GROUP;
		cs->l.group = true;
	}
	stage = contend_setup(cs, dev, poll, 1, &err);
	if (stage)
		goto out;
	WRITE_ONCE(cs->l.target[0], 0);
	init_completion(&g->all);
	atomic_set(&g->left, GROUP_OPS);
	for (i = 0; i < GROUP_OPS; i++) {
		struct mlx_ext_atomic *op = &g->op[i];

		op->opcode = MLX_EXT_MASKED_FETCH_ADD;
		op->size = 8;
		op->remote_addr = word_addr(&cs->l, 0);
		op->rkey = cs->l.mr->rkey;
		op->compare_add = 1;
		op->flags = (fence && i == 2) ? MLX_EXT_ATOMIC_FENCE : 0;
		op->done = group_done;
		op->context = g;
		err = mlx_ext_post_atomic(cs->c[qps[i]].xq, op, GFP_KERNEL);
		if (err) {
			/* Those posted end before the QPs do. */
			stage = "post";
			if (atomic_sub_and_test(GROUP_OPS - i, &g->left))
				complete(&g->all);
			break;
		}
	}
	if (!err && (detach || destroy)) {
		/* Thread 0's QP is the loop's: ended (it waits for its own
		 * operations; destroy once the second batch is in flight), the
		 * ULP's drain and destroy of a detached one at the end.
		 */
		if (destroy)
			msleep(400);
		for (i = 0; i < GROUP_OPS; i++)
			pending += qps[i] == 0 && !READ_ONCE(g->done[i]);
		if (destroy) {
			mlx_ext_destroy_qp(cs->l.xqa);
			cs->l.qa = NULL;
		} else {
			mlx_ext_detach_qp(cs->l.xqa);
		}
		cs->l.xqa = NULL;
		cs->c[0].xq = NULL;
		for (i = 0; i < GROUP_OPS; i++)
			early += qps[i] == 0 && !READ_ONCE(g->done[i]);
	}
	if (!err && drain) {
		/* Once the first compare-and-swap is executing (usually:
		 * see test_attach_group).
		 */
		msleep(100);
		ib_drain_qp(cs->l.qa);
	}
	if (!wait_for_completion_timeout(&g->all, msecs_to_jiffies(2 * TIMEOUT_MS))) {
		/* Cannot free what mlx_ext still owns: leak it, loudly. */
		WARN(1, "%s: operations still pending\n", __func__);
		snprintf(tu_result, RESULT_MAX, "err wait %d\n", -ETIMEDOUT);
		return 0;
	}
	if (stage)
		goto out;
	n = scnprintf(tu_result, RESULT_MAX, "ok st");
	for (i = 0; i < GROUP_OPS; i++)
		n += scnprintf(tu_result + n, RESULT_MAX - n, "%s%d", i ? "," : " ",
			       g->op[i].status);
	n += scnprintf(tu_result + n, RESULT_MAX - n, " resp");
	for (i = 0; i < GROUP_OPS; i++)
		n += scnprintf(tu_result + n, RESULT_MAX - n, "%s%llu", i ? "," : " ",
			       g->op[i].status ? 0 : g->op[i].response);
	n += scnprintf(tu_result + n, RESULT_MAX - n, " word %llu",
		       READ_ONCE(cs->l.target[0]));
	if (detach || destroy)
		n += scnprintf(tu_result + n, RESULT_MAX - n, " pending %u early %u",
			       pending, early);
	scnprintf(tu_result + n, RESULT_MAX - n, "\n");
out:
	/* (A detached xqa leaves qa to loop_destroy(): drain and destroy.) */
	contend_teardown(cs);
	if (stage)
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	kfree(cs);
	kfree(g);
	return 0;
}

/*
 * The benchmark (tests/bench/bench.sh, make bench): ns per operation through
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
		ret = tu_post_atomic(l, &op, IB_WR_ATOMIC_CMP_AND_SWP, word_addr(l, 0),
				     l->mr->rkey, sizeof(u64), last, 0, last + 1, 0);
		if (!ret)
			ret = tu_op_wait(l, &op);
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

/* A figure over rounds: its mean, and its lowest and highest round. */
struct bench_fig {
	s64 err;		/* a negative errno, or 0 */
	u64 sum, min, max;	/* of the rounds' values */
	u64 wrs;
	u32 ops, rounds;
};

static void fig_add(struct bench_fig *f, s64 v, u64 wrs, u32 ops)
{
	if (v < 0) {
		f->err = v;
		return;
	}
	f->sum += v;
	f->min = f->rounds ? min_t(u64, f->min, v) : v;
	f->max = max_t(u64, f->max, v);
	f->wrs += wrs;
	f->ops += ops;
	f->rounds++;
}

/* "NAME MEAN UNIT (W WR/op) min MIN max MAX rounds R" */
static size_t bench_line(size_t n, const char *name, const struct bench_fig *f,
			 const char *unit)
{
	if (f->err || !f->rounds || !f->ops)
		return n + scnprintf(tu_result + n, RESULT_MAX - n, "%s error %lld\n",
				     name, f->err ? f->err : -EIO);
	return n + scnprintf(tu_result + n, RESULT_MAX - n,
			     "%s %llu %s (%llu.%02llu WR/op) min %llu max %llu rounds %u\n",
			     name, div_u64(f->sum, f->rounds), unit,
			     div_u64(f->wrs, f->ops), div_u64(f->wrs * 100, f->ops) % 100,
			     f->min, f->max, f->rounds);
}

#define BENCH_ROUNDS 8
#define BENCH_4WAY_ROUNDS 4

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

/* shared: all on thread 0's QP; group: on QPs attached in one group */
static const struct bench_4way_kind {
	const char *name;
	u32 opcode;
	bool shared, group;
} kinds_4way[] = {
	{ "fa_4way", MLX_EXT_ATOMIC_FETCH_ADD, false, false },
	{ "masked_fa_4way", MLX_EXT_MASKED_FETCH_ADD, false, false },
	{ "fa_4way_1qp", MLX_EXT_ATOMIC_FETCH_ADD, true, false },
	{ "masked_fa_4way_1qp", MLX_EXT_MASKED_FETCH_ADD, true, false },
	{ "masked_fa_4way_group", MLX_EXT_MASKED_FETCH_ADD, false, true },
};

/* The @i-th kind of @count in round @r: forwards in even rounds, backwards
 * in odd ones, so that no kind always runs first or after another.
 */
static unsigned int bench_order(unsigned int r, unsigned int i, unsigned int count)
{
	return (r & 1) ? count - 1 - i : i;
}

/* run_bench's figures, and each round's value of each. */
struct bench_figs {
	struct bench_fig seq[ARRAY_SIZE(kinds)];
	struct bench_fig way[ARRAY_SIZE(kinds_4way)];
	s64 per[ARRAY_SIZE(kinds)][BENCH_ROUNDS];
	s64 per_4way[ARRAY_SIZE(kinds_4way)][BENCH_4WAY_ROUNDS];
};

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * "ratio NAME/BASE MEDIAN min MIN max MAX": NAME's figure over BASE's,
 * taken round by round (the two ran in the same round, so a drift of the
 * machine's speed between rounds cancels out): the median and the range of
 * the rounds' ratios.
 */
static size_t bench_ratio(size_t n, const char *name, const char *base,
			  const s64 *v, const s64 *b, unsigned int rounds)
{
	u64 r[BENCH_ROUNDS];
	unsigned int i;

	BUILD_BUG_ON(BENCH_4WAY_ROUNDS > BENCH_ROUNDS);

	for (i = 0; i < rounds; i++) {
		if (v[i] <= 0 || b[i] <= 0)
			return n;
		r[i] = div64_u64((u64)v[i] * 1000, b[i]);
	}
	sort(r, rounds, sizeof(r[0]), cmp_u64, NULL);
	return n + scnprintf(tu_result + n, RESULT_MAX - n,
			     "ratio %s/%s %llu.%03llu min %llu.%03llu max %llu.%03llu\n",
			     name, base, div_u64(r[rounds / 2], 1000), r[rounds / 2] % 1000,
			     div_u64(r[0], 1000), r[0] % 1000,
			     div_u64(r[rounds - 1], 1000), r[rounds - 1] % 1000);
}

int run_bench(struct ib_device *dev, enum ib_poll_context poll, u32 ops,
	      bool full)
{
	struct bench_figs *f;
	u32 per_round = ops / BENCH_ROUNDS;
	u32 per_thread = ops / (NT * BENCH_4WAY_ROUNDS);
	struct contend_set *cs, *cg;
	struct loop *l;
	const char *stage;
	unsigned int r, i, k;
	size_t n = 0;
	u64 wrs;
	s64 v;
	int err = 0;
	u32 w;

	if (per_round == 0 || per_thread == 0 || ops > 100000 ||
	    poll == IB_POLL_DIRECT)
		return -EINVAL;
	cs = kzalloc(sizeof(*cs), GFP_KERNEL);
	cg = kzalloc(sizeof(*cg), GFP_KERNEL);
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!cs || !cg || !f) {
		kfree(cs);
		kfree(cg);
		kfree(f);
		return -ENOMEM;
	}
	l = &cs->l;
	tu_result[0] = 0;
	stage = contend_setup(cs, dev, poll, ops, &err);
	if (!stage) {
		/* The same threads' QPs, attached in one group. */
		cg->l.mode = QP_ATTACH_GROUP;
		cg->l.group = true;
		stage = contend_setup(cg, dev, poll, ops, &err);
	}
	if (stage) {
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
		goto out;
	}
	for (w = 0; w < WORDS_PER_PAGE; w++)
		WRITE_ONCE(l->target[w], 0x5555555555555555ULL + w);
	/*
	 * The figures are taken in rounds, each kind in turn, in alternating
	 * order, so that a drift of the machine's speed (an emulated CPU's is
	 * large) weighs on all of them alike; each shows its mean, and its
	 * lowest and highest round.
	 */
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (i = 0; i < ARRAY_SIZE(kinds); i++) {
			k = bench_order(r, i, ARRAY_SIZE(kinds));
			if (!full && !kinds[k].short_run)
				continue;
			if (kinds[k].verbs) {
				v = bench_verbs_cas(l, per_round);
				wrs = per_round;
			} else {
				v = bench_seq(l, kinds[k].opcode, per_round,
					      kinds[k].cold, &wrs);
			}
			fig_add(&f->seq[k], v, wrs, per_round);
			f->per[k][r] = v;
		}
	}
	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		if (full || kinds[k].short_run)
			n = bench_line(n, kinds[k].name, &f->seq[k], "ns/op");
	/* Kind 1 is the native CAS through mlx_ext, the others' baseline. */
	for (k = 0; full && k < ARRAY_SIZE(kinds); k++)
		if (k != 1)
			n = bench_ratio(n, kinds[k].name, kinds[1].name, f->per[k], f->per[1],
					BENCH_ROUNDS);
	if (!full)
		goto out;
	for (r = 0; r < BENCH_4WAY_ROUNDS; r++) {
		for (i = 0; i < ARRAY_SIZE(kinds_4way); i++) {
			k = bench_order(r, i, ARRAY_SIZE(kinds_4way));
			v = bench_4way(kinds_4way[k].group ? cg : cs,
				       kinds_4way[k].opcode, per_thread,
				       kinds_4way[k].shared, &wrs);
			fig_add(&f->way[k], v, wrs, per_thread * NT);
			f->per_4way[k][r] = v;
		}
	}
	for (k = 0; k < ARRAY_SIZE(kinds_4way); k++)
		n = bench_line(n, kinds_4way[k].name, &f->way[k], "ops/s");
	/* Throughputs: kinds 1 and 3 (masked) over kinds 0 and 2 (plain). */
	n = bench_ratio(n, kinds_4way[1].name, kinds_4way[0].name, f->per_4way[1],
			f->per_4way[0], BENCH_4WAY_ROUNDS);
	n = bench_ratio(n, kinds_4way[3].name, kinds_4way[2].name, f->per_4way[3],
			f->per_4way[2], BENCH_4WAY_ROUNDS);
	/* The group's masked FA over the native FA, a QP per thread both. */
	n = bench_ratio(n, kinds_4way[4].name, kinds_4way[0].name, f->per_4way[4],
			f->per_4way[0], BENCH_4WAY_ROUNDS);
out:
	contend_teardown(cs);
	contend_teardown(cg);
	kfree(cs);
	kfree(cg);
	kfree(f);
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
atomic_t lastfail_softirq = ATOMIC_INIT(-1);

static void burst_done(struct mlx_ext_atomic *op)
{
	struct burst *b = op->context;

	if (op->status)
		atomic_set(&lastfail_softirq, !!in_serving_softirq());

	if (atomic_dec_and_test(&b->left))
		complete(&b->all);
}

int run_burst(struct ib_device *dev, enum ib_poll_context poll, u32 n)
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
				snprintf(tu_result, RESULT_MAX,
					 "bad round %u op %u: own field %llu (response %016llx)\n",
					 r, i, (resp >> (8 * i)) & 0xff, resp);
				stage = "bad";
				goto out;
			}
			for (j = 0; j < i; j++) {
				bool i_saw_j = ((resp >> (8 * j)) & 0xff) == r + 1;
				bool j_saw_i = ((b->op[j].response >> (8 * i)) & 0xff) == r + 1;

				if (i_saw_j == j_saw_i) {
					snprintf(tu_result, RESULT_MAX,
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
			snprintf(tu_result, RESULT_MAX, "bad final field %u: %016llx\n", i,
				 READ_ONCE(l.target[0]));
			stage = "bad";
			goto out;
		}
	}
	snprintf(tu_result, RESULT_MAX, "ok ops %u attempts %llu word %016llx\n",
		 n * BURST_ROUNDS, attempts, READ_ONCE(l.target[0]));
out:
	loop_destroy(&l);
	kfree(b);
	if (stage && strcmp(stage, "bad"))
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
	return 0;
}

/*
 * flight: @depth operations kept in flight on one QP, the first @depth
 * posted here with @gfp, each reposted from
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

int run_flight(struct ib_device *dev, enum ib_poll_context poll, u32 depth,
	       u32 ops, const char *kind, gfp_t gfp)
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
		if (!flight_post(f, &f->op[i], gfp))
			break;
	flight_put(f);
	if (!wait_for_completion_timeout(&f->all, msecs_to_jiffies(120000))) {
		/* Still in flight: leak f rather than free it under them. */
		snprintf(tu_result, RESULT_MAX, "err timeout %d\n", -ETIMEDOUT);
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
		snprintf(tu_result, RESULT_MAX, "bad ok %d word %016llx\n",
			 atomic_read(&f->ok), word);
		goto free;
	}
	snprintf(tu_result, RESULT_MAX, "ok ops %u ns_per_op %llu attempts %lld\n", ops,
		 div_u64(ns, ops), (s64)atomic64_read(&f->attempts));
out:
	if (stage)
		snprintf(tu_result, RESULT_MAX, "err %s %d\n", stage, err);
free:
	loop_destroy(&f->l);
	kfree(f);
	return 0;
}
