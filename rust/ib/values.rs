// SPDX-License-Identifier: GPL-2.0

//! The numbers of the kernel's and ib_core's C enums and macros that the
//! code above this layer keeps its own copies of (its pure logic is built
//! on the host too, without the kernel's headers), with the values this
//! kernel was built with: the product ties its copies to these at compile
//! time, so a kernel that renumbered one would not build.
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/uapi/rdma/rdma_user_ioctl_cmds.h`](srctree/include/uapi/rdma/rdma_user_ioctl_cmds.h),
//! [`include/uapi/asm-generic/errno.h`](srctree/include/uapi/asm-generic/errno.h).

use super::bindings;

/// Errno values (positive, as C defines them) that the code above this
/// layer returns.
pub mod errno {
    use kernel::bindings as k;

    /// `EPERM`.
    pub const EPERM: i32 = k::EPERM as i32;
    /// `ENOENT`.
    pub const ENOENT: i32 = k::ENOENT as i32;
    /// `EIO`.
    pub const EIO: i32 = k::EIO as i32;
    /// `ENOMEM`.
    pub const ENOMEM: i32 = k::ENOMEM as i32;
    /// `EACCES`.
    pub const EACCES: i32 = k::EACCES as i32;
    /// `EFAULT`.
    pub const EFAULT: i32 = k::EFAULT as i32;
    /// `ENODEV`.
    pub const ENODEV: i32 = k::ENODEV as i32;
    /// `EINVAL`.
    pub const EINVAL: i32 = k::EINVAL as i32;
    /// `ERANGE`.
    pub const ERANGE: i32 = k::ERANGE as i32;
    /// `EAGAIN`.
    pub const EAGAIN: i32 = k::EAGAIN as i32;
    /// `EOPNOTSUPP`.
    pub const EOPNOTSUPP: i32 = k::EOPNOTSUPP as i32;
    /// `ETIMEDOUT`.
    pub const ETIMEDOUT: i32 = k::ETIMEDOUT as i32;
    /// `EREMOTEIO`.
    pub const EREMOTEIO: i32 = k::EREMOTEIO as i32;
    /// `ECANCELED`.
    pub const ECANCELED: i32 = k::ECANCELED as i32;
    /// `ESHUTDOWN`.
    pub const ESHUTDOWN: i32 = k::ESHUTDOWN as i32;
    /// `ECONNABORTED`.
    pub const ECONNABORTED: i32 = k::ECONNABORTED as i32;
}

/// Ties a crate's copy of the errnos (a module with the constants of
/// [`errno`], as the pure code's `errno.rs` has them) to this kernel's
/// values at compile time: `tie_errnos!(crate::errno);`. A constant
/// missing from the copy does not compile either, so every crate that
/// mounts the pure code ties all of them.
#[macro_export]
macro_rules! tie_errnos {
    ($copy:path) => {
        const _: () = {
            use $copy as c;
            use $crate::ib::values::errno as k;
            assert!(c::EPERM == k::EPERM);
            assert!(c::ENOENT == k::ENOENT);
            assert!(c::EIO == k::EIO);
            assert!(c::ENOMEM == k::ENOMEM);
            assert!(c::EACCES == k::EACCES);
            assert!(c::EFAULT == k::EFAULT);
            assert!(c::ENODEV == k::ENODEV);
            assert!(c::EINVAL == k::EINVAL);
            assert!(c::ERANGE == k::ERANGE);
            assert!(c::EAGAIN == k::EAGAIN);
            assert!(c::EOPNOTSUPP == k::EOPNOTSUPP);
            assert!(c::ETIMEDOUT == k::ETIMEDOUT);
            assert!(c::EREMOTEIO == k::EREMOTEIO);
            assert!(c::ECANCELED == k::ECANCELED);
            assert!(c::ESHUTDOWN == k::ESHUTDOWN);
            assert!(c::ECONNABORTED == k::ECONNABORTED);
        };
    };
}

/// `enum ib_wc_status`: a work completion's status.
pub mod wc_status {
    use super::bindings as b;

    /// `IB_WC_SUCCESS`.
    pub const SUCCESS: u32 = b::ib_wc_status_IB_WC_SUCCESS;
    /// `IB_WC_LOC_LEN_ERR`.
    pub const LOC_LEN_ERR: u32 = b::ib_wc_status_IB_WC_LOC_LEN_ERR;
    /// `IB_WC_LOC_PROT_ERR`.
    pub const LOC_PROT_ERR: u32 = b::ib_wc_status_IB_WC_LOC_PROT_ERR;
    /// `IB_WC_WR_FLUSH_ERR`.
    pub const WR_FLUSH_ERR: u32 = b::ib_wc_status_IB_WC_WR_FLUSH_ERR;
    /// `IB_WC_LOC_ACCESS_ERR`.
    pub const LOC_ACCESS_ERR: u32 = b::ib_wc_status_IB_WC_LOC_ACCESS_ERR;
    /// `IB_WC_REM_INV_REQ_ERR`.
    pub const REM_INV_REQ_ERR: u32 = b::ib_wc_status_IB_WC_REM_INV_REQ_ERR;
    /// `IB_WC_REM_ACCESS_ERR`.
    pub const REM_ACCESS_ERR: u32 = b::ib_wc_status_IB_WC_REM_ACCESS_ERR;
    /// `IB_WC_REM_OP_ERR`.
    pub const REM_OP_ERR: u32 = b::ib_wc_status_IB_WC_REM_OP_ERR;
    /// `IB_WC_RETRY_EXC_ERR`.
    pub const RETRY_EXC_ERR: u32 = b::ib_wc_status_IB_WC_RETRY_EXC_ERR;
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    pub const RNR_RETRY_EXC_ERR: u32 = b::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR;
    /// `IB_WC_RESP_TIMEOUT_ERR`.
    pub const RESP_TIMEOUT_ERR: u32 = b::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR;
    /// `IB_WC_GENERAL_ERR`.
    pub const GENERAL_ERR: u32 = b::ib_wc_status_IB_WC_GENERAL_ERR;
}

/// `enum rdma_driver_id`: which driver a device is of
/// ([`super::Device::driver_id`]). Only the drivers mlx_ext's capability
/// rules name; `RDMA_DRIVER_IONIC` (21) is not in 6.12's enum.
pub mod driver_id {
    use super::bindings as b;

    /// `RDMA_DRIVER_MLX4`.
    pub const MLX4: u32 = b::rdma_driver_id_RDMA_DRIVER_MLX4;
    /// `RDMA_DRIVER_MLX5`.
    pub const MLX5: u32 = b::rdma_driver_id_RDMA_DRIVER_MLX5;
    /// `RDMA_DRIVER_CXGB4`.
    pub const CXGB4: u32 = b::rdma_driver_id_RDMA_DRIVER_CXGB4;
    /// `RDMA_DRIVER_MTHCA`.
    pub const MTHCA: u32 = b::rdma_driver_id_RDMA_DRIVER_MTHCA;
    /// `RDMA_DRIVER_BNXT_RE`.
    pub const BNXT_RE: u32 = b::rdma_driver_id_RDMA_DRIVER_BNXT_RE;
    /// `RDMA_DRIVER_OCRDMA`.
    pub const OCRDMA: u32 = b::rdma_driver_id_RDMA_DRIVER_OCRDMA;
    /// `RDMA_DRIVER_IRDMA`.
    pub const IRDMA: u32 = b::rdma_driver_id_RDMA_DRIVER_IRDMA;
    /// `RDMA_DRIVER_VMW_PVRDMA`.
    pub const VMW_PVRDMA: u32 = b::rdma_driver_id_RDMA_DRIVER_VMW_PVRDMA;
    /// `RDMA_DRIVER_QEDR`.
    pub const QEDR: u32 = b::rdma_driver_id_RDMA_DRIVER_QEDR;
    /// `RDMA_DRIVER_HNS`.
    pub const HNS: u32 = b::rdma_driver_id_RDMA_DRIVER_HNS;
    /// `RDMA_DRIVER_RXE`.
    pub const RXE: u32 = b::rdma_driver_id_RDMA_DRIVER_RXE;
    /// `RDMA_DRIVER_HFI1`.
    pub const HFI1: u32 = b::rdma_driver_id_RDMA_DRIVER_HFI1;
    /// `RDMA_DRIVER_QIB`.
    pub const QIB: u32 = b::rdma_driver_id_RDMA_DRIVER_QIB;
    /// `RDMA_DRIVER_SIW`.
    pub const SIW: u32 = b::rdma_driver_id_RDMA_DRIVER_SIW;
    /// `RDMA_DRIVER_ERDMA`.
    pub const ERDMA: u32 = b::rdma_driver_id_RDMA_DRIVER_ERDMA;
    /// `RDMA_DRIVER_MANA`.
    pub const MANA: u32 = b::rdma_driver_id_RDMA_DRIVER_MANA;
}

/// `RDMA_NODE_RNIC`: the `node_type` of an iWARP device
/// ([`super::Device::node_type`]).
pub const RDMA_NODE_RNIC: u32 = bindings::RDMA_NODE_RNIC;
