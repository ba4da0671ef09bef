// SPDX-License-Identifier: GPL-2.0

//! Atomic capability rules: what mlx_ext reports for a device.

/// An atomic capability level, as `enum ib_atomic_cap` plus the big-endian
/// reply of Connect-IB on little-endian hosts (`Documentation/atomics.rst`,
/// "Byte order of the response").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicCap {
    /// No atomics (`IB_ATOMIC_NONE`).
    None,
    /// Atomic among the QPs of this adapter (`IB_ATOMIC_HCA`).
    Hca,
    /// Atomic against every agent, CPU included (`IB_ATOMIC_GLOB`).
    Glob,
    /// As `Hca`, but the adapter returns the response big-endian on a
    /// little-endian host (MLNX_OFED's `IBV_EXP_ATOMIC_HCA_REPLY_BE`).
    HcaReplyBe,
}

impl AtomicCap {
    /// Converts the value of `enum ib_atomic_cap`: 0 none, 1 hca, 2 glob.
    /// Any other value is not a capability ib_core defines.
    pub const fn from_ib(value: u32) -> Option<Self> {
        match value {
            0 => Some(Self::None),
            1 => Some(Self::Hca),
            2 => Some(Self::Glob),
            _ => None,
        }
    }

    /// The name shown in sysfs.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Hca => "hca",
            Self::Glob => "glob",
            Self::HcaReplyBe => "hca_reply_be",
        }
    }
}

/// What a driver's kernel `post_send` does with one atomic opcode on an RC
/// QP of a device whose attributes have atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Carried out.
    Executed,
    /// Refused by `post_send` with this (positive) errno.
    Refused(i32),
    /// Accepted and sent wrong (operands dropped, another opcode on the
    /// wire): mlx_ext never posts it.
    SentWrong,
}

impl Fate {
    const fn executed(self) -> bool {
        matches!(self, Self::Executed)
    }
}

// `EINVAL` and `EOPNOTSUPP`, the two errnos 6.12 drivers refuse an opcode
// they lack with (most use `EINVAL`; mlx5_ib and erdma `EOPNOTSUPP`).
use crate::errno::{EINVAL, EOPNOTSUPP};

/// What mlx_ext posts to a driver for a kernel ULP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelAtomics {
    /// Compare-and-swap is posted; masked atomics can be emulated over it.
    pub standard: bool,
    /// Fetch-and-add is posted as itself (else it is emulated over
    /// compare-and-swap, when that is posted).
    pub fetch_add: bool,
    /// Masked compare-and-swap and masked fetch-and-add are posted.
    pub masked: bool,
}

/// A driver whose handling of kernel atomics is known from its 6.12 source,
/// by `enum rdma_driver_id`: one row of [`KNOWN_DRIVERS`].
pub struct KnownDriver {
    /// Its `driver_id`.
    pub driver_id: u32,
    /// Its name.
    pub name: &'static str,
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    pub cmp_swap: Fate,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    pub fetch_add: Fate,
    /// `IB_WR_MASKED_ATOMIC_CMP_AND_SWP`.
    pub masked_cmp_swap: Fate,
    /// `IB_WR_MASKED_ATOMIC_FETCH_AND_ADD`.
    pub masked_fetch_add: Fate,
    /// Whether its source settles that its atomics are carried out on an
    /// iWARP QP too (erdma's); elsewhere none are posted on iWARP (see
    /// [`DeviceFacts::iwarp`]).
    pub iwarp_atomics: bool,
    /// What it does, in words, for sysfs's `reason` when it posts less than
    /// its attributes say.
    pub note: &'static str,
}

impl KnownDriver {
    /// What mlx_ext may post to this driver, on a device whose attributes
    /// have (masked) atomics as `atomic` and `masked` say.
    const fn posts(&self, atomic: bool, masked: bool) -> KernelAtomics {
        let standard = atomic && self.cmp_swap.executed();
        KernelAtomics {
            standard,
            fetch_add: atomic && self.fetch_add.executed(),
            masked: masked && self.masked_cmp_swap.executed() && self.masked_fetch_add.executed(),
        }
    }
}

mod drivers;
pub use drivers::*;

/// Silicon that writes atomic replies big-endian whatever the host: the
/// Connect-IB, PF and VF (vendor id, part id, name).
pub const REPLY_BE_PARTS: [(u32, u32, &str); 2] = [
    (0x02c9, 4113, "Connect-IB"),
    (0x02c9, 4114, "Connect-IB VF"),
];

