// SPDX-License-Identifier: GPL-2.0

//! The Linux errnos the pure code returns or reads, positive, as
//! `include/uapi/asm-generic/errno-base.h` and `errno.h` number them on
//! x86 and arm64. One copy for every module here; each crate that builds
//! this code into a module ties every value to the kernel's at compile
//! time (`mlx_ext::ib::tie_errnos!`), so a kernel that renumbered one
//! would not build.

/// Operation not permitted.
pub const EPERM: i32 = 1;
/// No such file or directory: an answer for no outstanding request.
pub const ENOENT: i32 = 2;
/// Input/output error: a completion status with no better errno.
pub const EIO: i32 = 5;
/// Out of memory.
pub const ENOMEM: i32 = 12;
/// Permission denied: the remote key does not grant atomic access.
pub const EACCES: i32 = 13;
/// Bad address: a local protection error on the reply buffer.
pub const EFAULT: i32 = 14;
/// Invalid argument.
pub const EINVAL: i32 = 22;
/// Try again: the emulation's bound on attempts was reached.
pub const EAGAIN: i32 = 11;
/// Operation not supported.
pub const EOPNOTSUPP: i32 = 95;
/// Connection timed out: the transport gave up (retries exceeded).
pub const ETIMEDOUT: i32 = 110;
/// Remote I/O error: the responder refused the request as invalid.
pub const EREMOTEIO: i32 = 121;
/// Operation canceled: flushed (QP in error, being destroyed).
pub const ECANCELED: i32 = 125;
/// Cannot send after transport endpoint shutdown: the QP is being
/// destroyed.
pub const ESHUTDOWN: i32 = 108;
/// Software caused connection abort: an emulated operation not begun,
/// its QP failed before its compare-and-swap was posted.
pub const ECONNABORTED: i32 = 103;
/// No such device.
pub const ENODEV: i32 = 19;
/// Result too large: more VFs than a table has entries for.
pub const ERANGE: i32 = 34;
