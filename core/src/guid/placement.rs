// SPDX-License-Identifier: GPL-2.0

//! Where the `iov` tree appears (issue 12, SPEC section 4): on the
//! InfiniBand ports of devices with SR-IOV functions whose driver runs no
//! GUID engine of its own, and only where an administrator cannot be
//! surprised by SA requests to a production subnet manager. Decided from
//! facts the kernel side gathers, by one pure rule, tested row by row.

use super::{guid_split, GuidError};

/// What a device's parent says about its SR-IOV functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    /// A simulated adapter (`mlx_ext_sim`), with its number of VFs.
    Sim {
        /// `NUM_VFS` of the simulated device.
        num_vfs: u16,
    },
    /// A PCI physical function.
    PciPf {
        /// `pci_num_vf()`.
        num_vfs: u16,
    },
    /// Anything else: a VF, a software device (rxe), an unknown bus.
    Other,
}

/// What the kernel side knows of a device and one of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortFacts {
    /// The parent, as above.
    pub parent: Parent,
    /// The driver runs its own engine: an mlx4_ib device (`driver_id`
    /// `RDMA_DRIVER_MLX4`) whose PCI parent is an mlx4_core SR-IOV master, or
    /// an `iov` directory the driver made itself (mlx4_ib makes it after
    /// registration, so it can only be seen later; RDMA-NOTES section 5).
    pub driver_iov: bool,
    /// The port's link layer is InfiniBand (not Ethernet: RoCE ports never
    /// get a tree).
    pub infiniband: bool,
    /// The device's switch, `mlx_ext/vf_guid_tables`: as
    /// [`on_by_default`] says until an administrator writes it.
    pub switched_on: bool,
}

/// Whether a device's tables are on before an administrator says: on a
/// simulated adapter, which no production subnet manager sees; off on a
/// real PCI PF, so that loading mlx_ext never sends SA requests unasked.
pub const fn on_by_default(parent: &Parent) -> bool {
    matches!(parent, Parent::Sim { .. })
}

/// Why a port has no tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTree {
    /// The port is not InfiniBand (RoCE).
    NotInfiniband,
    /// The device has no SR-IOV parent mlx_ext knows.
    NoSriov,
    /// The device has no VFs.
    NoVfs,
    /// A real PCI PF the administrator did not opt in.
    NotOptedIn,
    /// An administrator switched the device's tables off.
    SwitchedOff,
    /// The driver runs its own GUID engine (mlx4_ib master).
    DriverEngine,
    /// More VFs than GUIDs to give them (more than 126).
    TooManyVfs(u16),
}

impl NoTree {
    /// Whether the reason is worth one kernel message (the others are the
    /// normal case of most devices).
    pub const fn is_logged(self) -> bool {
        matches!(
            self,
            Self::TooManyVfs(_) | Self::DriverEngine | Self::NotOptedIn | Self::SwitchedOff
        )
    }

    /// The reason in words.
    pub const fn text(self) -> &'static str {
        match self {
            Self::NotInfiniband => "the port is not InfiniBand",
            Self::NoSriov => "the device has no SR-IOV functions mlx_ext knows of",
            Self::NoVfs => "the device has no VFs",
            Self::NotOptedIn => "a PCI PF with VFs: mlx_ext's GUID engine is off for it until an administrator writes \"on\" to mlx_ext/vf_guid_tables",
            Self::SwitchedOff => "switched off in mlx_ext/vf_guid_tables",
            Self::DriverEngine => "the driver runs its own GUID engine and iov tree (mlx4_ib SR-IOV master)",
            Self::TooManyVfs(_) => "more than 126 VFs: not every VF can get a GUID",
        }
    }
}