/// What mlx_ext knows of a device when it is added. New facts are new
/// fields; [`Default`] is a device with no atomics of an unknown driver.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceFacts {
    /// `ops.driver_id`.
    pub driver_id: u32,
    /// `attrs.vendor_id`.
    pub vendor_id: u32,
    /// `attrs.vendor_part_id`.
    pub vendor_part_id: u32,
    /// `attrs.atomic_cap` (`None` for a value ib_core does not define).
    pub atomic_cap: Option<AtomicCap>,
    /// `attrs.masked_atomic_cap`.
    pub masked_atomic_cap: Option<AtomicCap>,
    /// Whether the host is big-endian.
    pub host_big_endian: bool,
    /// Whether the device is iWARP (`node_type` is [`RDMA_NODE_RNIC`]).
    /// iWARP (RFC 5040) has no atomics. mlx_ext posts none there but where
    /// the driver's source settles that its atomics work in iWARP mode
    /// ([`KnownDriver::iwarp_atomics`]: erdma). qedr reports them in iWARP
    /// mode and builds atomic WQEs on iWARP QPs (7.3 hw/qedr/verbs.c:
    /// 3639-3664, main.c:898) whose fate its source does not tell; irdma's
    /// iWARP modify_qp never enables remote atomics (7.3 hw/irdma/verbs.c:
    /// 1672); iw_cxgb4 and siw refuse them.
    pub iwarp: bool,
}

/// How a kernel ULP gets masked atomics through mlx_ext on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskedMode {
    /// The driver posts the masked opcodes: one work request each.
    Native,
    /// The driver posts compare-and-swap only: mlx_ext loops over it.
    Emulated,
    /// Neither: masked atomics are refused (`EOPNOTSUPP`).
    Unavailable,
}

impl MaskedMode {
    /// The name shown in sysfs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Emulated => "emulated",
            Self::Unavailable => "unavailable",
        }
    }
}

/// The three kinds of atomic work request a driver can refuse at run time,
/// each with what follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum WrClass {
    /// Compare-and-swap: standard atomics, and the emulation, end.
    CmpSwap,
    /// Fetch-and-add: emulated over compare-and-swap from then on.
    FetchAdd,
    /// A masked opcode: emulated over compare-and-swap from then on.
    Masked,
}

impl WrClass {
    /// The class of an atomic work request opcode; `None` for any other.
    pub const fn of(opcode: crate::atomics::wr::WrOpcode) -> Option<Self> {
        use crate::atomics::wr::WrOpcode;
        match opcode {
            WrOpcode::AtomicCmpAndSwp => Some(Self::CmpSwap),
            WrOpcode::AtomicFetchAndAdd => Some(Self::FetchAdd),
            WrOpcode::MaskedAtomicCmpAndSwp | WrOpcode::MaskedAtomicFetchAndAdd => {
                Some(Self::Masked)
            }
            _ => None,
        }
    }

    /// Its bit in a set of classes.
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// What the driver refused at run time: per [`WrClass`], the errno, if it
/// was one of the two that mean "this opcode is not supported".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refusals {
    /// A refused compare-and-swap.
    pub cmp_swap: Option<i32>,
    /// A refused fetch-and-add.
    pub fetch_add: Option<i32>,
    /// A refused masked request.
    pub masked: Option<i32>,
}

impl Refusals {
    /// Whether nothing was refused.
    pub const fn is_empty(&self) -> bool {
        self.cmp_swap.is_none() && self.fetch_add.is_none() && self.masked.is_none()
    }

    /// Records that `class` was refused with `errno`; false when `errno`
    /// is not a refusal of the opcode (any but `EINVAL` and `EOPNOTSUPP`)
    /// or `class` was refused already.
    pub fn note(&mut self, class: WrClass, errno: i32) -> bool {
        if errno != EINVAL && errno != EOPNOTSUPP {
            return false;
        }
        let slot = match class {
            WrClass::CmpSwap => &mut self.cmp_swap,
            WrClass::FetchAdd => &mut self.fetch_add,
            WrClass::Masked => &mut self.masked,
        };
        if slot.is_some() {
            return false;
        }
        *slot = Some(errno);
        true
    }

    /// Packs into a word (for an atomic): 2 bits per class, 0 none, 1
    /// `EINVAL`, 2 `EOPNOTSUPP`.
    pub fn pack(&self) -> u32 {
        let code = |e: Option<i32>| match e {
            None => 0,
            Some(EINVAL) => 1,
            Some(_) => 2,
        };
        code(self.cmp_swap) | code(self.fetch_add) << 2 | code(self.masked) << 4
    }

