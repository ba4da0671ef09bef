#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of scripts/kernel-checks.sh, which `make modules KDIR=...` runs
# before it compiles: a fake kernel tree that has everything passes and
# names the rustc and bindgen to use, found under their plain or versioned
# names; a tree or host lacking each thing in turn is refused with one
# line naming it (no CONFIG_RUST, no CONFIG_INFINIBAND, Debian's headers
# without Rust build products, Ubuntu's rust link to a lib-rust package not
# installed, no target.json, another rustc, an old bindgen or libclang, an
# MLNX_OFED RDMA core); what an out-of-tree build does not read (rust-src,
# the kernel's exact bindgen) is not asked for; a tree that makes modules'
# BTF without pahole or resolve_btfids to make it. Fake rustc and bindgen
# scripts, first on PATH, stand in for the toolchain; the versions are
# ones no host has. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=$MLX_EXT_ROOT/scripts/kernel-checks.sh
rustc_text="rustc 1.42.7 (a1b2c3d4e 2020-01-01)"
export PATH=$tmp/bin:$PATH
unset RUSTC BINDGEN

# fake_rustc NAME VERSION_TEXT: a rustc called NAME in the fake bin dir,
# whose sysroot (--print sysroot) has no rust-src.
fake_rustc() {
	mkdir -p "$tmp/sysroot"
	cat >"$tmp/bin/$1" <<EOS
#!/bin/sh
[ "\$1" = --version ] && echo "$2"
[ "\$1" = --print ] && echo "$tmp/sysroot"
exit 0
EOS
	chmod +x "$tmp/bin/$1"
}
# fake_bindgen NAME VERSION LIBCLANG: a bindgen whose libclang is LIBCLANG
# (none: it cannot load one), as the kernel's header makes it say.
fake_bindgen() {
	cat >"$tmp/bin/$1" <<EOS
#!/bin/sh
[ "\$1" = --version ] && { echo "bindgen $2"; exit 0; }
[ "$3" = none ] && { echo "error: Unable to find libclang" >&2; exit 1; }
echo "\$1:8:9: warning: clang version $3 (fake) [-W#pragma-messages]" >&2
EOS
	chmod +x "$tmp/bin/$1"
}
fake_tools() {
	rm -rf "$tmp/bin"
	mkdir -p "$tmp/bin"
	fake_rustc rustc "$rustc_text"
	fake_bindgen bindgen 0.71.1 19.1.7
}

# A fake kernel tree with everything mlx_ext needs, and an empty host root.
fake_tree() {
	rm -rf "$tmp/k" "$tmp/root"
	mkdir -p "$tmp/k/rust" "$tmp/k/include/config" "$tmp/k/include/generated" "$tmp/k/scripts" \
		"$tmp/root/lib/modules/7.0.0-15-generic/kernel/drivers/infiniband/core"
	touch "$tmp/k/Makefile" "$tmp/k/rust/libkernel.rmeta" "$tmp/k/rust/libmacros.so" \
		"$tmp/k/include/generated/rustc_cfg" "$tmp/k/scripts/target.json" \
		"$tmp/root/lib/modules/7.0.0-15-generic/kernel/drivers/infiniband/core/ib_core.ko.zst"
	echo 7.0.0-15-generic >"$tmp/k/include/config/kernel.release"
	cat >"$tmp/k/.config" <<EOS
CONFIG_RUST=y
CONFIG_INFINIBAND=m
CONFIG_RUSTC_VERSION_TEXT="$rustc_text"
CONFIG_BINDGEN_VERSION_TEXT="bindgen 0.72.0"
EOS
}

# run: the checks on the fake tree and host root; stdout and stderr.
run() {
	MLX_EXT_SYSROOT=$tmp/root "$checks" "$tmp/k" 2>&1
}

# refused WHAT PATTERN: the checks fail with one line matching PATTERN.
refused() {
	out=$(run)
	rc=$?
	[ $rc != 0 ] || { echo "$1: accepted: $out"; return 1; }
	expect_eq "$(printf '%s\n' "$out" | wc -l)" 1 "$1: lines" || { echo "$out"; return 1; }
	printf '%s\n' "$out" | grep -qE "$2" || { echo "$1: '$out' does not say /$2/"; return 1; }
	echo "$1: $out"
}

