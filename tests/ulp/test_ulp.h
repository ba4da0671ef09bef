/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mlx_ext_test_ulp: what its files share. main.c is the module (the ctl
 * file and its commands, the devices, "hold"); connection.c the loopback
 * connections; datapath.c, errors.c and guid.c the commands' runs.
 */
#ifndef MLX_EXT_TEST_ULP_H
#define MLX_EXT_TEST_ULP_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/notifier.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#define NWORDS 8
#define TIMEOUT_MS 5000
#define RESULT_MAX 4096

extern char tu_result[RESULT_MAX];

/* How the API's QPs are made and ended ("qpmode"). */
enum qp_mode { QP_CREATE, QP_ATTACH, QP_ATTACH_DRAIN, QP_ATTACH_GROUP };
extern enum qp_mode qp_mode;

/* What one connection holds: the requester side A (PD, CQ, QP qa, a reply
 * word) and the responder side B (PD, CQ, QP qb, an FRWR region over one
 * page of NWORDS target words), on one device (loopback) or two.
 */
struct loop {
	/* Of xqa and the contenders' QPs: qpmode's, unless @group is set
	 * before loop_setup_api(), with the mode of xqa; the contenders'
	 * QPs then join xqa's group (attached, QP_ATTACH_GROUP).
	 */
	enum qp_mode mode;
	bool group;
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
	/* Set before loop_setup_api(): qa goes to INIT only (a QP posted on
	 * before it reaches RTS).
	 */
	bool qa_init_only;
};

struct op {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

#define ALL_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		    IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/* The kinds of run_api: as "atomics" std and masked, or 4-byte operations. */
enum api_kind { API_STD, API_MASKED, API_NARROW };

/* The GUID-change notifications seen, per device, port and function. */
struct guidev {
	char dev[IB_DEVICE_NAME_MAX];
	u32 port;
	u16 function;
	u32 calls;
	bool up;
	u32 count;
};

/* connection.c */
extern atomic_t api_other;
extern atomic_t api_at_end;
void tu_op_init(struct op *op);
int tu_op_wait(struct loop *l, struct op *op);
int qp_to_init(struct ib_qp *qp, int access, bool *live);
int qp_to_reset(struct ib_qp *qp, bool *live);
int connect_qp(struct ib_qp *qp, struct ib_qp *dest, int access, u8 rd_atomic,
	       bool *live);
struct mlx_ext_qp *xqp_make(enum qp_mode mode, struct ib_pd *pd,
			    struct ib_qp_init_attr *init, u32 create_flags,
			    struct mlx_ext_qp *member, struct ib_qp **qp,
			    const char **stage);
void xqp_end(enum qp_mode mode, struct mlx_ext_qp *xqp, struct ib_qp *qp,
	     bool live, atomic_t *pending);
void loop_destroy(struct loop *l);
const char *loop_setup_api(struct loop *l, struct ib_device *dev,
			   struct ib_device *dev_b, enum ib_poll_context poll,
			   int qp_access, int mr_access, bool api,
			   u32 api_flags, int *err);
const char *loop_setup(struct loop *l, struct ib_device *dev,
		       struct ib_device *dev_b, enum ib_poll_context poll,
		       int qp_access, int mr_access, int *err);
int tu_post_atomic(struct loop *l, struct op *op, enum ib_wr_opcode opcode,
		   u64 addr, u32 rkey, u32 len, u64 a, u64 amask, u64 b, u64 bmask);
u64 mix64(u64 z);
u64 next_u64(u64 *state);
u64 word_addr(struct loop *l, unsigned int w);

/* datapath.c */
extern atomic_t lastfail_softirq;
int run_atomics(struct ib_device *dev, struct ib_device *dev_b,
		enum ib_poll_context poll, u64 seed, u32 count, bool masked,
		bool be);
int run_api(struct ib_device *dev, struct ib_device *dev_b,
	    enum ib_poll_context poll, u64 seed, u32 count,
	    enum api_kind kind, u32 flags);
int run_contend(struct ib_device *dev, enum ib_poll_context poll, u32 ops);
int run_group(struct ib_device *dev, enum ib_poll_context poll, const char *how);
int run_bench(struct ib_device *dev, enum ib_poll_context poll, u32 ops,
	      bool full);
int run_burst(struct ib_device *dev, enum ib_poll_context poll, u32 n);
int run_flight(struct ib_device *dev, enum ib_poll_context poll, u32 depth,
	       u32 ops, const char *kind, gfp_t gfp);

/* errors.c */
extern int sync_ret;
int run_abi(struct ib_device *dev);
int run_apiflags(struct ib_device *dev);
int run_attachflags(struct ib_device *dev, struct ib_device *other);
int run_syncself(struct ib_device *dev, enum ib_poll_context poll);
enum destroy_how { DESTROY_SEND, DESTROY_RECV, DESTROY_ATTACHED };
int run_destroyself(struct ib_device *dev, enum destroy_how how);
int run_syncwait(struct ib_device *dev);
enum early_state { EARLY_INIT, EARLY_RTS, EARLY_REUSE };
int run_early(struct ib_device *dev, enum early_state state, gfp_t gfp);
int run_errors(struct ib_device *dev, enum ib_poll_context poll);

/* guid.c */
extern struct ib_sa_client tu_sa_client;
extern spinlock_t guidev_lock;
extern struct notifier_block guid_nb;
struct guidev *guidev_find(const char *dev, u32 port, u16 function, bool add);
int run_guidinfo(struct ib_device *dev, const char *args);

#endif /* MLX_EXT_TEST_ULP_H */