    /// The inverse of [`Refusals::pack`].
    pub fn unpack(word: u32) -> Self {
        let errno = |shift: u32| match (word >> shift) & 3 {
            0 => None,
            1 => Some(EINVAL),
            _ => Some(EOPNOTSUPP),
        };
        Self {
            cmp_swap: errno(0),
            fetch_add: errno(2),
            masked: errno(4),
        }
    }
}

/// Why a record is not simply ib_core's attributes: everything that
/// applies, shown in sysfs's `reason` on one line, joined by "; ".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reasons {
    /// The silicon replies big-endian on this little-endian host.
    pub reply_be: Option<&'static str>,
    /// The driver's row: it posts less than its attributes say.
    pub driver: Option<&'static str>,
    /// The device has no atomics at all.
    pub no_atomics: bool,
    /// An iWARP device whose attributes have atomics: none are posted.
    pub iwarp: bool,
    /// An attribute had a value ib_core does not define.
    pub unknown_cap: bool,
    /// What the driver refused at run time.
    pub refused: Refusals,
}

impl Reasons {
    /// Whether there is nothing to explain.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The name of a refusal's errno: `EINVAL`, else `EOPNOTSUPP`.
pub fn errno_name(errno: i32) -> &'static str {
    if errno == EINVAL {
        "EINVAL"
    } else {
        "EOPNOTSUPP"
    }
}

impl core::fmt::Display for Reasons {
    /// Every reason, in words, joined by "; "; nothing when there is none.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut sep = "";
        let mut say = |f: &mut core::fmt::Formatter<'_>, args: core::fmt::Arguments<'_>| {
            let r = write!(f, "{sep}{args}");
            sep = "; ";
            r
        };
        if let Some(part) = self.reply_be {
            say(f, format_args!("the adapter ({part}) replies to atomics big-endian on this little-endian host, which ib_core has no value for"))?;
        }
        if let Some(note) = self.driver {
            say(f, format_args!("{note}"))?;
        }
        if self.no_atomics {
            say(
                f,
                format_args!("ib_core reports no atomics (atomic_cap none)"),
            )?;
        }
        if self.iwarp {
            say(f, format_args!("an iWARP device: iWARP has no atomics and its driver's atomic work requests are not known to work, so none are posted"))?;
        }
        if self.unknown_cap {
            say(
                f,
                format_args!(
                    "ib_core reported an atomic capability it does not define; taken as none"
                ),
            )?;
        }
        if let Some(e) = self.refused.masked {
            say(f, format_args!("the driver refused a masked atomic work request ({}): masked atomics are emulated over compare-and-swap", errno_name(e)))?;
        }
        if let Some(e) = self.refused.fetch_add {
            say(
                f,
                format_args!(
                    "the driver refused a fetch-and-add ({}): it is emulated over compare-and-swap",
                    errno_name(e)
                ),
            )?;
        }
        if let Some(e) = self.refused.cmp_swap {
            say(f, format_args!("the driver refused a compare-and-swap ({}): standard atomics, and masked ones unless native, are off", errno_name(e)))?;
        }
        Ok(())
    }
}

/// The capability record of a device (`Documentation/atomics.rst`, "Byte order
/// of the response").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// What the device does with standard atomics.
    pub atomic_cap: AtomicCap,
    /// What it does with masked atomics.
    pub masked_atomic_cap: AtomicCap,
    /// What mlx_ext posts for kernel ULPs.
    pub posts: KernelAtomics,
    /// What a kernel ULP gets through mlx_ext.
    pub mode: MaskedMode,
    /// Why the record is not simply ib_core's attributes.
    pub reasons: Reasons,
    /// The driver's row, if it is one of [`KNOWN_DRIVERS`] (its behaviour is
    /// known from its source, not guessed from its attributes).
    pub driver: Option<&'static KnownDriver>,
}

impl PartialEq for KnownDriver {
    fn eq(&self, other: &Self) -> bool {
        self.driver_id == other.driver_id
    }
}
impl Eq for KnownDriver {}
impl core::fmt::Debug for KnownDriver {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

/// The mode that follows from what is posted.
const fn mode_of(posts: KernelAtomics) -> MaskedMode {
    if posts.masked {
        MaskedMode::Native
    } else if posts.standard {
        MaskedMode::Emulated
    } else {
        MaskedMode::Unavailable
    }
}

/// The row of `driver_id`, if the rules know it.
pub fn known_driver(driver_id: u32) -> Option<&'static KnownDriver> {
    KNOWN_DRIVERS.iter().find(|d| d.driver_id == driver_id)
}

