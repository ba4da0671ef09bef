// SPDX-License-Identifier: GPL-2.0

//! What an administrator writes to the simulator's bus files
//! (`Documentation/simulator.rst`):
//!
//! - `/sys/bus/mlx_ext_sim/new_device`: `ID MODEL [PORTS [NUM_VFS [GUIDS]]]` makes
//!   the ib_device `mlxsim<ID>`; NUM_VFS may instead be `pci:DDDD:BB:DD.F`, a
//!   PCI function bound to the simulator's PCI driver, which becomes the
//!   adapter's parent: its VFs are then the PCI core's;
//! - `/sys/bus/mlx_ext_sim/del_device`: `ID` removes it.
//!
//! The text is ASCII. Fields are separated by one or more spaces or tabs;
//! blanks before the first and after the last field are allowed, and so is one
//! newline as the very last byte (what `echo` writes). Numbers are decimal
//! digits only: no sign, no `0x`, no separators. Everything else is refused
//! with `EINVAL`, before anything is created or removed.

use super::model::{self, Model, MAX_NUM_VFS, MAX_PORTS};
use super::text::{fields, parse_u32, NumError, TextError};
use crate::errno::EINVAL;

/// The largest device ID. Each device's ports get LIDs of their own on the
/// simulated fabric, `2 + ID * MAX_PORTS + port - 1`, which must stay
/// unicast LIDs (below `0xc000`); four digits keep the names short.
pub const MAX_ID: u32 = 9999;

/// A request to create a simulated device, as parsed from `new_device`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewDevice {
    /// The device number: the ib_device is named `mlxsim<ID>`.
    pub id: u32,
    /// The adapter model to present.
    pub model: &'static Model,
    /// The number of InfiniBand ports, 1 to [`MAX_PORTS`] (default 1).
    pub ports: u8,
    /// The number of SR-IOV VFs, 0 to [`MAX_NUM_VFS`] (default 0; 0 with
    /// a PCI parent, whose VFs the PCI core makes).
    pub num_vfs: u16,
    /// The PCI function to take as the adapter's parent, instead of a
    /// device of the simulator's own bus.
    pub pci: Option<PciAddr>,
    /// The GID table length of each port, 1 to [`MAX_PORT_GUIDS`] (default
    /// the model's [`Model::port_guids`]).
    pub port_guids: u16,
}

/// A PCI function's address as the kernel names it (`pci_name()`,
/// `drivers/pci/probe.c` `pci_setup_device`: `%04x:%02x:%02x.%d`, the hex
/// digits lower case): `DDDD:BB:DD.F`, the domain 4 to 8 hex digits (more
/// than 4 on hosts with domains past `0xffff`: VMD, Hyper-V).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciAddr {
    bytes: [u8; PciAddr::MAX_LEN],
    len: usize,
}

impl PciAddr {
    /// The longest name: an 8-digit domain.
    pub const MAX_LEN: usize = 16;

    /// Parses `DDDD:BB:DD.F`: 4 to 8, 2 and 2 hex digits (either case,
    /// kept as the kernel writes them, lower case; a domain past 4 digits
    /// has no leading zero, as `%04x` writes it), a device below `0x20`
    /// and a function below 8.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let domain = text.iter().position(|&b| b == b':')?;
        if !(4..=8).contains(&domain) || text.len() != domain + 8 {
            return None;
        }
        if domain > 4 && text.first() == Some(&b'0') {
            return None;
        }
        let mut bytes = [0u8; Self::MAX_LEN];
        for (i, (&b, o)) in text.iter().zip(bytes.iter_mut()).enumerate() {
            *o = match i.checked_sub(domain) {
                Some(0) | Some(3) => (b == b':').then_some(b)?,
                Some(6) => (b == b'.').then_some(b)?,
                Some(7) => (b'0'..=b'7').contains(&b).then_some(b)?,
                _ => b.is_ascii_hexdigit().then_some(b.to_ascii_lowercase())?,
            };
        }
        // The device number: 5 bits of the devfn.
        let dev = hex(bytes[domain + 4])? * 16 + hex(bytes[domain + 5])?;
        (dev < 0x20).then_some(Self {
            bytes,
            len: text.len(),
        })
    }

    /// The name.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

/// The value of a lower-case hex digit.
fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// The largest GUIDS: the simulated SA keeps at most 128 entries a port.
pub const MAX_PORT_GUIDS: u16 = super::model::PORT_GUIDS as u16;

