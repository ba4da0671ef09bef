// SPDX-License-Identifier: GPL-2.0

//! The tokens of what an administrator writes to the simulator's control
//! files (`new_device`, `del_device`, the debugfs knobs): a line of
//! printable ASCII split at blanks, and decimal numbers written with digits
//! only. [`super::control`], [`super::sa`] and [`super::faults`] parse
//! their lines with these.

/// Why the bytes of a line are not text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextError {
    /// A byte that is not printable ASCII, a space or a tab: a NUL, a
    /// carriage return, another control character or a non-ASCII byte.
    NotText,
    /// A newline somewhere other than as the very last byte.
    EmbeddedNewline,
}

/// Checks the bytes of a control line and returns its fields.
pub fn fields(text: &[u8]) -> Result<impl Iterator<Item = &[u8]>, TextError> {
    let text = match text.split_last() {
        Some((b'\n', rest)) => rest,
        _ => text,
    };
    for &b in text {
        match b {
            b'\n' => return Err(TextError::EmbeddedNewline),
            b'\t' | b' '..=b'~' => {}
            _ => return Err(TextError::NotText),
        }
    }
    Ok(text
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|f| !f.is_empty()))
}

/// A number field that did not parse.
pub enum NumError {
    /// Something other than decimal digits.
    NotANumber,
    /// Decimal digits, but more than `u32::MAX`.
    TooLarge,
}

/// Parses a non-empty field of decimal digits.
pub fn parse_u32(field: &[u8]) -> Result<u32, NumError> {
    if field.is_empty() || !field.iter().all(u8::is_ascii_digit) {
        return Err(NumError::NotANumber);
    }
    field.iter().try_fold(0u32, |acc, &d| {
        acc.checked_mul(10)
            .and_then(|acc| acc.checked_add(u32::from(d - b'0')))
            .ok_or(NumError::TooLarge)
    })
}

/// A decimal `u32` made of digits only (no sign, no blanks), as every
/// number the simulator takes is written; `None` otherwise or on overflow.
pub fn decimal(field: &[u8]) -> Option<u32> {
    parse_u32(field).ok()
}

/// [`decimal`] of a whole write, as `echo N` makes it: one final newline
/// allowed.
pub fn decimal_line(text: &[u8]) -> Option<u32> {
    decimal(text.strip_suffix(b"\n").unwrap_or(text))
}