impl Record {
    /// Derives the record of a device from its facts, by the rules above:
    /// the one entry point.
    pub fn derive(f: &DeviceFacts) -> Self {
        let known_caps = f.atomic_cap.is_some() && f.masked_atomic_cap.is_some();
        let atomic = f.atomic_cap.unwrap_or(AtomicCap::None);
        let masked = f.masked_atomic_cap.unwrap_or(AtomicCap::None);
        let be_part = REPLY_BE_PARTS
            .iter()
            .find(|(v, p, _)| *v == f.vendor_id && *p == f.vendor_part_id)
            .map(|(_, _, name)| *name)
            .filter(|_| !f.host_big_endian);
        let driver = known_driver(f.driver_id);
        let has_atomic = atomic != AtomicCap::None;
        let has_masked = masked != AtomicCap::None;
        let attrs = KernelAtomics {
            standard: has_atomic,
            fetch_add: has_atomic,
            masked: has_masked,
        };
        let row = match driver {
            Some(d) => d.posts(has_atomic, has_masked),
            None => attrs,
        };
        let iwarp =
            f.iwarp && row != KernelAtomics::default() && !driver.is_some_and(|d| d.iwarp_atomics);
        let posts = if iwarp { KernelAtomics::default() } else { row };
        let reasons = Reasons {
            reply_be: be_part,
            // The driver's row explains itself where it posts less than
            // the attributes offer, or would refuse standard atomics even
            // if the device had them.
            driver: driver
                .filter(|d| row != attrs || !d.cmp_swap.executed())
                .map(|d| d.note),
            no_atomics: known_caps && !has_atomic && !has_masked,
            iwarp,
            unknown_cap: !known_caps,
            refused: Refusals::default(),
        };
        // The silicon decides the byte order of the reply: a Connect-IB
        // replies big-endian to standard and masked atomics alike, whatever
        // its driver reports.
        let (atomic_cap, masked_atomic_cap) = match be_part {
            Some(_) => (AtomicCap::HcaReplyBe, AtomicCap::HcaReplyBe),
            None => (atomic, masked),
        };
        Self {
            atomic_cap,
            masked_atomic_cap,
            posts,
            mode: mode_of(posts),
            reasons,
            driver,
        }
    }

    /// The record once the driver has refused what `refused` says at run
    /// time (with `EINVAL` or `EOPNOTSUPP`): a refused masked request
    /// leaves masked atomics to the emulation, a refused fetch-and-add
    /// leaves it to the emulation too, and only a refused compare-and-swap
    /// turns standard atomics (and so the emulation) off. The caps stay:
    /// they describe the device.
    pub fn with_refusals(&self, refused: Refusals) -> Self {
        let mut posts = self.posts;
        if refused.masked.is_some() {
            posts.masked = false;
        }
        if refused.fetch_add.is_some() {
            posts.fetch_add = false;
        }
        if refused.cmp_swap.is_some() {
            posts.standard = false;
            posts.fetch_add = false;
        }
        Self {
            posts,
            mode: mode_of(posts),
            reasons: Reasons {
                refused,
                ..self.reasons
            },
            ..*self
        }
    }

    /// Whether mlx_ext posts work requests of `class`.
    pub fn posts_class(&self, class: WrClass) -> bool {
        match class {
            WrClass::CmpSwap => self.posts.standard,
            WrClass::FetchAdd => self.posts.fetch_add,
            WrClass::Masked => self.posts.masked,
        }
    }

    /// Whether a refusal of `class` by the driver at run time is learnt,
    /// `accepted` being the [`WrClass::bit`]s of what the driver accepted on
    /// this device so far, and `qp_sends` whether the QP it was posted on
    /// was found in RTS just before the post (a query in the same call: a
    /// QP that sent once may have been taken back through RESET since). Only what is posted can be
    /// refused; only a driver without a row is learnt about (a known driver
    /// refuses what its row says); a driver that lacks an opcode refuses it
    /// every time, so once it accepted a kind, a refusal of that kind is
    /// about the QP, not the opcode; and a refusal on a QP that may not
    /// have reached RTS may be its state's (rxe, hns, ocrdma, rdmavt and
    /// the simulator answer `EINVAL` to a post before RTS: the ULP's
    /// error, or its race with rdma_cm's ESTABLISHED event).
    pub fn learns(&self, class: WrClass, accepted: u32, qp_sends: bool) -> bool {
        qp_sends && self.driver.is_none() && self.posts_class(class) && accepted & class.bit() == 0
    }
}
