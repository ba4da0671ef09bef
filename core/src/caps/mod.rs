// SPDX-License-Identifier: GPL-2.0

//! Atomic capability rules: what mlx_ext reports for a device.

/// An atomic capability level, as `enum ib_atomic_cap` plus the big-endian
/// reply of Connect-IB on little-endian hosts (SPEC section 3).
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

/// `EINVAL` and `EOPNOTSUPP`, the two errnos 6.12 drivers refuse an opcode
/// they lack with (most use `EINVAL`; mlx5_ib and erdma `EOPNOTSUPP`).
const EINVAL: i32 = 22;
const EOPNOTSUPP: i32 = 95;

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

/// The capability record of a device (SPEC section 3).
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
    /// is known to be in a state that sends. Only what is posted can be
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ib_values_map_to_names() {
        let names: [&str; 3] =
            [0, 1, 2].map(|v| AtomicCap::from_ib(v).map_or("?", AtomicCap::name));
        assert_eq!(names, ["none", "hca", "glob"]);
        assert_eq!(AtomicCap::from_ib(3), None);
        assert_eq!(AtomicCap::HcaReplyBe.name(), "hca_reply_be");
    }

    const MELLANOX: u32 = 0x02c9;

    fn facts(driver_id: u32, part: u32, atomic: u32, masked: u32) -> DeviceFacts {
        DeviceFacts {
            driver_id,
            vendor_id: if driver_id == DRIVER_RXE {
                0xffffff
            } else {
                MELLANOX
            },
            vendor_part_id: part,
            atomic_cap: AtomicCap::from_ib(atomic),
            masked_atomic_cap: AtomicCap::from_ib(masked),
            ..Default::default()
        }
    }

    fn row(f: DeviceFacts) -> (&'static str, &'static str, &'static str) {
        let r = Record::derive(&f);
        (
            r.atomic_cap.name(),
            r.masked_atomic_cap.name(),
            r.mode.name(),
        )
    }

    fn reason(f: DeviceFacts) -> String {
        Record::derive(&f).reasons.to_string()
    }

    extern crate std;
    use std::string::{String, ToString};

    /// The devices of the simulator and the Mellanox parts, row by row
    /// (driver_id 0 is the simulator's RDMA_DRIVER_UNKNOWN: its attributes
    /// decide).
    #[test]
    fn records_row_by_row() {
        // rxe0: HCA, NONE.
        assert_eq!(row(facts(DRIVER_RXE, 0, 1, 0)), ("hca", "none", "emulated"));
        // Simulated ConnectX-3, Connect-IB, ConnectX-4.
        assert_eq!(row(facts(0, 4099, 1, 1)), ("hca", "hca", "native"));
        assert_eq!(
            row(facts(0, 4113, 1, 1)),
            ("hca_reply_be", "hca_reply_be", "native")
        );
        assert_eq!(row(facts(0, 4115, 1, 0)), ("hca", "none", "emulated"));
        // A real ConnectX-3 under mlx4_ib (masked = atomic), and one whose
        // firmware has no atomics.
        assert_eq!(
            row(facts(DRIVER_MLX4, 4099, 1, 1)),
            ("hca", "hca", "native")
        );
        let bare = Record::derive(&facts(DRIVER_MLX4, 4099, 0, 0));
        assert_eq!(bare.mode, MaskedMode::Unavailable);
        assert_eq!(bare.posts, KernelAtomics::default());
        assert!(bare.reasons.no_atomics);
        // A real Connect-IB under mlx5_ib on x86: NONE from ib_core, yet the
        // silicon replies big-endian; mlx5_ib posts no kernel atomics.
        let cib = Record::derive(&facts(DRIVER_MLX5, 4113, 0, 0));
        assert_eq!(
            (
                cib.atomic_cap.name(),
                cib.masked_atomic_cap.name(),
                cib.mode.name()
            ),
            ("hca_reply_be", "hca_reply_be", "unavailable")
        );
        // Its VF too.
        assert_eq!(row(facts(DRIVER_MLX5, 4114, 0, 0)).2, "unavailable");
        // A ConnectX-4 under mlx5_ib: HCA from ib_core, but unavailable, and
        // the reason says why.
        let cx4 = Record::derive(&facts(DRIVER_MLX5, 4115, 1, 0));
        assert_eq!(cx4.mode, MaskedMode::Unavailable);
        assert!(reason(facts(DRIVER_MLX5, 4115, 1, 0)).contains("mlx5_ib"));
        // An unknown driver with no atomics.
        let none = Record::derive(&facts(0, 1, 0, 0));
        assert_eq!(
            (none.mode, none.reasons.no_atomics),
            (MaskedMode::Unavailable, true)
        );
        // An unknown driver with masked atomics but no standard ones.
        assert_eq!(row(facts(0, 1, 0, 1)), ("none", "hca", "native"));
        // An unknown driver with GLOB standard atomics.
        assert_eq!(row(facts(0, 1, 2, 0)), ("glob", "none", "emulated"));
    }

    /// Every driver with a row, with the attributes it reports (RDMA-NOTES section
    /// 1, `drivers.rs`): what a kernel ULP gets, and that the reason names
    /// the driver where the row takes something away.
    #[test]
    fn every_driver_with_its_attributes() {
        // (driver, atomic_cap, masked_atomic_cap, iwarp, mode, standard
        // posted, the reason names the driver)
        let cases: [(u32, u32, u32, bool, MaskedMode, bool, bool); 27] = [
            (DRIVER_MLX4, 1, 1, false, MaskedMode::Native, true, false),
            (
                DRIVER_MLX4,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            (
                DRIVER_MLX5,
                1,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            (
                DRIVER_MLX5,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            (
                DRIVER_CXGB4,
                0,
                0,
                true,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            (DRIVER_MTHCA, 1, 0, false, MaskedMode::Emulated, true, false),
            (
                DRIVER_MTHCA,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            (
                DRIVER_BNXT_RE,
                2,
                2,
                false,
                MaskedMode::Emulated,
                true,
                true,
            ),
            (
                DRIVER_BNXT_RE,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            (
                DRIVER_OCRDMA,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            // 6.12's irdma, and 7.3's without the firmware's atomics.
            (
                DRIVER_IRDMA,
                0,
                0,
                true,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            (
                DRIVER_IRDMA,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            // 7.3's irdma with them: masked refused; none on iWARP.
            (DRIVER_IRDMA, 1, 1, false, MaskedMode::Emulated, true, true),
            (
                DRIVER_IRDMA,
                1,
                1,
                true,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            (
                DRIVER_MANA,
                0,
                0,
                false,
                MaskedMode::Unavailable,
                false,
                true,
            ),
            (DRIVER_IONIC, 2, 2, false, MaskedMode::Emulated, true, true),
            (
                DRIVER_VMW_PVRDMA,
                1,
                1,
                false,
                MaskedMode::Emulated,
                true,
                true,
            ),
            (DRIVER_QEDR, 2, 0, false, MaskedMode::Emulated, true, false),
            (
                DRIVER_QEDR,
                2,
                0,
                true,
                MaskedMode::Unavailable,
                false,
                false,
            ),
            (DRIVER_HNS, 1, 0, false, MaskedMode::Emulated, true, false),
            (DRIVER_RXE, 1, 0, false, MaskedMode::Emulated, true, false),
            (DRIVER_HFI1, 2, 0, false, MaskedMode::Emulated, true, false),
            (DRIVER_QIB, 2, 0, false, MaskedMode::Emulated, true, false),
            (DRIVER_SIW, 0, 0, true, MaskedMode::Unavailable, false, true),
            (DRIVER_ERDMA, 2, 0, false, MaskedMode::Emulated, true, false),
            // erdma's source settles its iWARP mode: its atomics are posted.
            (DRIVER_ERDMA, 2, 0, true, MaskedMode::Emulated, true, false),
            (
                DRIVER_ERDMA,
                0,
                0,
                true,
                MaskedMode::Unavailable,
                false,
                false,
            ),
        ];
        for (driver_id, atomic, masked, iwarp, mode, standard, named) in cases {
            let f = DeviceFacts {
                iwarp,
                ..facts(driver_id, 1, atomic, masked)
            };
            let r = Record::derive(&f);
            let d = known_driver(driver_id).unwrap();
            let why = r.reasons.to_string();
            let case = (d.name, atomic, masked, iwarp, &why);
            assert_eq!(r.mode, mode, "{case:?}");
            assert_eq!(r.posts.standard, standard, "{case:?}");
            assert_eq!(why.contains(d.name), named, "{case:?}");
            assert_eq!(
                r.reasons.iwarp,
                iwarp && atomic != 0 && !d.iwarp_atomics,
                "{case:?}"
            );
            // Unavailable always says why; a record as the attributes
            // say needs no reason.
            assert_eq!(
                why.is_empty(),
                mode != MaskedMode::Unavailable && !named,
                "{case:?}"
            );
        }
    }

    /// Never post what a row says is refused or sent wrong, whatever the
    /// attributes claim.
    #[test]
    fn rows_are_never_exceeded() {
        for d in KNOWN_DRIVERS.iter() {
            let r = Record::derive(&facts(d.driver_id, 1, 2, 2));
            assert_eq!(r.posts.standard, d.cmp_swap == Fate::Executed, "{}", d.name);
            assert_eq!(
                r.posts.fetch_add,
                d.fetch_add == Fate::Executed,
                "{}",
                d.name
            );
            assert_eq!(
                r.posts.masked,
                d.masked_cmp_swap == Fate::Executed && d.masked_fetch_add == Fate::Executed,
                "{}",
                d.name
            );
        }
        // The broken ones by name.
        let pvrdma = Record::derive(&facts(DRIVER_VMW_PVRDMA, 1, 1, 1));
        assert!(!pvrdma.posts.masked);
        let mlx5 = Record::derive(&facts(DRIVER_MLX5, 4115, 1, 1));
        assert_eq!(mlx5.posts, KernelAtomics::default());
    }

    /// The rows themselves: one per driver id, each note naming its driver
    /// and the errno of each refusal it records.
    #[test]
    fn rows_are_consistent() {
        for (i, d) in KNOWN_DRIVERS.iter().enumerate() {
            assert!(d.driver_id != 0, "{}", d.name);
            assert!(
                KNOWN_DRIVERS[i + 1..]
                    .iter()
                    .all(|e| e.driver_id != d.driver_id),
                "{} twice",
                d.name
            );
            assert!(d.note.starts_with(d.name), "{}", d.note);
            for fate in [
                d.cmp_swap,
                d.fetch_add,
                d.masked_cmp_swap,
                d.masked_fetch_add,
            ] {
                if let Fate::Refused(e) = fate {
                    assert!(d.note.contains(errno_name(e)), "{}", d.note);
                }
            }
        }
    }

    #[test]
    fn reply_be_never_on_a_big_endian_host() {
        let mut f = facts(0, 4113, 1, 1);
        f.host_big_endian = true;
        assert_eq!(row(f), ("hca", "hca", "native"));
        assert!(Record::derive(&f).reasons.is_empty());
    }

    #[test]
    fn reasons_tell_everything_that_applies() {
        assert!(Record::derive(&facts(0, 4099, 1, 1)).reasons.is_empty());
        assert!(Record::derive(&facts(DRIVER_RXE, 0, 1, 0))
            .reasons
            .is_empty());
        assert_eq!(
            Record::derive(&facts(0, 4113, 1, 1)).reasons.reply_be,
            Some("Connect-IB")
        );
        // A Connect-IB under mlx5_ib: big-endian *and* no kernel atomics.
        let why = reason(facts(DRIVER_MLX5, 4113, 0, 0));
        assert!(why.contains("big-endian"), "{why}");
        assert!(why.contains("no atomics"), "{why}");
        assert!(why.contains("mlx5_ib"), "{why}");
        assert_eq!(why.matches("; ").count(), 2, "{why}");
        let cx4 = reason(facts(DRIVER_MLX5, 4113, 1, 0));
        assert!(
            cx4.contains("big-endian") && cx4.contains("mlx5_ib"),
            "{cx4}"
        );
        assert_eq!(cx4.matches("; ").count(), 1, "{cx4}");
        let odd = Record::derive(&facts(0, 1, 7, 0));
        assert_eq!(odd.atomic_cap, AtomicCap::None);
        assert!(odd.reasons.unknown_cap && !odd.reasons.no_atomics);
        assert_eq!(Reasons::default().to_string(), "");
    }

    #[test]
    fn refusals_are_einval_or_eopnotsupp_once() {
        let mut r = Refusals::default();
        assert!(r.is_empty());
        for other in [0, 5, 12, 16, 108, -22] {
            assert!(!r.note(WrClass::Masked, other), "{other}");
        }
        assert!(r.is_empty());
        assert!(r.note(WrClass::Masked, EINVAL));
        assert!(!r.note(WrClass::Masked, EOPNOTSUPP), "once");
        assert!(r.note(WrClass::CmpSwap, EOPNOTSUPP));
        assert_eq!(
            r,
            Refusals {
                cmp_swap: Some(EOPNOTSUPP),
                fetch_add: None,
                masked: Some(EINVAL)
            }
        );
        for bits in 0..64u32 {
            let r = Refusals::unpack(bits);
            if bits & 0b11 != 3 && bits >> 2 & 0b11 != 3 && bits >> 4 & 0b11 != 3 {
                assert_eq!(r.pack(), bits);
            }
            assert_eq!(Refusals::unpack(r.pack()), r);
        }
    }

    #[test]
    fn refusals_at_run_time() {
        let cx3 = Record::derive(&facts(0, 4099, 1, 1));
        let cx4 = Record::derive(&facts(0, 4115, 1, 0));
        let masked = Refusals {
            masked: Some(EINVAL),
            ..Default::default()
        };
        let fa = Refusals {
            fetch_add: Some(EOPNOTSUPP),
            ..Default::default()
        };
        let cas = Refusals {
            cmp_swap: Some(EINVAL),
            ..Default::default()
        };
        // A refused masked request: native becomes emulated; the caps stay.
        let r = cx3.with_refusals(masked);
        assert_eq!(
            (r.mode, r.atomic_cap, r.masked_atomic_cap),
            (MaskedMode::Emulated, AtomicCap::Hca, AtomicCap::Hca)
        );
        assert!(r.posts.standard && r.posts.fetch_add);
        assert!(r
            .reasons
            .to_string()
            .contains("masked atomic work request (EINVAL)"));
        // A refused fetch-and-add: emulated from then on, CAS still posted.
        let r = cx4.with_refusals(fa);
        assert_eq!(
            (r.mode, r.posts.standard, r.posts.fetch_add),
            (MaskedMode::Emulated, true, false)
        );
        assert!(r.reasons.to_string().contains("fetch-and-add (EOPNOTSUPP)"));
        // A refused compare-and-swap: standard atomics and the emulation
        // are off; native masked atomics stay.
        let r = cx4.with_refusals(cas);
        assert_eq!(
            (r.mode, r.posts),
            (MaskedMode::Unavailable, KernelAtomics::default())
        );
        let r = cx3.with_refusals(cas);
        assert_eq!(r.mode, MaskedMode::Native);
        assert!(!r.posts.standard);
        // Everything refused, every reason told.
        let all = Refusals {
            cmp_swap: Some(EOPNOTSUPP),
            fetch_add: Some(EINVAL),
            masked: Some(EOPNOTSUPP),
        };
        let r = cx3.with_refusals(all);
        assert_eq!(r.mode, MaskedMode::Unavailable);
        assert_eq!(r.reasons.to_string().matches("; ").count(), 2);
    }

    #[test]
    fn classes_of_opcodes() {
        use crate::atomics::wr::WrOpcode;
        for op in WrOpcode::ALL {
            let want = if op.is_masked_atomic() {
                Some(WrClass::Masked)
            } else if op == WrOpcode::AtomicCmpAndSwp {
                Some(WrClass::CmpSwap)
            } else if op == WrOpcode::AtomicFetchAndAdd {
                Some(WrClass::FetchAdd)
            } else {
                None
            };
            assert_eq!(WrClass::of(op), want, "{op:?}");
            assert_eq!(
                WrClass::of(op).is_some(),
                op.is_standard_atomic() || op.is_masked_atomic()
            );
        }
    }

    #[test]
    fn only_unknown_drivers_are_learnt_about() {
        let cx4 = Record::derive(&facts(0, 4115, 1, 0));
        assert!(cx4.learns(WrClass::CmpSwap, 0, true) && cx4.learns(WrClass::FetchAdd, 0, true));
        // Not what is not posted.
        assert!(!cx4.learns(WrClass::Masked, 0, true));
        assert!(Record::derive(&facts(0, 4099, 1, 1)).learns(WrClass::Masked, 0, true));
        // Not a kind the driver accepted before: its refusal is about the
        // QP (its state), not the opcode. Other kinds still are.
        let cas = WrClass::CmpSwap.bit();
        assert!(!cx4.learns(WrClass::CmpSwap, cas, true));
        assert!(cx4.learns(WrClass::FetchAdd, cas, true));
        assert_eq!(
            [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked].map(WrClass::bit),
            [1, 2, 4]
        );
        // Once learnt, not again.
        let down = cx4.with_refusals(Refusals {
            cmp_swap: Some(EINVAL),
            ..Default::default()
        });
        assert!(!down.learns(WrClass::CmpSwap, 0, true));
        // Known drivers: their rows say already; an EINVAL from them is
        // about the QP (its state, its SGE), not the opcode.
        for d in KNOWN_DRIVERS.iter() {
            let r = Record::derive(&facts(d.driver_id, 1, 1, 1));
            for c in [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked] {
                assert!(!r.learns(c, 0, true), "{}", d.name);
            }
        }
        // Nothing to learn on a device without atomics.
        let none = Record::derive(&facts(0, 1, 0, 0));
        assert!(!none.learns(WrClass::CmpSwap, 0, true));
    }

    /// A refusal on a QP not known to send is not learnt, whatever else
    /// holds: a masked fetch-and-add posted in INIT on a fresh adapter
    /// whose driver has no row is the ULP's error, not a missing opcode.
    /// Known to send, the same refusal of the same first request is.
    #[test]
    fn refusals_before_rts_are_not_learnt() {
        let cx3 = Record::derive(&facts(0, 4099, 1, 1));
        for c in [WrClass::CmpSwap, WrClass::FetchAdd, WrClass::Masked] {
            assert!(!cx3.learns(c, 0, false), "{c:?}");
            assert!(cx3.learns(c, 0, true), "{c:?}");
        }
        // The emulation's compare-and-swap refused on that QP too: the
        // device keeps its standard atomics.
        let mut r = Refusals::default();
        for c in [WrClass::Masked, WrClass::CmpSwap] {
            if cx3.with_refusals(r).learns(c, 0, false) {
                r.note(c, EINVAL);
            }
        }
        assert!(r.is_empty());
        assert_eq!(cx3.with_refusals(r).mode, cx3.mode);
    }
}
