// SPDX-License-Identifier: GPL-2.0

//! Where the `iov` tree appears (`Documentation/vf-guids.rst`): on the
//! InfiniBand ports of devices with SR-IOV functions whose driver runs no
//! GUID engine of its own, and only where an administrator cannot be
//! surprised by SA requests to a production subnet manager. Decided from
//! facts the kernel side gathers, by one pure rule, tested row by row.

use super::guid_split;
use core::fmt;

/// How a device's VFs get their GUIDs, chosen by the device's identity
/// (vendor and part id, as the capability record is) and never by its
/// name (`Documentation/vf-guids.rst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuidModel {
    /// Alias GUIDs: a VF's GUIDs are entries of the PF port's GUID table,
    /// which the SM grants through GuidInfoRecords (ConnectX-3, mlx4's
    /// `alias_GUID.c`; and any device not known as an mlx5 one).
    Alias,
    /// Virtual ports: each VF has a vport with one node GUID and one port
    /// GUID of its own, set through the driver's `set_vf_guid` and read
    /// through `get_vf_guid` (mlx5's `ib_virt.c`, what `ip link set <pf>
    /// vf N node_guid|port_guid` reaches); the SM sees vports through its
    /// virtualization support, and no GuidInfoRecord is sent for them
    /// (Connect-IB, ConnectX-4 and later).
    Vport,
}

/// The Mellanox vendor id (`ib_device_attr.vendor_id`, the OUI).
const MELLANOX: u32 = 0x02c9;

/// The PCI device ids of the physical functions mlx5_core drives, as
/// mlx5_ib reports them in `vendor_part_id` (`mdev->pdev->device`): its
/// `mlx5_core_pci_table` (drivers/net/ethernet/mellanox/mlx5/core/main.c,
/// 6.12 lines 2233-2259) without the VFs, which have no VFs of their own.
pub const MLX5_PF_PARTS: [u32; 17] = [
    0x1011, // Connect-IB
    0x1013, // ConnectX-4
    0x1015, // ConnectX-4 Lx
    0x1017, // ConnectX-5
    0x1019, // ConnectX-5 Ex
    0x101b, // ConnectX-6
    0x101d, // ConnectX-6 Dx
    0x101f, // ConnectX-6 Lx
    0x1021, // ConnectX-7
    0x1023, // ConnectX-8
    0x1025, // ConnectX-9
    0x1027, // ConnectX-10
    0x2101, // ConnectX-10 NVLink-C2C
    0xa2d2, // BlueField (ConnectX-5)
    0xa2d6, // BlueField-2 (ConnectX-6 Dx)
    0xa2dc, // BlueField-3 (ConnectX-7)
    0xa2df, // BlueField-4 (ConnectX-8)
];

/// Returns the GUID model of a device with this identity: [`GuidModel::Vport`]
/// for an mlx5 PF's, [`GuidModel::Alias`] for anything else.
pub fn guid_model(vendor_id: u32, vendor_part_id: u32) -> GuidModel {
    if vendor_id == MELLANOX && MLX5_PF_PARTS.contains(&vendor_part_id) {
        GuidModel::Vport
    } else {
        GuidModel::Alias
    }
}

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
        /// Its VFs, as [`pci_vf_count`] counts them.
        num_vfs: u16,
    },
    /// Anything else: a VF, a software device (rxe), an unknown bus.
    Other,
}

/// What the PCI core shows of a PF's VFs, from a watch on the PCI bus that
/// sees each VF added and removed, and the PF's SR-IOV capability
/// registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PciVfs {
    /// The PF's VFs on the bus.
    pub present: u16,
    /// The lowest VF number (`pci_iov_vf_id()`) not on the bus: VFs
    /// `0..first_absent` are all there.
    pub first_absent: u16,
    /// The capability's NumVFs register: what the PF's driver enabled.
    pub num_vfs: u16,
    /// The capability's InitialVFs register.
    pub initial: u16,
    /// VF Enable is set in the capability's control register.
    pub enabled: bool,
}