/// Decides whether a port gets the tree; `Ok(num_vfs)` if it does.
pub fn placement(f: &PortFacts) -> Result<u16, NoTree> {
    if !f.infiniband {
        return Err(NoTree::NotInfiniband);
    }
    if f.driver_iov {
        return Err(NoTree::DriverEngine);
    }
    let num_vfs = match f.parent {
        Parent::Sim { num_vfs } | Parent::PciPf { num_vfs } => num_vfs,
        Parent::Other => return Err(NoTree::NoSriov),
    };
    if num_vfs == 0 {
        return Err(NoTree::NoVfs);
    }
    if !f.switched_on {
        return Err(match f.parent {
            Parent::PciPf { .. } => NoTree::NotOptedIn,
            _ => NoTree::SwitchedOff,
        });
    }
    match guid_split(num_vfs) {
        Ok(_) => Ok(num_vfs),
        Err(GuidError::TooManyVfs) | Err(_) => Err(NoTree::TooManyVfs(num_vfs)),
    }
}

/// Whether an administrator may switch a port's tables on: not where it
/// could never have one, whatever its number of VFs (a RoCE port, a device
/// with no SR-IOV parent mlx_ext knows, an mlx4_ib master). A PF with no VFs
/// yet may: its tables appear with its VFs.
pub fn can_switch_on(f: &PortFacts) -> Result<(), NoTree> {
    let parent = match f.parent {
        Parent::Sim { .. } => Parent::Sim { num_vfs: 1 },
        Parent::PciPf { .. } => Parent::PciPf { num_vfs: 1 },
        Parent::Other => Parent::Other,
    };
    placement(&PortFacts {
        parent,
        switched_on: true,
        ..*f
    })
    .map(|_| ())
}

