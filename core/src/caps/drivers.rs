// SPDX-License-Identifier: GPL-2.0

//! One row per `enum rdma_driver_id` with a kernel driver: what its kernel
//! `post_send` does with the four atomic opcodes on an RC QP in RTS, read in
//! the 6.12.117 source (`drivers/infiniband/`; line numbers of that tree)
//! and read again in 7.3.4's: where 7.3 differs (irdma, mana, the new
//! ionic), the row is 7.3's and cites its lines, and the 6.12 driver's
//! attributes keep what it lacks from being posted. A driver's attributes
//! apply on top of its row: an opcode is posted only where the row carries
//! it out *and* `atomic_cap` (standard) or `masked_atomic_cap` (masked) is
//! not `none` (an mlx4 without `MLX4_DEV_CAP_FLAG_ATOMIC`,
//! hw/mlx4/main.c:551-553, has none).
//!
//! Not here, because no kernel ULP can reach them: efa (17) and usnic (13)
//! have no `post_send`, so ib_core does not make them kverbs providers and
//! skips every client but uverbs (core/device.c:268-303, 711-712; the same
//! in 7.3, core/device.c:285-312). CXGB3 (3) and NES (8) are values
//! without a driver; qib (16) is gone from 7.3, its row stays for 6.12.
//! bng_re (7.x) registers no ib_device and has no `driver_id` in 7.3.

use super::{Fate, KnownDriver};

/// `Fate::Refused(EINVAL)`, what most drivers answer an opcode they lack.
const EINVAL: Fate = Fate::Refused(crate::errno::EINVAL);
/// `Fate::Refused(EOPNOTSUPP)`: mlx5_ib and erdma.
const EOPNOTSUPP: Fate = Fate::Refused(crate::errno::EOPNOTSUPP);
const OK: Fate = Fate::Executed;

/// `enum rdma_driver_id` (include/uapi/rdma/ib_user_ioctl_verbs.h:235-258;
/// tied to the kernel's values at compile time in `rust/ib/device.rs`).
pub const DRIVER_MLX5: u32 = 1;
/// See [`DRIVER_MLX5`].
pub const DRIVER_MLX4: u32 = 2;
/// See [`DRIVER_MLX5`].
pub const DRIVER_CXGB4: u32 = 4;
/// See [`DRIVER_MLX5`].
pub const DRIVER_MTHCA: u32 = 5;
/// See [`DRIVER_MLX5`].
pub const DRIVER_BNXT_RE: u32 = 6;
/// See [`DRIVER_MLX5`].
pub const DRIVER_OCRDMA: u32 = 7;
/// `RDMA_DRIVER_IRDMA`, also `RDMA_DRIVER_I40IW`.
pub const DRIVER_IRDMA: u32 = 9;
/// See [`DRIVER_MLX5`].
pub const DRIVER_VMW_PVRDMA: u32 = 10;
/// See [`DRIVER_MLX5`].
pub const DRIVER_QEDR: u32 = 11;
/// See [`DRIVER_MLX5`].
pub const DRIVER_HNS: u32 = 12;
/// See [`DRIVER_MLX5`].
pub const DRIVER_RXE: u32 = 14;
/// See [`DRIVER_MLX5`].
pub const DRIVER_HFI1: u32 = 15;
/// See [`DRIVER_MLX5`].
pub const DRIVER_QIB: u32 = 16;
/// See [`DRIVER_MLX5`].
pub const DRIVER_SIW: u32 = 18;
/// See [`DRIVER_MLX5`].
pub const DRIVER_ERDMA: u32 = 19;
/// See [`DRIVER_MLX5`].
pub const DRIVER_MANA: u32 = 20;
/// `RDMA_DRIVER_IONIC` (7.3 include/uapi/rdma/ib_user_ioctl_verbs.h:259). Not
/// tied at compile time: 6.12's enum has no such value. A uapi value is
/// never renumbered.
pub const DRIVER_IONIC: u32 = 21;