/// A numeric field of a control line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The device number.
    Id,
    /// The number of ports.
    Ports,
    /// The number of VFs.
    NumVfs,
    /// The GID table length of the ports.
    Guids,
}

/// Why a control line was refused. Every variant is `EINVAL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlError {
    /// Nothing but blanks (and the final newline) was written.
    Empty,
    /// A byte that is not printable ASCII, a space or a tab: a NUL, a
    /// carriage return, another control character or a non-ASCII byte.
    NotText,
    /// A newline somewhere other than as the very last byte.
    EmbeddedNewline,
    /// A numeric field holds something other than decimal digits.
    NotANumber {
        /// The field that was not a number.
        field: Field,
    },
    /// The ID is larger than [`MAX_ID`].
    IdOutOfRange,
    /// `new_device` got an ID and no model.
    MissingModel,
    /// The model is not one of [`model::MODELS`].
    UnknownModel,
    /// PORTS is a number outside 1 to [`MAX_PORTS`].
    BadPorts,
    /// NUM_VFS is a number above [`MAX_NUM_VFS`].
    TooManyVfs,
    /// NUM_VFS starts with `pci:` and the rest is not `DDDD:BB:DD.F`.
    BadPciAddress,
    /// GUIDS is a number outside 1 to [`MAX_PORT_GUIDS`].
    BadGuids,
    /// More fields than the file takes.
    TrailingInput,
}

impl ControlError {
    /// Returns the Linux errno of the error, positive (`EINVAL` = 22 for
    /// every variant): the sysfs `store` returns its negation.
    pub const fn errno(&self) -> i32 {
        EINVAL
    }

    /// Returns a short message for the kernel log, saying what was wrong.
    pub const fn message(&self) -> &'static str {
        match self {
            Self::Empty => {
                "nothing written: expected \"ID MODEL [PORTS [NUM_VFS [GUIDS]]]\" or \"ID\""
            }
            Self::NotText => "only printable ASCII, spaces and tabs are allowed",
            Self::EmbeddedNewline => "a newline is allowed only as the last character",
            Self::NotANumber { field: Field::Id } => "ID must be decimal digits only",
            Self::NotANumber {
                field: Field::Ports,
            } => "PORTS must be decimal digits only",
            Self::NotANumber {
                field: Field::NumVfs,
            } => "NUM_VFS must be decimal digits only",
            Self::NotANumber {
                field: Field::Guids,
            } => "GUIDS must be decimal digits only",
            Self::IdOutOfRange => "ID must be at most 9999",
            Self::MissingModel => "MODEL missing: expected \"ID MODEL [PORTS [NUM_VFS [GUIDS]]]\"",
            Self::UnknownModel => "unknown MODEL: expected cx3, connectib, cx4 or cx4lx",
            Self::BadPorts => "PORTS must be 1 or 2",
            Self::TooManyVfs => "NUM_VFS must be 0 to 255",
            Self::BadPciAddress => {
                "a PCI parent is written pci:DDDD:BB:DD.F (as in /sys/bus/pci/devices)"
            }
            Self::BadGuids => "GUIDS must be 1 to 128",
            Self::TrailingInput => "too many fields",
        }
    }
}

impl From<TextError> for ControlError {
    fn from(e: TextError) -> Self {
        match e {
            TextError::NotText => Self::NotText,
            TextError::EmbeddedNewline => Self::EmbeddedNewline,
        }
    }
}

/// Parses the ID field.
fn parse_id(field: &[u8]) -> Result<u32, ControlError> {
    match parse_u32(field) {
        Ok(id) if id <= MAX_ID => Ok(id),
        Ok(_) | Err(NumError::TooLarge) => Err(ControlError::IdOutOfRange),
        Err(NumError::NotANumber) => Err(ControlError::NotANumber { field: Field::Id }),
    }
}

/// Parses a count that must lie in `min..=max`; a number too large for `u32`
/// is out of range too, not a different error.
fn parse_count(field: &[u8], which: Field, min: u32, max: u32) -> Result<u32, ControlError> {
    let range = match which {
        Field::Ports => ControlError::BadPorts,
        Field::Guids => ControlError::BadGuids,
        Field::Id | Field::NumVfs => ControlError::TooManyVfs,
    };
    match parse_u32(field) {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        Ok(_) | Err(NumError::TooLarge) => Err(range),
        Err(NumError::NotANumber) => Err(ControlError::NotANumber { field: which }),
    }
}

