// SPDX-License-Identifier: GPL-2.0

//! The adapters `mlx_ext_sim` can pretend to be
//! (`Documentation/simulator.rst`), kept as one table of data: a simulated
//! device presents the identity of its model to ib_core, and mlx_ext recognises
//! it by that identity alone, never by name.

use crate::atomics::ReplyOrder;
use crate::caps::AtomicCap;

/// A simulated adapter model: the identity it presents to ib_core and how its
/// data path executes atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// The name an administrator writes to `new_device`: `cx3`, `connectib`
    /// or `cx4`.
    pub name: &'static str,
    /// The adapter's marketing name, for logs and sysfs.
    pub description: &'static str,
    /// `ib_device_attr.vendor_id`: the Mellanox OUI 0x02c9 for every model.
    pub vendor_id: u32,
    /// `ib_device_attr.vendor_part_id`: the PCI device ID of the adapter's PF.
    pub vendor_part_id: u32,
    /// `ib_device_attr.hw_ver`: the hardware revision.
    pub hw_ver: u32,
    /// `ib_device_attr.atomic_cap`: one of the three values ib_core knows
    /// (`none`, `hca`, `glob`); never [`AtomicCap::HcaReplyBe`], which is
    /// mlx_ext's own conclusion from the identity, not something a driver
    /// reports.
    pub atomic_cap: AtomicCap,
    /// `ib_device_attr.masked_atomic_cap`, with the same restriction.
    pub masked_atomic_cap: AtomicCap,
    /// Whether the data path executes the masked atomic opcodes; a model
    /// without them refuses masked work requests at post time.
    pub masked_atomics: bool,
    /// The byte order in which the adapter writes atomic responses.
    pub reply_order: ReplyOrder,
    /// `ib_device_attr.fw_ver`, packed as mlx4 and mlx5 do:
    /// `major << 32 | minor << 16 | subminor`.
    pub fw_ver: u64,
    /// Whether its driver offers `set_vf_guid` (an SR-IOV VF's node and
    /// port GUIDs, set by the PF): mlx5_ib does, mlx4_ib does not (its
    /// VFs' GUIDs are alias GUIDs the SM grants).
    pub set_vf_guid: bool,
    /// The GID table length of an InfiniBand port (`gid_tbl_len`), which
    /// its SM sees as the PortInfo GUIDCap: the alias GUID table's size.
    /// `new_device`'s GUIDS field overrides it.
    pub port_guids: u16,
}

/// Packs a firmware version as `ib_device_attr.fw_ver` holds it.
const fn fw(major: u16, minor: u16, subminor: u16) -> u64 {
    ((major as u64) << 32) | ((minor as u64) << 16) | (subminor as u64)
}

/// The Mellanox vendor OUI, `ib_device_attr.vendor_id` of every model.
const MELLANOX: u32 = 0x02c9;

/// Every model the simulator knows, in the order `new_device`'s error message
/// lists them.
pub static MODELS: [Model; 4] = [
    // mlx4: masked_atomic_cap = atomic_cap, all four atomic opcodes posted,
    // replies in host order. Firmware 2.42.5000 is ConnectX-3's last.
    Model {
        name: "cx3",
        description: "ConnectX-3",
        vendor_id: MELLANOX,
        vendor_part_id: 4099,
        hw_ver: 0,
        atomic_cap: AtomicCap::Hca,
        masked_atomic_cap: AtomicCap::Hca,
        masked_atomics: true,
        reply_order: ReplyOrder::Host,
        fw_ver: fw(2, 42, 5000),
        set_vf_guid: false,
        // mlx4: QUERY_PORT's log_max_gid (mlx4_core main.c:
        // `gid_table_len[port] = port_cap->max_gids`), which mlx4_ib
        // reports for an IB port (mlx4 main.c:692); 128 on a ConnectX-3,
        // its PortInfo GUIDCap (mlx4 main.c:690, the network view).
        port_guids: 128,
    },
    // The same capabilities as ConnectX-3, but the silicon writes atomic
    // responses big-endian whatever the host. It reports plain `hca` to
    // ib_core, which knows no "reply big-endian" value: mlx_ext derives
    // `hca_reply_be` from the part id. Firmware 10.16.1200 is its last.
    Model {
        name: "connectib",
        description: "Connect-IB",
        vendor_id: MELLANOX,
        vendor_part_id: 4113,
        hw_ver: 0,
        atomic_cap: AtomicCap::Hca,
        masked_atomic_cap: AtomicCap::Hca,
        masked_atomics: true,
        reply_order: ReplyOrder::BigEndian,
        fw_ver: fw(10, 16, 1200),
        set_vf_guid: true,
        // mlx5: the firmware's gid_table_size (mlx5 main.c:1464,
        // `mlx5_get_gid_table_len`); what a real one reports is not in the
        // sources read: 128 assumed, the GUIDS knob for others.
        port_guids: 128,
    },
    // Standard atomics only, host-order replies.
    Model {
        name: "cx4",
        description: "ConnectX-4",
        vendor_id: MELLANOX,
        vendor_part_id: 4115,
        hw_ver: 0,
        atomic_cap: AtomicCap::Hca,
        masked_atomic_cap: AtomicCap::None,
        masked_atomics: false,
        reply_order: ReplyOrder::Host,
        fw_ver: fw(12, 28, 2006),
        set_vf_guid: true,
        // mlx5: the firmware's gid_table_size (mlx5 main.c:1464,
        // `mlx5_get_gid_table_len`); what a real one reports is not in the
        // sources read: 128 assumed, the GUIDS knob for others.
        port_guids: 128,
    },
    // No atomics at all: what upstream mlx5 reports for an adapter whose
    // firmware cannot reply in host order. For the API's refusals.
    Model {
        name: "cx4lx",
        description: "ConnectX-4 Lx",
        vendor_id: MELLANOX,
        vendor_part_id: 4117,
        hw_ver: 0,
        atomic_cap: AtomicCap::None,
        masked_atomic_cap: AtomicCap::None,
        masked_atomics: false,
        reply_order: ReplyOrder::Host,
        fw_ver: fw(14, 32, 1010),
        set_vf_guid: true,
        // mlx5: the firmware's gid_table_size (mlx5 main.c:1464,
        // `mlx5_get_gid_table_len`); what a real one reports is not in the
        // sources read: 128 assumed, the GUIDS knob for others.
        port_guids: 128,
    },
];

