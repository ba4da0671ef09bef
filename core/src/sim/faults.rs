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

#[cfg(test)]
mod tests {
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
