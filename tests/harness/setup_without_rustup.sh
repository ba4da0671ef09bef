#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup.sh on a machine without rustup: with ~/.cargo/bin taken off
# PATH, Debian's cargo-web provides cargo, and setup still succeeds and finds
# everything (the pinned bindgen-cli it installed stays in ~/.cargo/bin,
# named by its path). Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

no_rustup_path() {
	printf '%s' "$PATH" | tr ':' '\n' | grep -v '/\.cargo/bin$' | paste -sd:
}

test_setup_without_rustup() {
	p=$(no_rustup_path)
	expect_eq "$(PATH=$p command -v cargo)" /usr/bin/cargo "cargo without rustup" || return 1
	log=$(PATH=$p "$MLX_EXT_ROOT/scripts/setup.sh" 2>&1)
	rc=$?
	echo "$log" | tail -n 5
	expect_eq "$rc" 0 "setup.sh exit status" || return 1
	echo "$log" | grep -q "setup complete"
}

test_check_tools_without_rustup() {
	p=$(no_rustup_path)
	# What make check runs with cargo: test, fmt and clippy all come from Debian.
	for sub in "" fmt clippy; do
		PATH=$p cargo $sub --version >/dev/null 2>&1 || { echo "cargo $sub missing without rustup"; return 1; }
	done
}

ktap_run test_setup_without_rustup test_check_tools_without_rustup