/// Returns the model whose name is exactly `name` (case-sensitive, no
/// surrounding blanks), if any.
pub fn find(name: &[u8]) -> Option<&'static Model> {
    MODELS.iter().find(|m| m.name.as_bytes() == name)
}

/// A port's alias GUIDs: the 16 GuidInfoRecords of 8 GUIDs a port's SA
/// keeps (IBA 15.2.5.18), the GID table length of a ConnectX-3 port.
pub const PORT_GUIDS: usize = 128;

/// The largest number of InfiniBand ports a simulated device may have.
pub const MAX_PORTS: u8 = 2;

/// The largest number of SR-IOV VFs a simulated device may have. It is above
/// the 126 that still give every VF a GUID (`Documentation/vf-guids.rst`), so
/// that the refusal of too many VFs can be tested.
pub const MAX_NUM_VFS: u16 = 255;

// At least 127 VFs, one more than can each get a GUID.
const _: () = assert!(MAX_NUM_VFS >= 127);

#[cfg(test)]
mod tests {
    use super::{find, MAX_NUM_VFS, MAX_PORTS, MODELS};
    use crate::atomics::ReplyOrder;
    use crate::caps::AtomicCap;

    type Row = (
        &'static str,
        &'static str,
        u32,
        u32,
        AtomicCap,
        AtomicCap,
        bool,
        ReplyOrder,
    );

    #[test]
    fn table_is_pinned_row_by_row() {
        let expected: [Row; 4] = [
            (
                "cx3",
                "ConnectX-3",
                0x02c9,
                4099,
                AtomicCap::Hca,
                AtomicCap::Hca,
                true,
                ReplyOrder::Host,
            ),
            (
                "connectib",
                "Connect-IB",
                0x02c9,
                4113,
                AtomicCap::Hca,
                AtomicCap::Hca,
                true,
                ReplyOrder::BigEndian,
            ),
            (
                "cx4",
                "ConnectX-4",
                0x02c9,
                4115,
                AtomicCap::Hca,
                AtomicCap::None,
                false,
                ReplyOrder::Host,
            ),
            (
                "cx4lx",
                "ConnectX-4 Lx",
                0x02c9,
                4117,
                AtomicCap::None,
                AtomicCap::None,
                false,
                ReplyOrder::Host,
            ),
        ];
        for (m, e) in MODELS.iter().zip(expected) {
            let row: Row = (
                m.name,
                m.description,
                m.vendor_id,
                m.vendor_part_id,
                m.atomic_cap,
                m.masked_atomic_cap,
                m.masked_atomics,
                m.reply_order,
            );
            assert_eq!(row, e);
        }
    }

    #[test]
    fn caps_are_values_ib_core_knows() {
        for m in &MODELS {
            // What a driver reports must survive the trip through
            // enum ib_atomic_cap: never hca_reply_be.
            assert_ne!(m.atomic_cap, AtomicCap::HcaReplyBe, "{}", m.name);
            assert_ne!(m.masked_atomic_cap, AtomicCap::HcaReplyBe, "{}", m.name);
            // A model executes masked opcodes exactly when it advertises them.
            assert_eq!(
                m.masked_atomics,
                m.masked_atomic_cap != AtomicCap::None,
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn firmware_versions_are_packed_like_mlx4() {
        let [cx3, cib, cx4, cx4lx] = &MODELS;
        assert_eq!(cx3.fw_ver, 0x0002_002a_1388); // 2.42.5000
        assert_eq!(cib.fw_ver >> 32, 10);
        assert_eq!((cib.fw_ver >> 16) & 0xffff, 16);
        assert_eq!(cib.fw_ver & 0xffff, 1200);
        assert_eq!(cx4.fw_ver, (12 << 32) | (28 << 16) | 2006);
        assert_eq!(cx4lx.fw_ver, (14 << 32) | (32 << 16) | 1010);
    }

    /// mlx4_ib has no `set_vf_guid`; mlx5_ib (Connect-IB on) has.
    #[test]
    fn set_vf_guid_follows_the_driver() {
        let [cx3, cib, cx4, cx4lx] = &MODELS;
        assert!(!cx3.set_vf_guid);
        assert!(cib.set_vf_guid && cx4.set_vf_guid && cx4lx.set_vf_guid);
    }

    #[test]
    fn find_matches_exactly() {
        for m in &MODELS {
            assert_eq!(find(m.name.as_bytes()), Some(m));
        }
        for bad in [
            &b""[..],
            b"cx",
            b"CX3",
            b"cx3 ",
            b" cx3",
            b"cx3\n",
            b"cx33",
            b"connect-ib",
            b"ConnectX-3",
        ] {
            assert_eq!(find(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn limits() {
        assert_eq!(MAX_PORTS, 2);
        assert_eq!(MAX_NUM_VFS, 255);
    }
}
