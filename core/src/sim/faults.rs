// SPDX-License-Identifier: GPL-2.0

//! The simulator's injected failures of object creation (debugfs
//! `fail_create`): skip `skip` creations, then fail the next `fail` ones.
//! Kept in one 64-bit word so that the kernel updates it atomically.

use super::text::decimal;
use crate::caps::WrClass;
use crate::errno::{EINVAL, EOPNOTSUPP};

/// Pending injected creation failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CreateFaults {
    /// Creations that still succeed before the failures start.
    pub skip: u32,
    /// Creations that fail after those.
    pub fail: u32,
}

impl CreateFaults {
    /// Packs the pair into one word (`skip` high, `fail` low).
    pub const fn pack(self) -> u64 {
        ((self.skip as u64) << 32) | self.fail as u64
    }

    /// Unpacks a word made by [`CreateFaults::pack`].
    pub const fn unpack(word: u64) -> Self {
        Self {
            skip: (word >> 32) as u32,
            fail: word as u32,
        }
    }

    /// One creation happens: returns the state after it, and whether it
    /// fails.
    pub const fn next(self) -> (Self, bool) {
        if self.skip > 0 {
            (
                Self {
                    skip: self.skip - 1,
                    fail: self.fail,
                },
                false,
            )
        } else if self.fail > 0 {
            (
                Self {
                    skip: 0,
                    fail: self.fail - 1,
                },
                true,
            )
        } else {
            (self, false)
        }
    }

    /// Parses what is written to `fail_create`: `N` or `N SKIP`, decimal,
    /// with an optional final newline.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let mut fields = text.split(|&b| b == b' ');
        let fail = decimal(fields.next()?)?;
        let skip = match fields.next() {
            Some(f) => decimal(f)?,
            None => 0,
        };
        if fields.next().is_some() {
            return None;
        }
        Some(Self { skip, fail })
    }
}

/// Atomic opcodes a simulated driver lacks (debugfs `refuse_opcodes`): its
/// `post_send` refuses them, every time, with the errno a real driver
/// uses: `EINVAL` (bnxt_re, rxe, hns, qedr, mthca, rdmavt...) or
/// `EOPNOTSUPP` (mlx5_ib, erdma). Packed in a word for an atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OpcodeRefusal {
    /// Which opcodes: nothing when `errno` is 0.
    pub scope: RefusedOpcodes,
    /// The errno returned: 0 (nothing refused), `EINVAL` or `EOPNOTSUPP`.
    pub errno: i32,
}

/// The opcodes an [`OpcodeRefusal`] refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum RefusedOpcodes {
    /// The two masked opcodes.
    #[default]
    Masked = 0,
    /// Fetch-and-add only.
    FetchAdd = 1,
    /// All four.
    All = 2,
}

impl OpcodeRefusal {
    /// Packs into a word: the errno, and the scope from bit 8.
    pub const fn pack(self) -> u32 {
        self.errno as u32 | (self.scope as u32) << 8
    }

    /// The inverse of [`OpcodeRefusal::pack`].
    pub const fn unpack(word: u32) -> Self {
        Self {
            scope: match word >> 8 {
                0 => RefusedOpcodes::Masked,
                1 => RefusedOpcodes::FetchAdd,
                _ => RefusedOpcodes::All,
            },
            errno: (word & 0xff) as i32,
        }
    }

    /// The errno `post_send` returns for an atomic work request of `class`,
    /// if it is refused.
    pub const fn refuses(self, class: WrClass) -> Option<i32> {
        let refused = match self.scope {
            RefusedOpcodes::Masked => matches!(class, WrClass::Masked),
            RefusedOpcodes::FetchAdd => matches!(class, WrClass::FetchAdd),
            RefusedOpcodes::All => true,
        };
        if self.errno != 0 && refused {
            Some(self.errno)
        } else {
            None
        }
    }