/// Parses what was written to `new_device`: `ID MODEL [PORTS [NUM_VFS
/// [GUIDS]]]`.
pub fn parse_new_device(text: &[u8]) -> Result<NewDevice, ControlError> {
    let mut fields = fields(text)?;
    let id = parse_id(fields.next().ok_or(ControlError::Empty)?)?;
    let name = fields.next().ok_or(ControlError::MissingModel)?;
    let model = model::find(name).ok_or(ControlError::UnknownModel)?;
    let ports = match fields.next() {
        None => 1,
        Some(f) => {
            let n = parse_count(f, Field::Ports, 1, u32::from(MAX_PORTS))?;
            u8::try_from(n).map_err(|_| ControlError::BadPorts)?
        }
    };
    let (num_vfs, pci) = match fields.next() {
        None => (0, None),
        Some(f) => match f.strip_prefix(b"pci:") {
            Some(addr) => (
                0,
                Some(PciAddr::parse(addr).ok_or(ControlError::BadPciAddress)?),
            ),
            None => {
                let n = parse_count(f, Field::NumVfs, 0, u32::from(MAX_NUM_VFS))?;
                (
                    u16::try_from(n).map_err(|_| ControlError::TooManyVfs)?,
                    None,
                )
            }
        },
    };
    let port_guids = match fields.next() {
        None => model.port_guids,
        Some(f) => {
            let n = parse_count(f, Field::Guids, 1, u32::from(MAX_PORT_GUIDS))?;
            u16::try_from(n).map_err(|_| ControlError::BadGuids)?
        }
    };
    if fields.next().is_some() {
        return Err(ControlError::TrailingInput);
    }
    Ok(NewDevice {
        id,
        model,
        ports,
        num_vfs,
        pci,
        port_guids,
    })
}

