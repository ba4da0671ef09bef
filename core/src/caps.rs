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
}