/// Why a PF's VFs are not a number to make tables for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfsChanging {
    /// The PF's driver is adding them: `present` of `expected` so far.
    Adding {
        /// VFs on the bus.
        present: u16,
        /// VFs it enables.
        expected: u16,
    },
    /// Some are gone and others not: SR-IOV is being disabled (no file of
    /// sysfs removes a VF on its own: the PCI core gives VFs no `remove`,
    /// `drivers/pci/pci-sysfs.c` `pci_dev_hp_attrs_are_visible`).
    Removing {
        /// VFs still on the bus.
        present: u16,
        /// The lowest VF number gone.
        first_absent: u16,
    },
}

impl fmt::Display for VfsChanging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Adding { present, expected } => write!(
                f,
                "the PF's VFs are being added ({} of {} on the bus)",
                present, expected
            ),
            Self::Removing {
                present,
                first_absent,
            } => write!(
                f,
                "the PF's VFs are going ({} left on the bus, VF {} gone)",
                present, first_absent
            ),
        }
    }
}

/// The number of VFs a PCI PF has, for its tables: those on the bus, once
/// they are all there (VFs `0..n`, `n` what the PF's driver enabled), or 0
/// when there are none; a [`VfsChanging`] in between.
///
/// The PCI core adds VFs one by one, in order, after it set NumVFs and VF
/// Enable, and sets `pci_num_vf()` only after the last; a disable removes
/// them one by one from VF 0, and clears `pci_num_vf()` a second after the
/// last; an enable that fails half way removes those it added from the
/// last one down (`drivers/pci/iov.c`: `sriov_enable`, `sriov_add_vfs`,
/// `sriov_disable`, 6.12 lines 580-742): [`VfsChanging::Adding`] until
/// none is left. `pci_num_vf()` is therefore wrong in both windows,
/// and what is on the bus is the truth. A PF adds `min(NumVFs,
/// InitialVFs)` VFs (`initial` in `sriov_enable`).
pub fn pci_vf_count(v: &PciVfs) -> Result<u16, VfsChanging> {
    if v.present == 0 {
        return Ok(0);
    }
    if v.first_absent < v.present {
        return Err(VfsChanging::Removing {
            present: v.present,
            first_absent: v.first_absent,
        });
    }
    let expected = if v.enabled {
        v.num_vfs.min(v.initial)
    } else {
        0
    };
    match v.present {
        n if n == expected => Ok(n),
        n if n < expected => Err(VfsChanging::Adding {
            present: n,
            expected,
        }),
        // More than enabled: VF Enable was cleared, or NumVFs lowered,
        // under VFs still there (only a disable in progress does that).
        n => Err(VfsChanging::Removing {
            present: n,
            first_absent: v.first_absent,
        }),
    }
}

/// What the kernel side knows of a device and one of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortFacts {
    /// The parent, as above.
    pub parent: Parent,
    /// The driver runs its own engine: an mlx4_ib device (`driver_id`
    /// `RDMA_DRIVER_MLX4`) whose PCI parent is an mlx4_core SR-IOV master, or
    /// an `iov` directory the driver made itself (mlx4_ib makes it after
    /// registration, `drivers/infiniband/hw/mlx4/sysfs.c:820`, so it can only be
    /// seen later).
    pub driver_iov: bool,
    /// The port's link layer is InfiniBand (not Ethernet: RoCE ports never
    /// get a tree).
    pub infiniband: bool,
    /// The device's switch, `mlx_ext/vf_guid_tables`: as
    /// [`on_by_default`] says until an administrator writes it.
    pub switched_on: bool,
    /// The port's GUID entries: its GID table length (`gid_tbl_len`).
    /// Only the alias model uses them.
    pub port_guids: u16,
    /// The device's GUID model.
    pub model: GuidModel,
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
    /// More VFs than the port has GUIDs for, after the PF's 2 (more than
    /// 126 on a port of 128).
    TooFewGuids {
        /// The port's GUID entries.
        port_guids: u16,
        /// The device's VFs.
        num_vfs: u16,
    },
}

impl NoTree {
    /// Whether the reason is worth one kernel message (the others are the
    /// normal case of most devices).
    pub const fn is_logged(self) -> bool {
        matches!(
            self,
            Self::TooFewGuids { .. } | Self::DriverEngine | Self::NotOptedIn | Self::SwitchedOff
        )
    }