/// The name of function `function` (0 the PF) of a PF whose PCI name is
/// `pf_name`, as mlx4's `sysfs.c` `get_name` makes it: the first 8
/// characters of the PF's name, then `%.2d.%d` of `function / 8` and
/// `function % 8`. Writes it into `out` and returns its length, or `None`
/// if `out` is too small.
pub fn function_name(pf_name: &[u8], function: u16, out: &mut [u8]) -> Option<usize> {
    let prefix = pf_name.get(..8).unwrap_or(pf_name);
    let dev = function / 8;
    let func = function % 8;
    let mut n = 0;
    let mut put = |b: u8| -> Option<()> {
        *out.get_mut(n)? = b;
        n += 1;
        Some(())
    };
    for &b in prefix {
        put(b)?;
    }
    // `%.2d`: at least two digits.
    let mut digits = [0u8; 5];
    let mut len = 0;
    let mut v = dev;
    loop {
        digits[len] = b'0' + (v % 10) as u8;
        len += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if len < 2 {
        digits[len] = b'0';
        len += 1;
    }
    for i in (0..len).rev() {
        put(digits[i])?;
    }
    put(b'.')?;
    put(b'0' + func as u8)?;
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(parent: Parent) -> PortFacts {
        PortFacts {
            parent,
            driver_iov: false,
            infiniband: true,
            switched_on: on_by_default(&parent),
        }
    }

    #[test]
    fn rows() {
        // A simulated device with VFs: a tree, on by default.
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 5 })), Ok(5));
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 1 })), Ok(1));
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 126 })), Ok(126));
        assert_eq!(
            placement(&facts(Parent::Sim { num_vfs: 127 })),
            Err(NoTree::TooManyVfs(127))
        );
        assert_eq!(
            placement(&facts(Parent::Sim { num_vfs: 0 })),
            Err(NoTree::NoVfs)
        );
        // A real PF: only when opted in.
        let pf = |num_vfs, switched_on| PortFacts {
            switched_on,
            ..facts(Parent::PciPf { num_vfs })
        };
        assert_eq!(
            placement(&facts(Parent::PciPf { num_vfs: 4 })),
            Err(NoTree::NotOptedIn)
        );
        assert_eq!(placement(&pf(4, false)), Err(NoTree::NotOptedIn));
        assert_eq!(placement(&pf(4, true)), Ok(4));
        assert_eq!(placement(&pf(0, true)), Err(NoTree::NoVfs));
        assert_eq!(placement(&pf(0, false)), Err(NoTree::NoVfs));
        assert_eq!(placement(&pf(200, true)), Err(NoTree::TooManyVfs(200)));
        // rxe, VFs, anything else.
        assert_eq!(placement(&facts(Parent::Other)), Err(NoTree::NoSriov));
        // RoCE ports never.
        let mut roce = facts(Parent::Sim { num_vfs: 5 });
        roce.infiniband = false;
        assert_eq!(placement(&roce), Err(NoTree::NotInfiniband));
        // mlx4_ib master: its own tree, never a second one, opted in or not.
        let mut mlx4 = pf(4, true);
        mlx4.driver_iov = true;
        assert_eq!(placement(&mlx4), Err(NoTree::DriverEngine));
        // A simulated adapter switched off.
        let off = PortFacts {
            switched_on: false,
            ..facts(Parent::Sim { num_vfs: 5 })
        };
        assert_eq!(placement(&off), Err(NoTree::SwitchedOff));
        assert_eq!(
            placement(&PortFacts {
                switched_on: false,
                ..facts(Parent::Sim { num_vfs: 0 })
            }),
            Err(NoTree::NoVfs)
        );
    }

    #[test]
    fn defaults() {
        assert!(on_by_default(&Parent::Sim { num_vfs: 0 }));
        assert!(!on_by_default(&Parent::PciPf { num_vfs: 4 }));
        assert!(!on_by_default(&Parent::Other));
    }

    #[test]
    fn switching_on() {
        let pf = facts(Parent::PciPf { num_vfs: 0 });
        // A PF without VFs yet, or with too many: the switch is its own.
        assert_eq!(can_switch_on(&pf), Ok(()));
        assert_eq!(
            can_switch_on(&facts(Parent::PciPf { num_vfs: 200 })),
            Ok(())
        );
        assert_eq!(can_switch_on(&facts(Parent::Sim { num_vfs: 0 })), Ok(()));
        // Never a tree whatever the VFs: refused.
        assert_eq!(can_switch_on(&facts(Parent::Other)), Err(NoTree::NoSriov));
        let roce = PortFacts {
            infiniband: false,
            ..pf
        };
        assert_eq!(can_switch_on(&roce), Err(NoTree::NotInfiniband));
        let mlx4 = PortFacts {
            driver_iov: true,
            ..pf
        };
        assert_eq!(can_switch_on(&mlx4), Err(NoTree::DriverEngine));
    }

    #[test]
    fn messages() {
        assert!(NoTree::TooManyVfs(127).is_logged());
        assert!(!NoTree::NoSriov.is_logged());
        assert!(!NoTree::NotInfiniband.is_logged());
        for r in [
            NoTree::NotInfiniband,
            NoTree::NoSriov,
            NoTree::NoVfs,
            NoTree::NotOptedIn,
            NoTree::SwitchedOff,
            NoTree::DriverEngine,
            NoTree::TooManyVfs(127),
        ] {
            assert!(!r.text().is_empty());
        }
    }

    fn name(pf: &str, function: u16, out: &mut [u8; 32]) -> usize {
        function_name(pf.as_bytes(), function, out).unwrap()
    }

    fn check(pf: &str, function: u16, want: &str) {
        let mut out = [0u8; 32];
        let n = name(pf, function, &mut out);
        assert_eq!(&out[..n], want.as_bytes(), "{pf} {function}");
    }

    /// As mlx4's get_name: "%.8s%.2d.%d".
    #[test]
    fn function_names_as_mlx4() {
        check("0000:03:00.0", 0, "0000:03:00.0");
        check("0000:03:00.0", 1, "0000:03:00.1");
        check("0000:03:00.0", 7, "0000:03:00.7");
        check("0000:03:00.0", 8, "0000:03:01.0");
        check("0000:03:00.0", 126, "0000:03:15.6");
        check("0000:81:00.0", 800, "0000:81:100.0");
        let mut small = [0u8; 8];
        assert_eq!(function_name(b"0000:03:00.0", 1, &mut small), None);
    }
}