/// Parses what was written to `del_device`: `ID`.
pub fn parse_del_device(text: &[u8]) -> Result<u32, ControlError> {
    let mut fields = fields(text)?;
    let id = parse_id(fields.next().ok_or(ControlError::Empty)?)?;
    if fields.next().is_some() {
        return Err(ControlError::TrailingInput);
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::super::model::MODELS;
    use super::{parse_del_device, parse_new_device, ControlError, Field, NewDevice};

    fn dev(id: u32, model: usize, ports: u8, num_vfs: u16) -> NewDevice {
        NewDevice {
            id,
            model: &MODELS[model],
            ports,
            num_vfs,
            pci: None,
            port_guids: 128,
        }
    }

    fn guids(port_guids: u16, d: NewDevice) -> NewDevice {
        NewDevice { port_guids, ..d }
    }

    #[test]
    fn good_new_device_lines() {
        let cases: &[(&[u8], NewDevice)] = &[
            (b"0 cx3", dev(0, 0, 1, 0)),
            (b"0 cx3\n", dev(0, 0, 1, 0)),
            (b"1 connectib\n", dev(1, 1, 1, 0)),
            (b"2 cx4 2\n", dev(2, 2, 2, 0)),
            (b"3 cx3 1 0\n", dev(3, 0, 1, 0)),
            (b"4 cx3 2 126\n", dev(4, 0, 2, 126)),
            (b"5 connectib 1 127", dev(5, 1, 1, 127)),
            (b"6 cx4 2 255\n", dev(6, 2, 2, 255)),
            (b"  7\t\tcx3 \t 2   5  \n", dev(7, 0, 2, 5)),
            (b"\t8 cx4\t", dev(8, 2, 1, 0)),
            (b"007 cx3 02 0010", dev(7, 0, 2, 10)),
            (b"9999 cx3", dev(9999, 0, 1, 0)),
            (b"00000000000000000000042 cx4", dev(42, 2, 1, 0)),
            (b"10 cx3 1 5 16\n", guids(16, dev(10, 0, 1, 5))),
            (b"11 cx3 2 0 1", guids(1, dev(11, 0, 2, 0))),
            (b"12 cx4 1 3 128", dev(12, 2, 1, 3)),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_new_device(text),
                Ok(*want),
                "{:?}",
                core::str::from_utf8(text)
            );
        }
    }

    #[test]
    fn a_pci_parent_instead_of_num_vfs() {
        let d = parse_new_device(b"40 cx3 1 pci:0000:00:05.0\n").unwrap();
        assert_eq!(d.num_vfs, 0);
        assert_eq!(
            d.pci.map(|a| a.as_bytes().to_vec()),
            Some(b"0000:00:05.0".to_vec())
        );
        // Hex in either case, kept as the kernel writes names: lower case.
        let d = parse_new_device(b"41 cx4 2 pci:00AB:1f:1F.7 16").unwrap();
        assert_eq!(d.pci.unwrap().as_bytes(), b"00ab:1f:1f.7");
        assert_eq!((d.ports, d.port_guids), (2, 16));
        let d = parse_new_device(b"42 cx3 1 pci:10000:00:05.0").unwrap();
        assert_eq!(d.pci.unwrap().as_bytes(), b"10000:00:05.0");
        let d = parse_new_device(b"43 cx3 1 pci:ffffffff:ff:1f.0").unwrap();
        assert_eq!(d.pci.unwrap().as_bytes(), b"ffffffff:ff:1f.0");
        for bad in [
            &b"1 cx3 1 pci:000:00:05.0"[..],
            b"1 cx3 1 pci:100000000:00:05.0",
            b"1 cx3 1 pci:00000:00:05.0",
            &b"1 cx3 1 pci:"[..],
            b"1 cx3 1 pci:0000:00:05",
            b"1 cx3 1 pci:00:05.0",
            b"1 cx3 1 pci:0000:00:05.8",
            b"1 cx3 1 pci:0000:00:20.0",
            b"1 cx3 1 pci:0000-00:05.0",
            b"1 cx3 1 pci:0000:00:05:0",
            b"1 cx3 1 pci:0000:0g:05.0",
            b"1 cx3 1 pci:0000:00:05.00",
            b"1 cx3 1 pci:+000:00:05.0",
            b"1 cx3 1 PCI:0000:00:05.0",
        ] {
            let want = if bad.starts_with(b"1 cx3 1 pci:") {
                ControlError::BadPciAddress
            } else {
                ControlError::NotANumber {
                    field: Field::NumVfs,
                }
            };
            assert_eq!(parse_new_device(bad), Err(want), "{bad:?}");
        }
        assert_eq!(
            parse_new_device(b"1 cx3 1 pci:0000:00:05.0 16 1"),
            Err(ControlError::TrailingInput)
        );
    }

    #[test]
    fn defaults_are_one_port_no_vfs() {
        let d = parse_new_device(b"9 cx3\n").unwrap();
        assert_eq!((d.ports, d.num_vfs), (1, 0));
        assert_eq!(d.model.name, "cx3");
    }

    #[test]
    fn malformed_new_device_lines() {
        use ControlError::*;
        let id = NotANumber { field: Field::Id };
        let ports = NotANumber {
            field: Field::Ports,
        };
        let vfs = NotANumber {
            field: Field::NumVfs,
        };
        let nguids = NotANumber {
            field: Field::Guids,
        };
        let cases: &[(&[u8], ControlError)] = &[
            (b"", Empty),
            (b"\n", Empty),
            (b"   ", Empty),
            (b" \t \n", Empty),
            (b"1", MissingModel),
            (b"1\n", MissingModel),
            (b"1 \t\n", MissingModel),
            (b"1 cx5", UnknownModel),
            (b"1 CX3", UnknownModel),
            (b"1 cx", UnknownModel),
            (b"1 2", UnknownModel),
            (b"cx3 1", id),
            (b"-1 cx3", id),
            (b"+1 cx3", id),
            (b"0x1 cx3", id),
            (b"1a cx3", id),
            (b"1_000 cx3", id),
            (b"1,0 cx3", id),
            (b"4294967296 cx3", IdOutOfRange),
            (b"10000 cx3", IdOutOfRange),
            (b"99999999999999999999999 cx3", IdOutOfRange),
            (b"1 cx3 0", BadPorts),
            (b"1 cx3 3", BadPorts),
            (b"1 cx3 256", BadPorts),
            (b"1 cx3 99999999999999999999", BadPorts),
            (b"1 cx3 -1", ports),
            (b"1 cx3 two", ports),
            (b"1 cx3 0x2", ports),
            (b"1 cx3 1 256", TooManyVfs),
            (b"1 cx3 1 65536", TooManyVfs),
            (b"1 cx3 1 4294967296", TooManyVfs),
            (b"1 cx3 1 -0", vfs),
            (b"1 cx3 1 1e2", vfs),
            (b"1 cx3 1 0 0", BadGuids),
            (b"1 cx3 1 0 129", BadGuids),
            (b"1 cx3 1 0 4294967296", BadGuids),
            (b"1 cx3 1 0 x\n", nguids),
            (b"1 cx3 1 0 -8", nguids),
            (b"1 cx3 1 0 16 0", TrailingInput),
            (b"1 cx3 1 0 16 x\n", TrailingInput),
            (b"1 cx3\n\n", EmbeddedNewline),
            (b"1\ncx3", EmbeddedNewline),
            (b"1 cx3\n ", EmbeddedNewline),
            (b"\n1 cx3", EmbeddedNewline),
            (b"1 cx3\0", NotText),
            (b"1\0 cx3", NotText),
            (b"1 cx3\r\n", NotText),
            (b"1 cx3 \x0b", NotText),
            (b"1 cx3 \x7f", NotText),
            (b"1 c\xc3\xa9", NotText),
            (b"1 cx3 \xff\n", NotText),
            (b"\xef\xbb\xbf1 cx3", NotText),
        ];
        for (text, want) in cases {
            let got = parse_new_device(text);
            assert_eq!(got, Err(*want), "{text:?}");
            assert_eq!(want.errno(), 22);
        }
        // Every input above is distinct, and there are at least 30.
        for (i, (a, _)) in cases.iter().enumerate() {
            assert!(cases[..i].iter().all(|(b, _)| a != b), "{a:?} twice");
        }
        assert!(cases.len() >= 30);
    }

    #[test]
    fn bytes_are_checked_before_fields() {
        // Extra fields or a bad model do not hide a bad byte further on.
        assert_eq!(
            parse_new_device(b"x y z w v \0"),
            Err(ControlError::NotText)
        );
        assert_eq!(
            parse_new_device(b"1 nope\n\n"),
            Err(ControlError::EmbeddedNewline)
        );
    }

    #[test]
    fn good_del_device_lines() {
        let cases: &[(&[u8], u32)] = &[
            (b"0", 0),
            (b"0\n", 0),
            (b"17\n", 17),
            (b"  17 \t\n", 17),
            (b"\t0017", 17),
            (b"9999\n", 9999),
        ];
        for (text, want) in cases {
            assert_eq!(parse_del_device(text), Ok(*want), "{text:?}");
        }
    }

    #[test]
    fn malformed_del_device_lines() {
        use ControlError::*;
        let id = NotANumber { field: Field::Id };
        let cases: &[(&[u8], ControlError)] = &[
            (b"", Empty),
            (b"\n", Empty),
            (b" \t ", Empty),
            (b"1 2", TrailingInput),
            (b"1 cx3\n", TrailingInput),
            (b"mlxsim1", id),
            (b"-1", id),
            (b"0x10", id),
            (b"4294967296\n", IdOutOfRange),
            (b"10000\n", IdOutOfRange),
            (b"1\n\n", EmbeddedNewline),
            (b"1\0", NotText),
            (b"1\r\n", NotText),
        ];
        for (text, want) in cases {
            assert_eq!(parse_del_device(text), Err(*want), "{text:?}");
        }
    }

    #[test]
    fn every_error_is_einval_with_a_message() {
        use ControlError::*;
        let all = [
            Empty,
            NotText,
            EmbeddedNewline,
            NotANumber { field: Field::Id },
            NotANumber {
                field: Field::Ports,
            },
            NotANumber {
                field: Field::NumVfs,
            },
            IdOutOfRange,
            MissingModel,
            UnknownModel,
            BadPorts,
            TooManyVfs,
            TrailingInput,
        ];
        for (i, e) in all.iter().enumerate() {
            assert_eq!(e.errno(), 22);
            assert!(!e.message().is_empty());
            // Distinct errors say distinct things.
            assert!(all[..i].iter().all(|o| o.message() != e.message()));
        }
        assert_eq!(BadPorts.message(), "PORTS must be 1 or 2");
    }

    #[test]
    fn messages_name_the_limits_and_models() {
        use super::super::model::{MAX_NUM_VFS, MAX_PORTS};
        // The messages hard-code the limits and model names: keep them true.
        assert_eq!(MAX_PORTS, 2);
        assert_eq!(MAX_NUM_VFS, 255);
        let unknown = ControlError::UnknownModel.message();
        for m in &MODELS {
            assert!(unknown.contains(m.name), "{}", m.name);
        }
    }
}
