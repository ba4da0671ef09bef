// SPDX-License-Identifier: GPL-2.0

//! Prints the reference digest of the masked atomics self-test, as 16
//! lowercase hex digits, for the kernel self-test to compare against:
//!
//! `cargo run -q --release -p mlx-ext-core --example atomics_digest -- SEED COUNT`
//!
//! SEED is a `u64` and COUNT a `u32`, in decimal or with a `0x` prefix in hex.

use mlx_ext_core::atomics::selftest::digest_reference;
use std::process::ExitCode;

fn parse(arg: &str) -> Option<u64> {
    match arg.strip_prefix("0x").or_else(|| arg.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => arg.parse().ok(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [seed, count] => parse(seed).zip(parse(count).and_then(|c| u32::try_from(c).ok())),
        _ => None,
    };
    let Some((seed, count)) = parsed else {
        eprintln!("usage: atomics_digest SEED COUNT  (SEED: u64, COUNT: u32; decimal or 0x hex)");
        return ExitCode::from(2);
    };
    println!("{:016x}", digest_reference(seed, count));
    ExitCode::SUCCESS
}
