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

/// What a driver does with atomic work requests a kernel ULP posts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelAtomics {
    /// Compare-and-swap and fetch-and-add are posted.
    pub standard: bool,
    /// Masked compare-and-swap and masked fetch-and-add are posted.
    pub masked: bool,
}

/// A driver whose handling of kernel atomics is known from its source
/// (RDMA-NOTES section 1), by `enum rdma_driver_id`.
pub struct KnownDriver {
    /// Its `driver_id`.
    pub driver_id: u32,
    /// Its name.
    pub name: &'static str,
    /// What it posts.
    pub posts: KernelAtomics,
    /// Why, in words, when it posts less than its attributes say.
    pub note: &'static str,
}

/// `RDMA_DRIVER_MLX5`, `RDMA_DRIVER_MLX4`, `RDMA_DRIVER_RXE` (6.12
/// `include/uapi/rdma/ib_user_ioctl_verbs.h`; tied to the kernel's values
/// at compile time in `rust/ib/device.rs`).
pub const DRIVER_MLX5: u32 = 1;
/// See [`DRIVER_MLX5`].
pub const DRIVER_MLX4: u32 = 2;
/// See [`DRIVER_MLX5`].
pub const DRIVER_RXE: u32 = 14;

/// The drivers the rules know; any other posts what its attributes say.
pub const KNOWN_DRIVERS: [KnownDriver; 3] = [
    KnownDriver {
        driver_id: DRIVER_MLX4,
        name: "mlx4_ib",
        posts: KernelAtomics {
            standard: true,
            masked: true,
        },
        note: "mlx4_ib posts CAS, FA, masked CAS and masked FA",
    },
    KnownDriver {
        driver_id: DRIVER_MLX5,
        name: "mlx5_ib",
        posts: KernelAtomics {
            standard: false,
            masked: false,
        },
        note: "mlx5_ib (6.12) refuses every atomic work request from the kernel",
    },
    KnownDriver {
        driver_id: DRIVER_RXE,
        name: "rdma_rxe",
        posts: KernelAtomics {
            standard: true,
            masked: false,
        },
        note: "rdma_rxe posts CAS and FA and refuses masked opcodes",
    },
];

/// Silicon that writes atomic replies big-endian whatever the host: the
/// Connect-IB, PF and VF (vendor id, part id, name).
pub const REPLY_BE_PARTS: [(u32, u32, &str); 2] = [
    (0x02c9, 4113, "Connect-IB"),
    (0x02c9, 4114, "Connect-IB VF"),
];

/// What mlx_ext knows of a device when it is added.
#[derive(Clone, Copy, Debug)]
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

/// Why a record differs from what ib_core says, or is unavailable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Nothing to explain.
    None,
    /// The silicon replies big-endian on this little-endian host.
    ReplyBe(&'static str),
    /// The driver posts no kernel atomics although its attributes say
    /// otherwise (its note).
    Driver(&'static str),
    /// The device has no atomics at all.
    NoAtomics,
    /// An attribute had a value ib_core does not define.
    UnknownCap,
    /// A driver the rules do not know refused an atomic work request
    /// (`EOPNOTSUPP` from `ib_post_send`): downgraded at run time.
    Refused,
}

/// The capability record of a device (SPEC section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// What the device does with standard atomics.
    pub atomic_cap: AtomicCap,
    /// What it does with masked atomics.
    pub masked_atomic_cap: AtomicCap,
    /// What the driver posts for kernel ULPs.
    pub posts: KernelAtomics,
    /// What a kernel ULP gets through mlx_ext.
    pub mode: MaskedMode,
    /// Why the record is not simply ib_core's attributes.
    pub reason: Reason,
    /// Whether the driver is one of [`KNOWN_DRIVERS`] (its behaviour is
    /// known from its source, not guessed from its attributes).
    pub known_driver: bool,
}

impl Record {
    /// Derives the record of a device from its facts, by the rules above.
    pub fn derive(f: &DeviceFacts) -> Self {
        let known_caps = f.atomic_cap.is_some() && f.masked_atomic_cap.is_some();
        let atomic = f.atomic_cap.unwrap_or(AtomicCap::None);
        let masked = f.masked_atomic_cap.unwrap_or(AtomicCap::None);
        let be_part = REPLY_BE_PARTS
            .iter()
            .find(|(v, p, _)| *v == f.vendor_id && *p == f.vendor_part_id)
            .map(|(_, _, name)| *name)
            .filter(|_| !f.host_big_endian);
        let driver = KNOWN_DRIVERS.iter().find(|d| d.driver_id == f.driver_id);
        let posts = match driver {
            Some(d) => d.posts,
            None => KernelAtomics {
                standard: atomic != AtomicCap::None,
                masked: masked != AtomicCap::None,
            },
        };
        let mode = if posts.masked {
            MaskedMode::Native
        } else if posts.standard {
            MaskedMode::Emulated
        } else {
            MaskedMode::Unavailable
        };
        let reason = if let Some(part) = be_part {
            Reason::ReplyBe(part)
        } else if !known_caps {
            Reason::UnknownCap
        } else if mode == MaskedMode::Unavailable {
            match driver {
                Some(d) if atomic != AtomicCap::None => Reason::Driver(d.note),
                _ => Reason::NoAtomics,
            }
        } else {
            Reason::None
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
            mode,
            reason,
            known_driver: driver.is_some(),
        }
    }

