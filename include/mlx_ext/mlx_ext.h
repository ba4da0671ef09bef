/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mlx_ext: masked atomics and big-endian atomic replies for in-kernel RDMA
 * ULPs. The guide, with a complete example, is Documentation/ulp-api.rst.
 *
 * Compatibility: MLX_EXT_API_VERSION is (major << 16 | minor). Within one
 * major version, calls, structures and values only grow: a ULP built
 * against 1.x works with every 1.y where y >= x. New fields of struct
 * mlx_ext_atomic and struct mlx_ext_caps are only added at their end, and
 * only where a zeroed value means "as before"; reserved fields and unknown
 * flag bits must be zero (-EINVAL). A ULP can check mlx_ext_api_version()
 * at run time; modinfo mlx_ext shows it as api_version.
 *
 * Checked at every call (since 1.3): the kernel this builds for has no
 * MODVERSIONS (6.12's CONFIG_RUST excludes it), so nothing else would
 * notice a ULP built against another header. Each call that takes one of
 * mlx_ext's structures is a macro over a versioned symbol that also
 * receives the header's MLX_EXT_API_VERSION and the structure's sizeof:
 * another major version, a newer minor one than the loaded mlx_ext, or
 * another size is refused with -EINVAL and a message naming the caller.
 * The symbols carry the major version (mlx_ext_post_atomic_v1), so a ULP
 * of another major does not load at all. When a structure grows within a
 * major, the smaller size of an older minor will be accepted, and only
 * that many bytes read and written. A ULP built against 1.2 or earlier
 * calls the unversioned symbols of then, which stay (1.3 kept the
 * structures' layout). struct mlx_ext_guid_event, which mlx_ext hands to
 * notifiers, carries no size: it only grows at its end.
 *
 * Contexts (each function's kernel-doc says it again; the table is in
 * Documentation/ulp-api.rst, "Contexts and lifetimes"):
 *   mlx_ext_api_version(), mlx_ext_query_caps(), mlx_ext_qp_ib(): any.
 *   mlx_ext_post_atomic(): any context ib_post_send() may be called from,
 *     with a gfp_t that suits it (GFP_ATOMIC where it cannot sleep).
 *   mlx_ext_init_qp_attr(): any; does not sleep.
 *   mlx_ext_attach_qp(), mlx_ext_detach_qp(): process context; sleep (an
 *     rdma_cm event handler is fine).
 *   mlx_ext_create_qp(), mlx_ext_destroy_qp(): process context; sleep.
 *   mlx_ext_detach_qp() never from the send CQ's own completion context,
 *     mlx_ext_destroy_qp() never from its send or receive CQ's (a warning).
 *   mlx_ext_atomic(): process context; sleeps, killable. Never from the
 *     send CQ's own completion context (-EDEADLK).
 *   mlx_ext_(un)register_guid_notifier(): process context; sleep.
 *   Callbacks: @done of struct mlx_ext_atomic runs in the send CQ's
 *     completion context (softirq for IB_POLL_SOFTIRQ, the CQ's work item
 *     for IB_POLL_WORKQUEUE and IB_POLL_UNBOUND_WORKQUEUE, the polling
 *     thread for IB_POLL_DIRECT; or, for operations still waiting when
 *     mlx_ext_destroy_qp() could not drain the QP, its caller) and must not
 *     sleep; GUID notifiers run in process context (a work item).
 *
 * Devices: pass a device the ULP holds (between its ib_client's add and
 * remove, or with a reference such as rdma_cm's on a cm_id's device). A
 * call that races mlx_ext's own removal of the device sees its record whole
 * or gets -ENODEV: an rdma_cm user, told of a removal after mlx_ext's
 * remove, needs nothing more.
 */
#ifndef _MLX_EXT_MLX_EXT_H
#define _MLX_EXT_MLX_EXT_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/notifier.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define MLX_EXT_API_VERSION_MAJOR 1
#define MLX_EXT_API_VERSION_MINOR 5
#define MLX_EXT_API_VERSION \
	((MLX_EXT_API_VERSION_MAJOR << 16) | MLX_EXT_API_VERSION_MINOR)

/**
 * mlx_ext_api_version - the MLX_EXT_API_VERSION the loaded mlx_ext was
 * built with. Context: any.
 */
u32 mlx_ext_api_version(void);

/*
 * QP create flag: the ULP accepts atomic replies from an adapter that
 * writes them big-endian on this little-endian host (Connect-IB; the
 * device's cap is MLX_EXT_ATOMIC_HCA_REPLY_BE). mlx_ext then converts every
 * response to host order and keeps the raw value in raw_response. Bit 27,
 * in the range ib_core reserves for drivers, clear of the bits mlx4 and mlx5
 * use there. Only mlx_ext_create_qp() knows it: it is taken out before
 * ib_create_qp(), so no driver sees it. -EINVAL on any other device.
 */
#define MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY BIT(27)
static_assert(MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY ==
	      ((u32)IB_QP_CREATE_RESERVED_START << 1));

/* A device's atomic capability, as /sys/class/infiniband/<dev>/mlx_ext/ */
enum mlx_ext_atomic_cap {
	MLX_EXT_ATOMIC_NONE = 0,	/* IB_ATOMIC_NONE */
	MLX_EXT_ATOMIC_HCA = 1,		/* IB_ATOMIC_HCA */
	MLX_EXT_ATOMIC_GLOB = 2,	/* IB_ATOMIC_GLOB */
	MLX_EXT_ATOMIC_HCA_REPLY_BE = 3,	/* HCA, reply big-endian */
};

/* How masked atomics posted through mlx_ext are carried out on a device */
enum mlx_ext_masked_mode {
	MLX_EXT_MASKED_NATIVE = 0,	/* one masked work request */
	MLX_EXT_MASKED_EMULATED = 1,	/* compare-and-swap loop */
	MLX_EXT_MASKED_UNAVAILABLE = 2,	/* refused: -EOPNOTSUPP */
};

/* Operand sizes, as a bit mask of sizes in bytes (MLNX_OFED's style) */
#define MLX_EXT_ATOMIC_SIZE_4 BIT(2)	/* since 1.3 */
#define MLX_EXT_ATOMIC_SIZE_8 BIT(3)

/**
 * struct mlx_ext_caps - a device's capability record
 * @atomic_cap: standard atomics (the device: silicon and driver)
 * @masked_atomic_cap: masked atomics (the device)
 * @masked_mode: what a ULP gets through mlx_ext; may drop to
 *               MLX_EXT_MASKED_UNAVAILABLE at run time (a driver mlx_ext does
 *               not know refused an atomic work request)
 * @standard: non-zero if standard atomics posted through mlx_ext work
 * @sizes: operand sizes carried out (MLX_EXT_ATOMIC_SIZE_*)
 */
struct mlx_ext_caps {
	enum mlx_ext_atomic_cap atomic_cap;
	enum mlx_ext_atomic_cap masked_atomic_cap;
	enum mlx_ext_masked_mode masked_mode;
	u32 standard;
	u32 sizes;
};

/**
 * mlx_ext_query_caps - fill @caps with @dev's record
 *
 * Context: any; does not sleep.
 * Returns 0, -EINVAL for a NULL @caps or a ULP built against another header
 * (above), or -ENODEV if mlx_ext has no record of @dev (it failed to add
 * it, which it logged, or its removal of @dev has begun).
 */
#define mlx_ext_query_caps(dev, caps) \
	mlx_ext_query_caps_v1(dev, caps, MLX_EXT_API_VERSION, \
			      sizeof(struct mlx_ext_caps))
int mlx_ext_query_caps_v1(struct ib_device *dev, struct mlx_ext_caps *caps,
			  u32 api_version, size_t size);

struct mlx_ext_qp;

/*
 * Masked atomics on a QP the ULP creates and owns (since 1.2), the way
 * rdma_rw works with a ULP's QPs: before rdma_create_qp() or ib_create_qp(),
 * mlx_ext_init_qp_attr() adds mlx_ext's room to the attributes; once the QP
 * exists, mlx_ext_attach_qp() gives the handle that mlx_ext_post_atomic()
 * and mlx_ext_atomic() take; mlx_ext_detach_qp() ends it before the ULP
 * destroys the QP. The ULP moves the QP through its states (rdma_cm does),
 * drains and destroys it. Documentation/ulp-api.rst, "Attaching to your
 * own QP".
 */

/**
 * mlx_ext_init_qp_attr - make room in @attr for mlx_ext's operations
 * @dev: the device the QP will be created on
 * @attr: the attributes the ULP is about to create its QP with
 * @max_ops: how many mlx_ext operations the ULP keeps in flight on the QP
 *
 * Adds @max_ops to @attr->cap.max_send_wr (each operation has at most one
 * work request posted at a time) and makes @attr->cap.max_send_sge at
 * least 1. The room for the ULP's own work requests, and for its own
 * ib_drain_qp(), stays the ULP's to ask for; so does the send CQ's size,
 * which must also hold @max_ops more completions. With rdma_cm, also ask for
 * atomics in the connection: initiator_depth (and, on the responder,
 * responder_resources) of struct rdma_conn_param at least 1.
 *
 * Context: any; does not sleep.
 * Returns 0; -EINVAL when @attr is not for an IB_QPT_RC QP or the sum does
 * not fit; -ENODEV as mlx_ext_query_caps().
 */
int mlx_ext_init_qp_attr(struct ib_device *dev, struct ib_qp_init_attr *attr,
			 u32 max_ops);

/*
 * Flag of mlx_ext_attach_qp(): the ULP accepts atomic replies from an
 * adapter that writes them big-endian on this little-endian host
 * (Connect-IB: the device's cap is MLX_EXT_ATOMIC_HCA_REPLY_BE). mlx_ext
 * converts every response to host order and keeps the raw value in
 * raw_response. Required on such a device, refused elsewhere.
 */
#define MLX_EXT_QP_ATOMIC_BE_REPLY BIT(0)

/**
 * mlx_ext_attach_qp - let mlx_ext post atomics on the ULP's QP @qp
 * @qp: an IB_QPT_RC QP the ULP created (rdma_create_qp(), ib_create_qp())
 *      and keeps owning; its send CQ in the ib_cqe model: from
 *      ib_alloc_cq() or the CQ pool (IB_POLL_DIRECT is fine when the ULP
 *      polls it with ib_process_cq_direct()), not ib_create_cq() with a
 *      comp_handler. The receive CQ and an SRQ are the ULP's business:
 *      mlx_ext posts no receives.
 * @flags: 0 or MLX_EXT_QP_ATOMIC_BE_REPLY (see there)
 *
 * One handle per QP. The QP may be in any state: operations posted before
 * it reaches RTS fail as ib_post_send() fails them, and teach mlx_ext
 * nothing about the device (Documentation/atomics.rst).
 *
 * Context: process context; may sleep (an rdma_cm event handler is fine).
 * Returns the handle, or an ERR_PTR: -EINVAL (@qp not RC, a send CQ not in
 * the ib_cqe model, an unknown flag, MLX_EXT_QP_ATOMIC_BE_REPLY missing on
 * a big-endian-reply device or given on another), -ENODEV as
 * mlx_ext_query_caps(), -ENOMEM.
 */
struct mlx_ext_qp *mlx_ext_attach_qp(struct ib_qp *qp, u32 flags);

/**
 * mlx_ext_attach_qp_group - mlx_ext_attach_qp(), in the group of @member
 * @qp: as for mlx_ext_attach_qp(); its send CQ must be @member's
 * @flags: as for mlx_ext_attach_qp()
 * @member: a handle of the group to join (any of its QPs, attached or
 *          created, valid during the call); NULL: a group of one, as
 *          mlx_ext_attach_qp()
 *
 * Emulated operations on one word combine: those posted while a
 * compare-and-swap on the word is in flight are carried out together by
 * its next one. Without a group only the operations of one QP combine,
 * since two QPs may reach different nodes, or remote QPs of different
 * protection domains, with the same rkey and address. In a group they
 * combine across its QPs, and by joining the ULP says that they may: an
 * rkey and address that any of its operations on a QP of the group names
 * the same remote word through every QP of the group, with the same
 * access (for example the connections of one session to one peer, whose
 * region is registered once). A batch's compare-and-swap is posted on the
 * QP of its first operation; the others' outcomes follow its completion
 * (an operation of a QP in ERR may still be carried out by another's, and
 * one carried by a compare-and-swap that completes in error ends with its
 * error), and an operation carried by another QP is not ordered with its
 * own QP's earlier work requests. An operation with MLX_EXT_ATOMIC_FENCE
 * joins only batches posted on its own QP. The QPs share one send CQ, so
 * that every @done still runs in that CQ's context. A detach or destroy
 * may wait for another QP of the group that carries the QP's operations.
 * The group lives as long as one of its QPs; each is detached or destroyed
 * on its own, at any time. Since 1.4; Documentation/ulp-api.rst, "Groups
 * of QPs".
 *
 * Context: as mlx_ext_attach_qp().
 * Returns as mlx_ext_attach_qp(); also -EINVAL when @member is a QP of
 * another device or an error pointer, or @qp's send CQ is not @member's.
 */
struct mlx_ext_qp *mlx_ext_attach_qp_group(struct ib_qp *qp, u32 flags,
					   struct mlx_ext_qp *member);

/**
 * mlx_ext_detach_qp - end @mqp: no new operations, the pending ones over
 *
 * Once it is called, no thread may post on @mqp but its own @done callbacks,
 * to which mlx_ext_post_atomic() returns -ESHUTDOWN. It waits until every
 * operation pending on the QP has ended and its @done has returned:
 * completed normally, flushed (-ECANCELED) if the QP went to ERR, or
 * -ESHUTDOWN for an emulated operation stopped between two of its work
 * requests (in a group, an operation another QP carries completes as that
 * QP's work request does). Then it frees the handle; the QP stays the
 * ULP's, untouched.
 * Call it before destroying the QP, before or after the ULP's
 * ib_drain_qp(). A QP that stays in RTS with its peer gone completes its
 * operations when the transport gives up (retries exceeded): move it to
 * ERR (rdma_disconnect() does) to end them at once. Never move the QP to
 * RESET while operations are in flight: a reset discards work requests
 * without completions. With an IB_POLL_DIRECT send CQ, completions arrive
 * only when the ULP polls: do not call it from the only thread that polls
 * while operations are pending.
 *
 * Context: process context; sleeps. Never from the send CQ's completion
 * context (a @done callback, or another handler run by the same CQ's work
 * item), whose completions it would wait for: an error line says so at
 * every such call (rate-limited), with a backtrace the first time.
 */
void mlx_ext_detach_qp(struct mlx_ext_qp *mqp);

/**
 * mlx_ext_create_qp - create an RC QP in @pd that mlx_ext can post atomics on
 * @attr: as for ib_create_qp(), plus mlx_ext's create flags. @attr->send_cq
 *        and @attr->recv_cq must come from ib_alloc_cq() (or the CQ pool),
 *        not IB_POLL_DIRECT; no SRQ. Reserve in @attr->cap.max_send_wr one
 *        work request per mlx_ext operation you keep in flight: each has at
 *        most one posted at a time. mlx_ext adds the room its drain needs
 *        at destroy itself (and leaves it out of what it writes back).
 *
 * Context: process context; sleeps.
 * As ib_create_qp() does, it writes the capabilities granted back into
 * @attr->cap. The returned QP owns its struct ib_qp: use mlx_ext_qp_ib() to modify it and
 * to post your own work requests, never ib_destroy_qp(). Returns an ERR_PTR:
 * -EINVAL for MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY on a device whose cap is not
 * MLX_EXT_ATOMIC_HCA_REPLY_BE, for a CQ that is IB_POLL_DIRECT or not from
 * ib_alloc_cq(), for an SRQ, or a QP type other than IB_QPT_RC; -ENODEV as
 * mlx_ext_query_caps(); -ENOMEM; or what ib_create_qp() returned.
 *
 * Deprecated in 1.x, kept for the ULPs that use it: mlx_ext_init_qp_attr(),
 * ib_create_qp() (or rdma_create_qp()) and mlx_ext_attach_qp() do the same
 * on a QP the ULP owns.
 */
struct mlx_ext_qp *mlx_ext_create_qp(struct ib_pd *pd,
				     struct ib_qp_init_attr *attr);

/**
 * mlx_ext_qp_ib - the struct ib_qp of @qp (created or attached). Context: any.
 */
struct ib_qp *mlx_ext_qp_ib(struct mlx_ext_qp *qp);

/**
 * mlx_ext_destroy_qp - move @qp to ERR, drain it, and destroy it
 *
 * Every mlx_ext operation still pending completes first, with -ECANCELED
 * (flushed) or -ESHUTDOWN (an emulated operation stopped between two of its
 * work requests); so do your own work requests (flushed). In a group
 * (mlx_ext_attach_qp_group()) its operations that another QP's
 * compare-and-swap carries complete as that one does, and it waits for
 * them. Afterwards no callback runs for @qp.
 *
 * Context: process context; sleeps. Never from the completion context of
 * the QP's send CQ, nor, for a QP mlx_ext created, its receive CQ (a @done
 * callback, or another handler run by the same CQ's work item), whose
 * completions its drain would wait for: it says so as mlx_ext_detach_qp()
 * does. An attached QP is only detached, which waits for nothing of its
 * receive CQ.
 *
 * As for ib_drain_qp(): no other thread may post on @qp (through mlx_ext or
 * not) once this is called; posting from the QP's own completion callbacks
 * while it runs is fine (mlx_ext_post_atomic() returns -ESHUTDOWN). Never
 * move the QP to RESET yourself while mlx_ext operations are in flight: a
 * reset discards work requests without completions. Given a handle of
 * mlx_ext_attach_qp(), it detaches it (with a warning) and destroys
 * nothing: that QP is the ULP's.
 *
 * Deprecated in 1.x, kept for the ULPs that use it: a ULP that creates its
 * QPs with rdma_cm owns them, and attaches them (mlx_ext_attach_qp(),
 * mlx_ext_detach_qp()), as rdma_rw's users do.
 */
void mlx_ext_destroy_qp(struct mlx_ext_qp *qp);

/* The operations; operands as struct ib_atomic_wr names them */
enum mlx_ext_atomic_opcode {
	MLX_EXT_ATOMIC_CMP_SWP = 0,	/* compare_add = compare, swap */
	MLX_EXT_ATOMIC_FETCH_ADD = 1,	/* compare_add = add */
	/* compare_add = compare, compare_add_mask = compare mask, swap, swap_mask */
	MLX_EXT_MASKED_CMP_SWP = 2,
	/* compare_add = add, compare_add_mask = field boundary */
	MLX_EXT_MASKED_FETCH_ADD = 3,
};

/*
 * Flags of struct mlx_ext_atomic (since 1.3). MLX_EXT_ATOMIC_FENCE: every
 * work request of the operation carries IB_SEND_FENCE, so it starts only
 * once the QP's earlier RDMA reads and atomics have completed (an emulated
 * operation's compare-and-swaps each carry it, and so does the one it
 * shares with others).
 */
#define MLX_EXT_ATOMIC_FENCE 0x1

struct mlx_ext_atomic;

typedef void (*mlx_ext_atomic_done_t)(struct mlx_ext_atomic *op);

/**
 * struct mlx_ext_atomic - one atomic operation on a remote 8-byte word
 *
 * Filled by the ULP (zero it first):
 * @opcode: enum mlx_ext_atomic_opcode
 * @size: operand size in bytes: 8, or 4 (since 1.3): the 4 bytes at
 *	  @remote_addr, carried out as the masked operation on their aligned
 *	  8-byte word that changes only them; operands in their low 32 bits:
 *	  @compare_add and @swap must fit (-EINVAL), and of the masks
 *	  (@compare_add_mask, @swap_mask) only the low 32 bits are read (since
 *	  1.5, so that all-ones 64-bit masks mean all 32 bits; before, -EINVAL)
 * @flags: MLX_EXT_ATOMIC_* bits (since 1.3); others must be zero
 * @remote_addr: the word's address, aligned to @size
 * @rkey: the remote key of the region holding it (remote atomic access)
 * @compare_add, @compare_add_mask, @swap, @swap_mask: the operands
 * @done: called once when the operation is over, from the send CQ's
 *        context (softirq or work item); may post again, may not sleep.
 *        Not called when mlx_ext_post_atomic() returns an error.
 * @context: the ULP's, untouched
 *
 * Filled by mlx_ext before @done:
 * @status: 0, or a negative errno: -ECANCELED flushed (QP in error or being
 *          destroyed) and -ETIMEDOUT transport retries exceeded, both with
 *          the outcome UNKNOWN (the responder may have carried it out: a
 *          flushed compare-and-swap may hold the lock it took);
 *          -ECONNABORTED an emulated operation that waited behind a
 *          compare-and-swap that was flushed or timed out (not carried
 *          out: those of its compare-and-swaps that reached the wire
 *          failed their comparison and changed nothing; since 1.3),
 *          -ESHUTDOWN stopped by mlx_ext_destroy_qp() or
 *          mlx_ext_detach_qp() before or between the compare-and-swaps of
 *          an emulation (not carried out), -EACCES remote access refused
 *          (rkey, rights, bounds), -EREMOTEIO invalid request at the
 *          responder, -EINVAL local length error, -EFAULT local protection
 *          or access error, -EAGAIN an emulation that lost the race to
 *          other writers 1024 times (not carried out: post it again), -EIO
 *          any other completion status; or, when posting a further
 *          compare-and-swap of an emulation failed, what ib_post_send()
 *          returned (-ENOMEM: send queue full; -EOPNOTSUPP)
 * @wc_status: the ib_wc_status of the work completion that ended the
 *             operation (a combined one's: its batch's; one that waited
 *             behind a failed compare-and-swap: that failure's), or
 *             IB_WC_SUCCESS when no completion ended it
 * @response: the word's value before the operation, in host order (for a
 *            4-byte operation, its 4 bytes' value, in the low 32 bits)
 * @raw_response: the 8 bytes the adapter wrote, unconverted: big-endian on
 *                a MLX_EXT_ATOMIC_HCA_REPLY_BE device, host order elsewhere
 *                (a native load of the reply buffer); for an emulated
 *                operation that shared a compare-and-swap and was not its
 *                first, the word's value before it in that same byte
 *                order; for a 4-byte operation, of its whole 8-byte word
 * @attempts: work requests the operation took part in (1 unless emulated)
 *
 * The structure belongs to mlx_ext from a successful mlx_ext_post_atomic()
 * until @done is called.
 */
struct mlx_ext_atomic {
	u32 opcode;
	u32 size;
	u64 remote_addr;
	u32 rkey;
	u32 flags;
	u64 compare_add;
	u64 compare_add_mask;
	u64 swap;
	u64 swap_mask;
	mlx_ext_atomic_done_t done;
	void *context;

	int status;
	u32 wc_status;
	u64 response;
	u64 raw_response;
	u32 attempts;
	u32 reserved;	/* must be zero */
};

/**
 * mlx_ext_post_atomic - start @op on @qp; @op->done tells the outcome
 * @gfp: for the QP's pool of mlx_ext's per-operation state, when more
 *       operations are pending at once than it holds and it grows by 8
 *       (GFP_ATOMIC or GFP_NOWAIT where the caller cannot sleep), taken as
 *       it is, modifiers included (__GFP_NOWARN, __GFP_NORETRY,
 *       __GFP_ACCOUNT); no allocation otherwise.
 *       One that allows blocking (gfpflags_allow_blocking()) also lets
 *       mlx_ext call ib_query_qp() once when the driver refuses the
 *       request (-EINVAL or -EOPNOTSUPP), to tell a QP not in RTS from a
 *       driver that lacks the opcode: a firmware command on mlx4 and mlx5,
 *       made only for a refused post. Only a refusal that follows a query
 *       answered RTS teaches mlx_ext about the device; with any other @gfp
 *       a refused masked request or fetch-and-add is emulated that once
 *
 * Context: any context ib_post_send() may be called from, @op->done of
 * this QP's operations included (with a @gfp that suits it).
 * Returns 0, or a negative errno and @op->done is not called: -EINVAL (a
 * bad opcode or size, a misaligned address, no @done, unknown @flags, a
 * non-zero @reserved, a 4-byte operation's value over 32 bits, a ULP
 * built against another header), -EOPNOTSUPP (masked or 4-byte atomics
 * unavailable on the device, or standard ones not
 * posted by its driver; a big-endian-reply device and a QP created without
 * MLX_EXT_QP_CREATE_ATOMIC_BE_REPLY), -ESHUTDOWN (the QP is being
 * destroyed or detached), -ENOMEM, or what ib_post_send() returned.
 *
 * Ordering: a native or standard operation is one work request, ordered
 * with the QP's other work requests as any atomic is. An emulated masked
 * operation is a series of compare-and-swaps, each posted when the previous
 * one completed: it takes effect at its last one, so work requests posted
 * after this call may execute before it takes effect. Emulated operations
 * of one QP on one word take effect in the order they were posted (they
 * may share one compare-and-swap: Documentation/ulp-api.rst, "Ordering").
 * Wait for @done where order matters.
 */
#define mlx_ext_post_atomic(qp, op, gfp) \
	mlx_ext_post_atomic_v1(qp, op, gfp, MLX_EXT_API_VERSION, \
			       sizeof(struct mlx_ext_atomic))
int mlx_ext_post_atomic_v1(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			   gfp_t gfp, u32 api_version, size_t size);

/**
 * mlx_ext_atomic - carry @op out on @qp and wait for it
 *
 * Context: process context; sleeps (killable). It posts a copy of @op and
 * waits for it, then fills @op's results (@op->done and @op->context are
 * ignored). Returns @op->status, mlx_ext_post_atomic()'s error, -ENOMEM,
 * -EINTR when a fatal signal ended the wait (the operation goes on: its
 * outcome is unknown, and @op is not written), or -EDEADLK (with a one-time
 * warning) where the wait could never end: in interrupt context, in the
 * completion work item of @qp's own send CQ (IB_POLL_WORKQUEUE), which
 * would have to deliver the completion it waits for, or on an attached QP
 * whose send CQ is IB_POLL_DIRECT (completions come when its owner polls).
 * Use mlx_ext_post_atomic() there.
 */
#define mlx_ext_atomic(qp, op) \
	mlx_ext_atomic_v1(qp, op, MLX_EXT_API_VERSION, \
			  sizeof(struct mlx_ext_atomic))
int mlx_ext_atomic_v1(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
		      u32 api_version, size_t size);

/*
 * GUID-change events of the VF GUID tables (since 1.1;
 * Documentation/vf-guids.rst): what user space sees in
 * /sys/class/infiniband/<dev>/iov/<function>/ports/<port>/guid_events and
 * state, for in-kernel users.
 */

/* The notifier action: a function's GUIDs changed on a port. */
#define MLX_EXT_GUID_CHANGE 1

/**
 * struct mlx_ext_guid_event - the data of an MLX_EXT_GUID_CHANGE
 * @device: the RDMA device
 * @port: the port
 * @function: the PCI function: 0 is the PF, n is VF n
 * @up: whether the function's port is up now (its base entry holds a valid
 *	GUID)
 * @count: the function's number of GUID-change events on the port so far
 *	(several changes may be told in one call: @count says how many there
 *	were)
 */
struct mlx_ext_guid_event {
	struct ib_device *device;
	u32 port;
	u16 function;
	bool up;
	u32 count;
};

/**
 * mlx_ext_register_guid_notifier - call @nb for every GUID-change event of
 * every VF GUID table, with action MLX_EXT_GUID_CHANGE and a
 * struct mlx_ext_guid_event * as data (valid during the call). A blocking
 * notifier: called in process context, from a work item of the port; it may
 * sleep, but must not unregister itself, nor wait for a device's removal.
 * Returns 0 or a negative errno.
 */
int mlx_ext_register_guid_notifier(struct notifier_block *nb);

/**
 * mlx_ext_unregister_guid_notifier - stop calling @nb; returns once no call
 * of it runs
 */
int mlx_ext_unregister_guid_notifier(struct notifier_block *nb);

#endif /* _MLX_EXT_MLX_EXT_H */
