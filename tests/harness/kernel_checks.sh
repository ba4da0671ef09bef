#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of scripts/kernel-checks.sh, which `make modules KDIR=...` runs
# before it compiles: a fake kernel tree that has everything passes, and a
# tree lacking each thing in turn (CONFIG_RUST, CONFIG_INFINIBAND, the Rust
# build products, the rustc and bindgen it was built with, rust-src) is
# refused with one line naming it. Fake rustc and bindgen scripts stand in
# for the toolchain. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=$MLX_EXT_ROOT/scripts/kernel-checks.sh

# A fake toolchain: rustc VERSION with a sysroot that has rust-src, and
# bindgen VERSION.
fake_tools() {
	mkdir -p "$tmp/bin" "$tmp/sysroot/lib/rustlib/src/rust/library/core/src"
	touch "$tmp/sysroot/lib/rustlib/src/rust/library/core/src/lib.rs"
	cat >"$tmp/bin/rustc" <<EOF
#!/bin/sh
case "\$1" in
--version) echo "rustc 1.96.0 (ac68faa20 2026-05-25)" ;;
--print) echo "$tmp/sysroot" ;;
esac
EOF
	printf '#!/bin/sh\necho "bindgen 0.73.2"\n' >"$tmp/bin/bindgen"
	chmod +x "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

# A fake kernel tree with everything mlx_ext needs.
fake_tree() {
	rm -rf "$tmp/k"
	mkdir -p "$tmp/k/rust"
	touch "$tmp/k/Makefile" "$tmp/k/rust/libkernel.rmeta" "$tmp/k/rust/libmacros.so"
	cat >"$tmp/k/.config" <<'EOF'
CONFIG_RUST=y
CONFIG_INFINIBAND=m
CONFIG_RUSTC_VERSION_TEXT="rustc 1.96.0 (ac68faa20 2026-05-25)"
CONFIG_BINDGEN_VERSION_TEXT="bindgen 0.73.2"
EOF
}

# run: the checks on the fake tree with the fake tools; their stderr.
run() {
	RUSTC=$tmp/bin/rustc BINDGEN=$tmp/bin/bindgen "$checks" "$tmp/k" 2>&1
}

# refused WHAT PATTERN: the checks fail with one line matching PATTERN.
refused() {
	out=$(run)
	rc=$?
	[ $rc != 0 ] || { echo "$1: accepted"; return 1; }
	expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "$1: lines" || { echo "$out"; return 1; }
	printf '%s\n' "$out" | grep -qE "$2" || { echo "$1: '$out' does not say /$2/"; return 1; }
	echo "$1: $out"
}

test_complete_tree_passes() {
	fake_tools
	fake_tree
	out=$(run) || { echo "refused: $out"; return 1; }
	expect_eq "$out" "" "output"
}

test_no_tree() {
	fake_tools
	rm -rf "$tmp/k"
	refused "no directory" "no such directory"
}

test_unconfigured_tree() {
	fake_tools
	fake_tree
	rm "$tmp/k/.config"
	refused "no .config" "not a configured kernel build tree"
}

test_no_config_rust() {
	fake_tools
	fake_tree
	sed -i 's/^CONFIG_RUST=y/# CONFIG_RUST is not set/' "$tmp/k/.config"
	refused "no CONFIG_RUST" "without CONFIG_RUST"
}

test_no_config_infiniband() {
	fake_tools
	fake_tree
	sed -i '/^CONFIG_INFINIBAND=/d' "$tmp/k/.config"
	refused "no CONFIG_INFINIBAND" "without CONFIG_INFINIBAND"
}

test_no_rust_artifacts() {
	fake_tools
	fake_tree
	rm "$tmp/k/rust/libkernel.rmeta"
	refused "headers-only tree" "no rust/libkernel.rmeta.*install-extmod-build"
}

test_other_rustc() {
	fake_tools
	fake_tree
	sed -i 's/1.96.0 (ac68faa20/1.95.0 (59807616e/' "$tmp/k/.config"
	refused "another rustc" "rustc is 'rustc 1.96.0.*built with 'rustc 1.95.0"
}

test_other_bindgen() {
	fake_tools
	fake_tree
	sed -i 's/bindgen 0.73.2/bindgen 0.65.1/' "$tmp/k/.config"
	refused "another bindgen" "bindgen is 'bindgen 0.73.2'.*'bindgen 0.65.1'"
}

test_no_rust_src() {
	fake_tools
	fake_tree
	rm -rf "$tmp/sysroot/lib/rustlib/src"
	refused "no rust-src" "has no rust-src"
}

ktap_run test_complete_tree_passes test_no_tree test_unconfigured_tree test_no_config_rust \
	test_no_config_infiniband test_no_rust_artifacts test_other_rustc test_other_bindgen \
	test_no_rust_src