# chooses RUSTC BINDGEN: the checks pass and name these.
chooses() {
	out=$(run) || { echo "refused: $out"; return 1; }
	expect_eq "$out" "RUSTC=$1
BINDGEN=$2
RUST_LIB=${3:-$tmp/k/rust}" "output"
}

test_complete_tree_passes() {
	fake_tools
	fake_tree
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

# Ubuntu: the default rustc is another one; the kernel's is rustc-X.Y.
test_versioned_rustc_found() {
	fake_tools
	fake_tree
	fake_rustc rustc "rustc 1.41.0 (0123456ab 2019-12-01)"
	fake_rustc rustc-1.42 "$rustc_text"
	chooses "$tmp/bin/rustc-1.42" "$tmp/bin/bindgen"
}

# The kernel's bindgen is not asked for: a newer one builds the bindings.
test_other_bindgen_accepted() {
	fake_tools
	fake_tree
	fake_bindgen bindgen 0.73.2 22.1.0
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

# Nor rust-src: the module's rustc runs with --sysroot=/dev/null (the fake
# rustc's sysroot has no lib/rustlib/src).
test_no_rust_src_accepted() {
	fake_tools
	fake_tree
	[ -d "$("$tmp/bin/rustc" --print sysroot)" ] && [ ! -e "$tmp/sysroot/lib" ] || return 1
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

# A bindgen too old first on PATH, a recent one under its versioned name:
# the recent one.
test_versioned_bindgen_found() {
	fake_tools
	fake_tree
	fake_bindgen bindgen 0.66.1 19.1.7
	fake_bindgen bindgen-0.72 0.72.0 19.1.7
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen-0.72"
}

# RUSTC and BINDGEN, when set, are what is used.
test_given_tools_used() {
	fake_tools
	fake_tree
	fake_rustc my-rustc "$rustc_text"
	fake_bindgen my-bindgen 0.73.2 22.1.0
	out=$(RUSTC=$tmp/bin/my-rustc BINDGEN=$tmp/bin/my-bindgen run) || { echo "refused: $out"; return 1; }
	expect_eq "$(echo "$out" | head -n2)" "RUSTC=$tmp/bin/my-rustc
BINDGEN=$tmp/bin/my-bindgen" "output"
}

# make modules_install compiles nothing: without any toolchain, the tree
# and host are checked, and nothing is printed.
test_no_tools_checks_tree_only() {
	fake_tools
	fake_tree
	rm "$tmp/bin/rustc" "$tmp/bin/bindgen"
	out=$(MLX_EXT_SYSROOT=$tmp/root "$checks" --no-tools "$tmp/k" 2>&1) || { echo "refused: $out"; return 1; }
	expect_eq "$out" "" "output" || return 1
	rm -r "$tmp/k/rust"
	out=$(MLX_EXT_SYSROOT=$tmp/root "$checks" --no-tools "$tmp/k" 2>&1) && { echo "accepted a tree without Rust"; return 1; }
	echo "$out" | grep -q "no rust/libkernel.rmeta"
}

test_no_tree() {
	fake_tools
	fake_tree
	rm -rf "$tmp/k"
	refused "no directory" "no such directory"
}

test_unconfigured_tree() {
	fake_tools
	fake_tree
	rm "$tmp/k/.config"
	refused "no .config" "not a configured kernel tree"
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

# Debian 7.x: Rust on, its headers without the Rust build products (a
# rust directory may be there, with nothing built in it).
test_debian_headers_without_rust() {
	fake_tools
	fake_tree
	rm "$tmp/k/rust"/*
	refused "Debian's headers" "no rust/libkernel.rmeta: this tree has none .*Debian's linux-headers.*build"
}

test_rust_products_incomplete() {
	fake_tools
	fake_tree
	rm "$tmp/k/rust/libmacros.so"
	refused "no libmacros.so" "no rust/libmacros.so: the tree's Rust build products are incomplete"
}

test_unprepared_tree() {
	fake_tools
	fake_tree
	rm "$tmp/k/include/config/kernel.release"
	refused "no kernel.release" "never prepared"
}

test_no_rustc_cfg() {
	fake_tools
	fake_tree
	rm "$tmp/k/include/generated/rustc_cfg"
	refused "no rustc_cfg" "no include/generated/rustc_cfg"
}

# Ubuntu: the headers' rust link, and its lib-rust package not installed.
test_ubuntu_rust_link_dangles() {
	fake_tools
	fake_tree
	rm -r "$tmp/k/rust"
	ln -s ../linux-lib-rust-7.0.0-15-generic/rust "$tmp/k/rust"
	refused "dangling rust link" "rust is a link to .*does not exist.*apt install linux-lib-rust-7.0.0-15-generic"
}

# Ubuntu HWE: the link names another directory, the package is installed
# under the release's name; that one is used.
test_ubuntu_lib_rust_found_by_release() {
	fake_tools
	fake_tree
	mkdir -p "$tmp/root/usr/src/linux-lib-rust-7.0.0-15-generic"
	mv "$tmp/k/rust" "$tmp/root/usr/src/linux-lib-rust-7.0.0-15-generic/rust"
	ln -s ../linux-hwe-7.0-lib-rust-7.0.0-15-generic/rust "$tmp/k/rust"
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen" "$tmp/root/usr/src/linux-lib-rust-7.0.0-15-generic/rust"
}

test_no_target_json() {
	fake_tools
	fake_tree
	rm "$tmp/k/scripts/target.json"
	refused "no target.json" "no scripts/target.json"
}

test_other_rustc_given() {
	fake_tools
	fake_tree
	fake_rustc rustc-other "rustc 1.41.0 (0123456ab 2019-12-01)"
	RUSTC=$tmp/bin/rustc-other refused "RUSTC another rustc" "RUSTC is 'rustc 1.41.0.*built with 'rustc 1.42.7"
}

test_given_rustc_does_not_run() {
	fake_tools
	fake_tree
	RUSTC=$tmp/bin/nothing refused "RUSTC does not run" "RUSTC='$tmp/bin/nothing' does not run"
}

test_given_bindgen_does_not_run() {
	fake_tools
	fake_tree
	BINDGEN=$tmp/bin/nothing refused "BINDGEN does not run" "^mlx_ext: [^:]*: BINDGEN='$tmp/bin/nothing' does not run: bindgen 0.71.1 or later is needed"
}

test_no_bindgen() {
	fake_tools
	fake_tree
	rm "$tmp/bin/bindgen"
	if PATH=/usr/bin:/bin command -v bindgen; then
		echo "this host has a bindgen in /usr/bin"
		return "$KSFT_SKIP"
	fi
	PATH=$tmp/bin:/usr/bin:/bin refused "no bindgen" "no bindgen recent enough \(none found\)"
}

test_no_kernel_rustc_found() {
	fake_tools
	fake_tree
	fake_rustc rustc "rustc 1.41.0 (0123456ab 2019-12-01)"
	refused "no kernel rustc" "no rustc here is the kernel's 'rustc 1.42.7.*rustc is 'rustc 1.41.0.*apt install rustc-1.42"
}

test_old_bindgen() {
	fake_tools
	fake_tree
	fake_bindgen bindgen 0.69.4 19.1.7
	refused "old bindgen" "no bindgen recent enough \(bindgen is 'bindgen 0.69.4'\): bindgen 0.71.1 or later"
}

test_bindgen_without_libclang() {
	fake_tools
	fake_tree
	fake_bindgen bindgen 0.71.1 none
	refused "no libclang" "cannot load libclang"
}

test_old_libclang() {
	fake_tools
	fake_tree
	fake_bindgen bindgen 0.71.1 14.0.6
	refused "old libclang" "libclang 14.0.6, older than 7.x's minimum 17.0.1"
}

# A tree that makes modules' BTF against its vmlinux needs pahole and the
# tree's resolve_btfids; without a vmlinux Kbuild skips BTF and needs
# neither.
btf_tree() {
	fake_tree
	echo CONFIG_DEBUG_INFO_BTF_MODULES=y >>"$tmp/k/.config"
	touch "$tmp/k/vmlinux"
	mkdir -p "$tmp/k/tools/bpf/resolve_btfids"
	printf '#!/bin/sh\n' >"$tmp/k/tools/bpf/resolve_btfids/resolve_btfids"
	chmod +x "$tmp/k/tools/bpf/resolve_btfids/resolve_btfids"
	printf '#!/bin/sh\necho v1.24\n' >"$tmp/bin/pahole"
	chmod +x "$tmp/bin/pahole"
}

# no_pahole_path: $tmp/nopahole, the host's tools but its pahole.
no_pahole_path() {
	mkdir -p "$tmp/nopahole"
	find /usr/bin/ /bin/ -maxdepth 1 ! -type d ! -name pahole -exec ln -sf -t "$tmp/nopahole" {} +
}

test_btf_tree_passes() {
	fake_tools
	btf_tree
	chooses "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

test_btf_without_pahole() {
	fake_tools
	btf_tree
	rm "$tmp/bin/pahole"
	no_pahole_path
	PATH=$tmp/bin:$tmp/nopahole refused "no pahole" "makes BTF for its modules, with pahole, which is not installed \(.*apt install dwarves"
}

test_btf_without_resolve_btfids() {
	fake_tools
	btf_tree
	rm "$tmp/k/tools/bpf/resolve_btfids/resolve_btfids"
	refused "no resolve_btfids" "with tools/bpf/resolve_btfids/resolve_btfids, which the tree lacks"
}

test_btf_without_vmlinux_needs_neither() {
	fake_tools
	btf_tree
	rm "$tmp/k/vmlinux" "$tmp/bin/pahole" "$tmp/k/tools/bpf/resolve_btfids/resolve_btfids"
	no_pahole_path
	PATH=$tmp/bin:$tmp/nopahole chooses "$tmp/bin/rustc" "$tmp/bin/bindgen"
}

# MLNX_OFED's headers for the release, or its ib_core outside kernel/.
test_mlnx_ofed_headers() {
	fake_tools
	fake_tree
	mkdir -p "$tmp/root/usr/src/ofa_kernel/$(uname -m)/7.0.0-15-generic"
	refused "MLNX_OFED headers" "RDMA core of 7.0.0-15-generic is MLNX_OFED's.*ofa_kernel.*remove mlnx-ofa_kernel"
}

test_mlnx_ofed_ib_core() {
	fake_tools
	fake_tree
	mkdir -p "$tmp/root/lib/modules/7.0.0-15-generic/updates/dkms"
	touch "$tmp/root/lib/modules/7.0.0-15-generic/updates/dkms/ib_core.ko.zst"
	refused "MLNX_OFED ib_core" "MLNX_OFED's.*updates/dkms/ib_core.ko.zst"
}

ktap_run test_complete_tree_passes test_versioned_rustc_found test_other_bindgen_accepted \
	test_no_rust_src_accepted test_versioned_bindgen_found test_given_tools_used \
	test_no_tools_checks_tree_only test_no_tree test_unconfigured_tree test_unprepared_tree \
	test_no_config_rust test_no_config_infiniband test_debian_headers_without_rust \
	test_rust_products_incomplete test_ubuntu_rust_link_dangles \
	test_ubuntu_lib_rust_found_by_release test_no_target_json test_no_rustc_cfg \
	test_other_rustc_given test_given_rustc_does_not_run test_no_kernel_rustc_found \
	test_old_bindgen test_given_bindgen_does_not_run test_no_bindgen \
	test_bindgen_without_libclang test_old_libclang test_btf_tree_passes test_btf_without_pahole \
	test_btf_without_resolve_btfids test_btf_without_vmlinux_needs_neither \
	test_mlnx_ofed_headers test_mlnx_ofed_ib_core