    /// The record after the driver refused an atomic work request with
    /// `EOPNOTSUPP`: for a driver the rules do not know, nothing is posted
    /// any more and masked atomics are `unavailable`, with the reason;
    /// `None` when nothing changes (a known driver, whose behaviour the rules
    /// already say, or a record that is unavailable already). The caps stay:
    /// they describe the device.
    pub fn after_refusal(&self) -> Option<Self> {
        if self.known_driver || (self.mode == MaskedMode::Unavailable && !self.posts.standard) {
            return None;
        }
        Some(Self {
            posts: KernelAtomics {
                standard: false,
                masked: false,
            },
            mode: MaskedMode::Unavailable,
            reason: Reason::Refused,
            ..*self
        })
    }
}

impl Reason {
    /// The reason in words, for sysfs and the kernel log; empty for
    /// [`Reason::None`].
    pub fn text(self) -> &'static str {
        match self {
            Self::None => "",
            Self::ReplyBe(_) => "the adapter replies to atomics big-endian on this little-endian host (Connect-IB); ib_core cannot say so",
            Self::Driver(note) => note,
            Self::NoAtomics => "the device has no atomics (atomic_cap none)",
            Self::UnknownCap => "ib_core reported an atomic capability it does not define; taken as none",
            Self::Refused => "the driver refused an atomic work request (EOPNOTSUPP); atomics through mlx_ext are off",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AtomicCap;

    #[test]
    fn ib_values_map_to_names() {
        let names: [&str; 3] =
            [0, 1, 2].map(|v| AtomicCap::from_ib(v).map_or("?", AtomicCap::name));
        assert_eq!(names, ["none", "hca", "glob"]);
        assert_eq!(AtomicCap::from_ib(3), None);
        assert_eq!(AtomicCap::HcaReplyBe.name(), "hca_reply_be");
    }

    use super::{DeviceFacts, MaskedMode, Reason, Record, DRIVER_MLX4, DRIVER_MLX5, DRIVER_RXE};

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
            host_big_endian: false,
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

    /// The devices of the issue, row by row (driver_id 0 is the simulator's
    /// RDMA_DRIVER_UNKNOWN: its attributes decide).
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
        // A real ConnectX-3 under mlx4_ib (masked = atomic).
        assert_eq!(
            row(facts(DRIVER_MLX4, 4099, 1, 1)),
            ("hca", "hca", "native")
        );
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
        assert!(
            cx4.reason.text().contains("mlx5_ib"),
            "{}",
            cx4.reason.text()
        );
        // An unknown driver with no atomics.
        let none = Record::derive(&facts(0, 1, 0, 0));
        assert_eq!(
            (none.mode, none.reason),
            (MaskedMode::Unavailable, Reason::NoAtomics)
        );
        // An unknown driver with masked atomics but no standard ones.
        assert_eq!(row(facts(0, 1, 0, 1)), ("none", "hca", "native"));
        // An unknown driver with GLOB standard atomics.
        assert_eq!(row(facts(0, 1, 2, 0)), ("glob", "none", "emulated"));
    }

    #[test]
    fn reply_be_never_on_a_big_endian_host() {
        let mut f = facts(0, 4113, 1, 1);
        f.host_big_endian = true;
        assert_eq!(row(f), ("hca", "hca", "native"));
        assert_eq!(Record::derive(&f).reason, Reason::None);
    }

    #[test]
    fn reasons_are_given_where_the_record_is_not_ib_cores() {
        assert_eq!(Record::derive(&facts(0, 4099, 1, 1)).reason, Reason::None);
        assert_eq!(
            Record::derive(&facts(DRIVER_RXE, 0, 1, 0)).reason,
            Reason::None
        );
        assert!(matches!(
            Record::derive(&facts(0, 4113, 1, 1)).reason,
            Reason::ReplyBe("Connect-IB")
        ));
        let odd = Record::derive(&facts(0, 1, 7, 0));
        assert_eq!(
            (odd.atomic_cap, odd.reason),
            (AtomicCap::None, Reason::UnknownCap)
        );
        for r in [
            Reason::ReplyBe("x"),
            Reason::Driver("y"),
            Reason::NoAtomics,
            Reason::UnknownCap,
            Reason::Refused,
        ] {
            assert!(!r.text().is_empty());
        }
        assert_eq!(Reason::None.text(), "");
    }

    #[test]
    fn refusal_downgrades_unknown_drivers_only() {
        // The simulator's cx4 (unknown driver, standard atomics): emulated,
        // then unavailable with the reason, caps unchanged.
        let cx4 = Record::derive(&facts(0, 4115, 1, 0));
        let down = cx4.after_refusal().unwrap();
        assert_eq!(
            (down.mode, down.reason, down.atomic_cap, down.posts.standard),
            (
                MaskedMode::Unavailable,
                Reason::Refused,
                AtomicCap::Hca,
                false
            )
        );
        // Once: a downgraded record does not change again.
        assert_eq!(down.after_refusal(), None);
        // Unknown native driver too.
        assert!(Record::derive(&facts(0, 4099, 1, 1))
            .after_refusal()
            .is_some());
        // Known drivers: the rules already say what they post.
        for f in [
            facts(DRIVER_RXE, 0, 1, 0),
            facts(DRIVER_MLX4, 4099, 1, 1),
            facts(DRIVER_MLX5, 4115, 1, 0),
        ] {
            assert_eq!(Record::derive(&f).after_refusal(), None);
        }
        // Nothing to take away from a device without atomics.
        assert_eq!(Record::derive(&facts(0, 1, 0, 0)).after_refusal(), None);
    }
}