/// `RDMA_NODE_RNIC` (include/uapi/rdma/rdma_netlink.h:157), the
/// `node_type` of an iWARP device (irdma in iWARP mode, qedr in iWARP mode,
/// iw_cxgb4, erdma in iWARP mode, siw).
pub const RDMA_NODE_RNIC: u32 = 4;

/// The rows; any other driver posts what its attributes say, until it
/// refuses an opcode at run time.
pub const KNOWN_DRIVERS: [KnownDriver; 17] = [
    // Caps: HCA iff MLX4_DEV_CAP_FLAG_ATOMIC, masked = atomic
    // (hw/mlx4/main.c:551-553). post_send: raddr + atomic segment for CAS,
    // FA and masked FA (hw/mlx4/qp.c:3610-3623, set_atomic_seg 3337-3351),
    // the 32-byte masked segment for masked CAS (qp.c:3625-3634).
    KnownDriver {
        driver_id: DRIVER_MLX4,
        name: "mlx4_ib",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: OK,
        masked_fetch_add: OK,
        iwarp_atomics: false,
        note: "mlx4_ib posts CAS, FA, masked CAS and masked FA when the firmware has atomics",
    },
    // Caps: HCA only with CAS+FA, 8-byte QP atomics and a host-endian reply
    // mode (hw/mlx5/main.c:719-739, 1107); masked always NONE (:1108).
    // post_send: CAS, FA and masked CAS -EOPNOTSUPP "not supported yet"
    // (hw/mlx5/wr.c:946-951); masked FA falls to `default:` (wr.c:974-975)
    // and goes out with neither its raddr nor its atomic segment.
    KnownDriver {
        driver_id: DRIVER_MLX5,
        name: "mlx5_ib",
        cmp_swap: EOPNOTSUPP,
        fetch_add: EOPNOTSUPP,
        masked_cmp_swap: EOPNOTSUPP,
        masked_fetch_add: Fate::SentWrong,
        iwarp_atomics: false,
        note: "mlx5_ib (6.12) refuses CAS, FA and masked CAS from the kernel (EOPNOTSUPP, hw/mlx5/wr.c:946) and sends masked FA without its operands (wr.c:974): no kernel atomics",
    },
    // Caps: never set (hw/cxgb4/provider.c:255). post_send: `default:`
    // "TBD", -EINVAL (hw/cxgb4/qp.c:1220-1223). iWARP.
    KnownDriver {
        driver_id: DRIVER_CXGB4,
        name: "iw_cxgb4",
        cmp_swap: EINVAL,
        fetch_add: EINVAL,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "iw_cxgb4 (iWARP) refuses every atomic work request (EINVAL, hw/cxgb4/qp.c:1220)",
    },
    // Caps: HCA iff DEV_LIM_FLAG_ATOMIC, masked never set
    // (hw/mthca/mthca_provider.c:106-107). post_send: CAS and FA on RC
    // (mthca_qp.c:1688-1699, 2018-2029); masked opcodes -EINVAL past
    // `mthca_opcode[]` (mthca_qp.c:1776-1781, 2106-2111), after `sq.last`
    // was already moved: never posted.
    KnownDriver {
        driver_id: DRIVER_MTHCA,
        name: "ib_mthca",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "ib_mthca posts CAS and FA and refuses masked opcodes (EINVAL, hw/mthca/mthca_qp.c:1776)",
    },
    // Caps: atomic and masked both GLOB iff `is_atomic` (P5/P7 chip with
    // PCIe AtomicOp requests enabled; hw/bnxt_re/ib_verbs.c:183-188).
    // post_send: CAS and FA built (ib_verbs.c:2582-2606); masked opcodes
    // "not supported", -EINVAL (ib_verbs.c:2847-2852).
    KnownDriver {
        driver_id: DRIVER_BNXT_RE,
        name: "bnxt_re",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "bnxt_re reports masked atomics but refuses the masked opcodes (EINVAL, hw/bnxt_re/ib_verbs.c:2847): masked atomics are emulated",
    },
    // Caps: 0 (hw/ocrdma/ocrdma_verbs.c:103). post_send: `default:`
    // -EINVAL (ocrdma_verbs.c:2163-2164).
    KnownDriver {
        driver_id: DRIVER_OCRDMA,
        name: "ocrdma",
        cmp_swap: EINVAL,
        fetch_add: EINVAL,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "ocrdma refuses every atomic work request (EINVAL, hw/ocrdma/ocrdma_verbs.c:2163)",
    },
    // 7.3: caps HCA and HCA iff IRDMA_FEATURE_ATOMIC_OPS, a firmware bit
    // (hw/irdma/verbs.c:65-69, ctrl.c:5489-5490; never on GEN_1,
    // hw.c:2027-2031). post_send: CAS and FA built with the bit, -EINVAL
    // without (verbs.c:4144-4176); masked `default:` -EINVAL
    // (verbs.c:4291-4295). Remote atomics are enabled in the RoCE
    // modify_qp only (verbs.c:1502-1504), never in iWARP's (verbs.c:1672).
    // 6.12: caps never set (verbs.c:23), every atomic -EINVAL
    // (verbs.c:3581-3582): its attributes post none.
    KnownDriver {
        driver_id: DRIVER_IRDMA,
        name: "irdma",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "irdma reports masked atomics where its firmware has atomics but refuses the masked opcodes (EINVAL, 7.3 hw/irdma/verbs.c:4291): masked atomics are emulated",
    },
    // Caps: HCA iff the device has CAS or FA (either: a device with FA only
    // reports HCA too, and mlx_ext cannot see the bits), masked = atomic
    // whatever its MASK_* bits (hw/vmw_pvrdma/pvrdma_verbs.c:97-101). post_send: CAS
    // and FA filled in (pvrdma_qp.c:802-812); the masked opcodes pass the
    // opcode check and reach `default: break;` (pvrdma_qp.c:822-823) with
    // address, rkey, operands and masks left zero (memset, :751).
    KnownDriver {
        driver_id: DRIVER_VMW_PVRDMA,
        name: "vmw_pvrdma",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: Fate::SentWrong,
        masked_fetch_add: Fate::SentWrong,
        iwarp_atomics: false,
        note: "vmw_pvrdma reports masked atomics but sends the masked opcodes with no address, key or operands (hw/vmw_pvrdma/pvrdma_qp.c:822): masked atomics are emulated",
    },
    // Caps: GLOB iff PCIe AtomicOps to the root port (hw/qedr/main.c:417-429,
    // verbs.c:150), masked never set. post_send: CAS and FA
    // (verbs.c:3677-3704); masked -EINVAL (verbs.c:3731-3750). In iWARP mode
    // the same atomic WQE is built: see `iwarp` in `Record::derive`.
    KnownDriver {
        driver_id: DRIVER_QEDR,
        name: "qedr",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "qedr posts CAS and FA and refuses masked opcodes (EINVAL, hw/qedr/verbs.c:3731)",
    },
    // Caps: HCA iff HNS_ROCE_CAP_FLAG_ATOMIC (hw/hns/hns_roce_main.c:192-193),
    // masked never set. post_send: CAS and FA with 8 bytes of SGE
    // (hns_roce_hw_v2.c:530-534, 588-592); masked -EINVAL with a
    // WARN_ON_ONCE (hns_roce_hw_v2.c:544-545, 573).
    KnownDriver {
        driver_id: DRIVER_HNS,
        name: "hns_roce",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "hns_roce posts CAS and FA and refuses masked opcodes with a kernel warning (EINVAL, hw/hns/hns_roce_hw_v2.c:573)",
    },
    // Caps: HCA, masked never set (sw/rxe/rxe.c:63). post_send: CAS and FA
    // with an 8-byte SGE and an aligned address (rxe_verbs.c:704-712);
    // masked opcodes "bad wr opcode for qp type", -EINVAL
    // (rxe_verbs.c:680, 684-687; no entry in rxe_opcode.c:14-116).
    KnownDriver {
        driver_id: DRIVER_RXE,
        name: "rdma_rxe",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "rdma_rxe posts CAS and FA and refuses masked opcodes (EINVAL, sw/rxe/rxe_verbs.c:684)",
    },
    // rdmavt (sw/rdmavt/qp.c:1860-1891): an opcode without an entry in the
    // driver's `post_parms` is -EINVAL (:1867-1868). hfi1: caps GLOB
    // (hw/hfi1/verbs.c:1328), CAS and FA in `hfi1_post_parms`
    // (hw/hfi1/qp.c:47, 53), no masked entry.
    KnownDriver {
        driver_id: DRIVER_HFI1,
        name: "hfi1",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "hfi1 (rdmavt) posts CAS and FA and refuses masked opcodes (EINVAL, sw/rdmavt/qp.c:1867)",
    },
    // qib: caps GLOB (hw/qib/qib_verbs.c:1468), CAS and FA in
    // `qib_post_parms` (hw/qib/qib_qp.c:76, 82), no masked entry.
    KnownDriver {
        driver_id: DRIVER_QIB,
        name: "ib_qib",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "ib_qib (rdmavt) posts CAS and FA and refuses masked opcodes (EINVAL, sw/rdmavt/qp.c:1867)",
    },
    // Caps: 0, "revisit if RFC 7306 gets supported" (sw/siw/siw_verbs.c:
    // 139-140). post_send: `default:` -EINVAL (siw_verbs.c:941-945). iWARP.
    KnownDriver {
        driver_id: DRIVER_SIW,
        name: "siw",
        cmp_swap: EINVAL,
        fetch_add: EINVAL,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "siw (iWARP) refuses every atomic work request (EINVAL, sw/siw/siw_verbs.c:941)",
    },
    // Caps: GLOB iff ERDMA_DEV_CAP_FLAGS_ATOMIC (hw/erdma/erdma_verbs.c:
    // 346-347), masked never set. post_send: CAS and FA
    // (erdma_qp.c:548-575); masked `default: return -EOPNOTSUPP`
    // (erdma_qp.c:577-578). iWARP or RoCEv2 (erdma_main.c:558-563).
    KnownDriver {
        driver_id: DRIVER_ERDMA,
        name: "erdma",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EOPNOTSUPP,
        masked_fetch_add: EOPNOTSUPP,
        // Its atomics are the device's, by ERDMA_DEV_CAP_FLAGS_ATOMIC in
        // both modes (7.3 erdma_verbs.c:355-356); iWARP or RoCEv2 sets only
        // the node type and the protocol's own ops (erdma_main.c:552-557),
        // and the shared post_send builds CAS and FA with no protocol check
        // (erdma_qp.c:591-618), WQEs written for its iWARP hardware before
        // its RoCEv2 mode existed.
        iwarp_atomics: true,
        note: "erdma posts CAS and FA and refuses masked opcodes (EOPNOTSUPP, hw/erdma/erdma_qp.c:577)",
    },
    // 7.3 only: a kverbs provider since it has post_send
    // (hw/mana/device.c:48). Caps none (main.c:638-639); post_send
    // refuses RC QPs (wr.c:160-163) and takes only IB_WR_SEND on UD
    // (wr.c:94): every atomic -EINVAL. (6.12's mana has no post_send.)
    KnownDriver {
        driver_id: DRIVER_MANA,
        name: "mana_ib",
        cmp_swap: EINVAL,
        fetch_add: EINVAL,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "mana_ib refuses every atomic work request (EINVAL, 7.3 hw/mana/wr.c:160)",
    },
    // 7.3 only, RoCE only (hw/ionic/ionic_ibdev.c:342). Caps GLOB and GLOB,
    // always (ionic_ibdev.c:68-69). post_send: CAS and FA on RC with one
    // 8-byte SGE, neither SOLICITED nor INLINE (ionic_datapath.c:1000-1044,
    // 1141-1143); masked -EINVAL (ionic_datapath.c:1152-1155).
    KnownDriver {
        driver_id: DRIVER_IONIC,
        name: "ionic_rdma",
        cmp_swap: OK,
        fetch_add: OK,
        masked_cmp_swap: EINVAL,
        masked_fetch_add: EINVAL,
        iwarp_atomics: false,
        note: "ionic_rdma reports masked atomics but refuses the masked opcodes (EINVAL, hw/ionic/ionic_datapath.c:1152): masked atomics are emulated",
    },
];