    /// Parses what is written: `none`, or `masked`, `fetch_add` or `all`
    /// then `EINVAL` or `EOPNOTSUPP`, one blank between, with an optional
    /// final newline.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        if text == b"none" {
            return Some(Self::default());
        }
        let mut fields = text.split(|&b| b == b' ');
        let scope = match fields.next()? {
            b"masked" => RefusedOpcodes::Masked,
            b"fetch_add" => RefusedOpcodes::FetchAdd,
            b"all" => RefusedOpcodes::All,
            _ => return None,
        };
        let errno = match fields.next()? {
            b"EINVAL" => EINVAL,
            b"EOPNOTSUPP" => EOPNOTSUPP,
            _ => return None,
        };
        if fields.next().is_some() {
            return None;
        }
        Some(Self { scope, errno })
    }

    /// What reading the file shows before the count: as written.
    pub fn text(self) -> &'static str {
        match (self.errno, self.scope) {
            (EINVAL, RefusedOpcodes::Masked) => "masked EINVAL",
            (EINVAL, RefusedOpcodes::FetchAdd) => "fetch_add EINVAL",
            (EINVAL, RefusedOpcodes::All) => "all EINVAL",
            (EOPNOTSUPP, RefusedOpcodes::Masked) => "masked EOPNOTSUPP",
            (EOPNOTSUPP, RefusedOpcodes::FetchAdd) => "fetch_add EOPNOTSUPP",
            (EOPNOTSUPP, RefusedOpcodes::All) => "all EOPNOTSUPP",
            _ => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn opcode_refusals() {
        use super::OpcodeRefusal;
        use crate::caps::WrClass::{CmpSwap, FetchAdd, Masked};
        let texts = [
            "none",
            "masked EINVAL",
            "fetch_add EINVAL",
            "all EINVAL",
            "masked EOPNOTSUPP",
            "fetch_add EOPNOTSUPP",
            "all EOPNOTSUPP",
        ];
        for text in texts {
            let r = OpcodeRefusal::parse(text.as_bytes()).unwrap();
            assert_eq!(r.text(), text);
            assert_eq!(OpcodeRefusal::unpack(r.pack()), r);
            let nl = [text.as_bytes(), b"\n"].concat();
            assert_eq!(OpcodeRefusal::parse(&nl), Some(r));
        }
        for bad in [
            "",
            "masked",
            "all ENOMEM",
            "masked einval",
            "masked  EINVAL",
            "all EINVAL x",
            "none\n\n",
            "22",
            "fa EINVAL",
        ] {
            assert_eq!(OpcodeRefusal::parse(bad.as_bytes()), None, "{bad:?}");
        }
        let by = |t: &str| {
            let r = OpcodeRefusal::parse(t.as_bytes()).unwrap();
            [CmpSwap, FetchAdd, Masked].map(|c| r.refuses(c))
        };
        assert_eq!(by("masked EOPNOTSUPP"), [None, None, Some(95)]);
        assert_eq!(by("fetch_add EINVAL"), [None, Some(22), None]);
        assert_eq!(by("all EINVAL"), [Some(22); 3]);
        assert_eq!(by("none"), [None; 3]);
    }

    use super::*;

    #[test]
    fn skips_then_fails_then_stops() {
        let mut f = CreateFaults { skip: 2, fail: 2 };
        let mut seen = [false; 6];
        for s in seen.iter_mut() {
            let (next, fails) = f.next();
            *s = fails;
            f = CreateFaults::unpack(next.pack());
        }
        assert_eq!(seen, [false, false, true, true, false, false]);
        assert_eq!(f, CreateFaults::default());
    }

    #[test]
    fn pack_round_trips() {
        for f in [
            CreateFaults { skip: 0, fail: 0 },
            CreateFaults {
                skip: u32::MAX,
                fail: 1,
            },
            CreateFaults {
                skip: 7,
                fail: u32::MAX,
            },
        ] {
            assert_eq!(CreateFaults::unpack(f.pack()), f);
        }
    }

    #[test]
    fn parse_accepts_count_and_skip() {
        assert_eq!(
            CreateFaults::parse(b"3\n"),
            Some(CreateFaults { skip: 0, fail: 3 })
        );
        assert_eq!(
            CreateFaults::parse(b"1 4"),
            Some(CreateFaults { skip: 4, fail: 1 })
        );
        for bad in [
            &b""[..],
            b"\n",
            b"x",
            b"-1",
            b"1 2 3",
            b"1  2",
            b"4294967296",
            b"1 x",
            b" 1",
        ] {
            assert_eq!(CreateFaults::parse(bad), None, "{:?}", bad);
        }
    }
}
