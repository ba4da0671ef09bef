// SPDX-License-Identifier: GPL-2.0

//! The simulator's injected failures of object creation (debugfs
//! `fail_create`): skip `skip` creations, then fail the next `fail` ones.
//! Kept in one 64-bit word so that the kernel updates it atomically.

use super::control::decimal;

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
    /// Whether compare-and-swap and fetch-and-add are refused too (`all`),
    /// or only the masked opcodes (`masked`); nothing when `errno` is 0.
    pub all: bool,
    /// The errno returned: 0 (nothing refused), 22 or 95.
    pub errno: i32,
}

impl OpcodeRefusal {
    /// Packs into a word: the errno, and bit 8 for `all`.
    pub const fn pack(self) -> u32 {
        self.errno as u32 | if self.all { 1 << 8 } else { 0 }
    }

    /// The inverse of [`OpcodeRefusal::pack`].
    pub const fn unpack(word: u32) -> Self {
        Self {
            all: word & (1 << 8) != 0,
            errno: (word & 0xff) as i32,
        }
    }

    /// The errno `post_send` returns for an atomic work request, masked
    /// (`masked`) or standard, if it is refused.
    pub const fn refuses(self, masked: bool) -> Option<i32> {
        if self.errno != 0 && (masked || self.all) {
            Some(self.errno)
        } else {
            None
        }
    }

    /// Parses what is written: `none`, or `masked` or `all` then `EINVAL`
    /// or `EOPNOTSUPP`, one blank between, with an optional final newline.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        if text == b"none" {
            return Some(Self::default());
        }
        let mut fields = text.split(|&b| b == b' ');
        let all = match fields.next()? {
            b"masked" => false,
            b"all" => true,
            _ => return None,
        };
        let errno = match fields.next()? {
            b"EINVAL" => 22,
            b"EOPNOTSUPP" => 95,
            _ => return None,
        };
        if fields.next().is_some() {
            return None;
        }
        Some(Self { all, errno })
    }

    /// What reading the file shows: as written.
    pub fn text(self) -> &'static str {
        match (self.errno, self.all) {
            (22, false) => "masked EINVAL",
            (22, true) => "all EINVAL",
            (95, false) => "masked EOPNOTSUPP",
            (95, true) => "all EOPNOTSUPP",
            _ => "none",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn opcode_refusals() {
        use super::OpcodeRefusal;
        for text in [
            "none",
            "masked EINVAL",
            "all EINVAL",
            "masked EOPNOTSUPP",
            "all EOPNOTSUPP",
        ] {
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
        ] {
            assert_eq!(OpcodeRefusal::parse(bad.as_bytes()), None, "{bad:?}");
        }
        let m = OpcodeRefusal::parse(b"masked EOPNOTSUPP").unwrap();
        assert_eq!((m.refuses(true), m.refuses(false)), (Some(95), None));
        let a = OpcodeRefusal::parse(b"all EINVAL").unwrap();
        assert_eq!((a.refuses(true), a.refuses(false)), (Some(22), Some(22)));
        let n = OpcodeRefusal::default();
        assert_eq!((n.refuses(true), n.refuses(false)), (None, None));
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