    /// The reason in words, without numbers (its [`fmt::Display`] has
    /// them).
    pub const fn text(self) -> &'static str {
        match self {
            Self::NotInfiniband => "the port is not InfiniBand",
            Self::NoSriov => "the device has no SR-IOV functions mlx_ext knows of",
            Self::NoVfs => "the device has no VFs",
            Self::NotOptedIn => "a PCI PF with VFs: mlx_ext's GUID engine is off for it until an administrator writes \"on\" to mlx_ext/vf_guid_tables",
            Self::SwitchedOff => "switched off in mlx_ext/vf_guid_tables",
            Self::DriverEngine => "the driver runs its own GUID engine and iov tree (mlx4_ib SR-IOV master)",
            Self::TooFewGuids { .. } => {
                "the port has too few GUIDs for its VFs (2 for the PF, at least 1 per VF)"
            }
        }
    }
}

impl fmt::Display for NoTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooFewGuids {
                port_guids,
                num_vfs,
            } => write!(
                f,
                "the port has {} GUIDs: too few for the PF's 2 and one for each of {} VFs",
                port_guids, num_vfs
            ),
            other => f.write_str(other.text()),
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
    if f.model == GuidModel::Vport {
        // A vport per VF: no table to share.
        return Ok(num_vfs);
    }
    match guid_split(f.port_guids, num_vfs) {
        Ok(_) => Ok(num_vfs),
        Err(_) => Err(NoTree::TooFewGuids {
            port_guids: f.port_guids,
            num_vfs,
        }),
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

    fn vfs(present: u16, first_absent: u16, num_vfs: u16, enabled: bool) -> PciVfs {
        PciVfs {
            present,
            first_absent,
            num_vfs,
            initial: 8,
            enabled,
        }
    }

    #[test]
    fn pci_vfs_count_once_all_are_there() {
        // Enabling 4: NumVFs and VF Enable first, then VF 0, 1, 2, 3.
        assert_eq!(pci_vf_count(&vfs(0, 0, 4, true)), Ok(0));
        for n in 1..4 {
            assert_eq!(
                pci_vf_count(&vfs(n, n, 4, true)),
                Err(VfsChanging::Adding {
                    present: n,
                    expected: 4
                })
            );
        }
        assert_eq!(pci_vf_count(&vfs(4, 4, 4, true)), Ok(4));
        // Disabling: VF 0 goes first, VF Enable stays set until a second
        // after the last; none left is 0 VFs at once.
        for n in (1..4).rev() {
            assert_eq!(
                pci_vf_count(&vfs(n, 0, 4, true)),
                Err(VfsChanging::Removing {
                    present: n,
                    first_absent: 0
                })
            );
        }
        assert_eq!(pci_vf_count(&vfs(0, 0, 4, true)), Ok(0));
        assert_eq!(pci_vf_count(&vfs(0, 0, 0, false)), Ok(0));
        // A gap below VFs still there.
        assert_eq!(
            pci_vf_count(&vfs(3, 2, 4, true)),
            Err(VfsChanging::Removing {
                present: 3,
                first_absent: 2
            })
        );
        // VF Enable cleared under VFs still there.
        assert!(matches!(
            pci_vf_count(&vfs(4, 4, 4, false)),
            Err(VfsChanging::Removing { .. })
        ));
        // A PF that adds only InitialVFs of them (VF Migration).
        let v = PciVfs {
            initial: 2,
            ..vfs(2, 2, 4, true)
        };
        assert_eq!(pci_vf_count(&v), Ok(2));
        assert_eq!(
            vfs(1, 1, 3, true).change_text(),
            "the PF's VFs are being added (1 of 3 on the bus)"
        );
        assert_eq!(
            vfs(2, 0, 3, true).change_text(),
            "the PF's VFs are going (2 left on the bus, VF 0 gone)"
        );
    }

    extern crate std;

    impl PciVfs {
        fn change_text(&self) -> std::string::String {
            use std::string::ToString;
            pci_vf_count(self).unwrap_err().to_string()
        }
    }

    fn facts(parent: Parent) -> PortFacts {
        PortFacts {
            parent,
            driver_iov: false,
            infiniband: true,
            switched_on: on_by_default(&parent),
            port_guids: 128,
            model: GuidModel::Alias,
        }
    }

    fn too_few(port_guids: u16, num_vfs: u16) -> Result<u16, NoTree> {
        Err(NoTree::TooFewGuids {
            port_guids,
            num_vfs,
        })
    }

    #[test]
    fn rows() {
        // A simulated device with VFs: a tree, on by default.
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 5 })), Ok(5));
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 1 })), Ok(1));
        assert_eq!(placement(&facts(Parent::Sim { num_vfs: 126 })), Ok(126));
        assert_eq!(
            placement(&facts(Parent::Sim { num_vfs: 127 })),
            too_few(128, 127)
        );
        // The port's own size: 2 for the PF, one per VF.
        let small = |port_guids, num_vfs| PortFacts {
            port_guids,
            ..facts(Parent::Sim { num_vfs })
        };
        assert_eq!(placement(&small(16, 14)), Ok(14));
        assert_eq!(placement(&small(16, 15)), too_few(16, 15));
        assert_eq!(placement(&small(3, 1)), Ok(1));
        assert_eq!(placement(&small(2, 1)), too_few(2, 1));
        assert_eq!(placement(&small(0, 1)), too_few(0, 1));
        // More than 128 is taken as 128.
        assert_eq!(placement(&small(255, 126)), Ok(126));
        assert_eq!(placement(&small(255, 127)), too_few(255, 127));
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
        assert_eq!(placement(&pf(200, true)), too_few(128, 200));
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
    fn vports_have_no_table_to_share() {
        let vport = |num_vfs, port_guids| PortFacts {
            model: GuidModel::Vport,
            port_guids,
            ..facts(Parent::Sim { num_vfs })
        };
        assert_eq!(placement(&vport(127, 128)), Ok(127));
        assert_eq!(placement(&vport(255, 1)), Ok(255));
        assert_eq!(placement(&vport(0, 128)), Err(NoTree::NoVfs));
        let roce = PortFacts {
            infiniband: false,
            ..vport(4, 128)
        };
        assert_eq!(placement(&roce), Err(NoTree::NotInfiniband));
    }

    #[test]
    fn the_model_is_the_identitys() {
        for part in MLX5_PF_PARTS {
            assert_eq!(guid_model(MELLANOX, part), GuidModel::Vport, "{part:#x}");
            assert_eq!(guid_model(0x1234, part), GuidModel::Alias, "{part:#x}");
        }
        // mlx4's parts (mlx4_pci_table), mlx5's VFs, rxe's (0).
        for part in [0x1003, 0x1004, 0x1007, 0x1012, 0x1014, 0x101e, 0] {
            assert_eq!(guid_model(MELLANOX, part), GuidModel::Alias, "{part:#x}");
        }
        // The simulator's models: cx3 alias, the mlx5 ones vports.
        assert_eq!(guid_model(MELLANOX, 4099), GuidModel::Alias);
        for part in [4113, 4115, 4117] {
            assert_eq!(guid_model(MELLANOX, part), GuidModel::Vport);
        }
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
        // A port whose table cannot hold one VF never has a tree.
        let tiny = PortFacts {
            port_guids: 2,
            ..pf
        };
        assert_eq!(
            can_switch_on(&tiny),
            Err(NoTree::TooFewGuids {
                port_guids: 2,
                num_vfs: 1
            })
        );
    }

    #[test]
    fn messages() {
        let few = NoTree::TooFewGuids {
            port_guids: 16,
            num_vfs: 15,
        };
        assert!(few.is_logged());
        assert!(!NoTree::NoSriov.is_logged());
        assert!(!NoTree::NotInfiniband.is_logged());
        for r in [
            NoTree::NotInfiniband,
            NoTree::NoSriov,
            NoTree::NoVfs,
            NoTree::NotOptedIn,
            NoTree::SwitchedOff,
            NoTree::DriverEngine,
            few,
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
