#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: every test of mlx_ext, as a table of steps (STEPS below).
# Each step prints KTAP (its own document: a plan and one result per test;
# cargo's results are turned into KTAP lines), which one parser tallies
# (ktap_counts, lib.sh); a step that exits non-zero without a failed result
# to say why, or prints no result at all, counts as one failure, so a step
# that fails to start is never a silent skip; so is each result a step's
# plans announce and it does not print (run_step, scripts/steps.sh). The last line sums up every
# step: "N passed, N failed, N skipped". Every step that could hang has a
# time limit (MLX_EXT_*_TIMEOUT).
#
# Every VM step runs on the debug kernel (7.x: the debug options and the
# distribution's module options, kernel/distro.config), a bootable one,
# whatever the environment says; the 6.12 steps ask for the production one
# themselves.
export MLX_EXT_KERNEL=debug MLX_EXT_KERNEL_BUILD=image
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/steps.sh"
set +e
cd "$MLX_EXT_ROOT"

# name | function: run in this order.
STEPS=(
	"setup: Debian packages, bindgen-cli and the 7.x kernel source | step_setup"
	"host: cargo test | step_cargo_test"
	"host: the harness's own tests (tests/harness/) | step_harness"
	"host: rustfmt and clippy | step_format_lint"
	"kernel: mlx_ext.ko built for 7.x with CLIPPY=1, no warnings allowed | step_module"
	"kernel: the 7.x kernel's .config has the distribution's options (kernel/distro.config) | step_distro_config"
	"host: make rust-analyzer describes the module's crates | step_rust_analyzer"
	"host: checkpatch.pl --strict on the C files | step_checkpatch"
	"host: the fixes in patches/upstream/ apply to 7.x and pass checkpatch | step_upstream_patches"
	"vm: the VM tests in two QEMU guests on the debug kernel (7.x) | step_vm"
	"kernel: the 6.12 tree a module build needs (kernel/production.config) | step_production_kernel"
	"kernel: mlx_ext.ko built for 6.12 (GCC) with CLIPPY=1, no warnings allowed | step_module_612"
	"install: the 7.x kernel's headers as Arch, Ubuntu and Debian package them; refusals | step_layouts"
	"install: make modules, modules_install, headers_install, CRCs against Arch's layout | step_install"
	"dkms: Debian's dkms against Ubuntu's layout, then modprobe in the VM, signatures enforced | step_dkms"
)

cargo_timeout=${MLX_EXT_CARGO_TIMEOUT:-1800}
mkdir -p "$MLX_EXT_BUILD"

# Setup, then which 7.x source the kernels are built from: the pin in
# lib.sh, or (where the archive dropped it and the cache never had it) the
# newest 7.x, which is said in the result so that nobody reads a new
# kernel's failures as a regression.
step_setup() {
	local rc log=$MLX_EXT_BUILD/kernel-source.log pkg version moved
	echo "TAP version 13"
	echo "1..2"
	ktap_cmd_result 1 "scripts/setup.sh" "$MLX_EXT_ROOT/scripts/setup.sh"
	rc=$?
	if read -r pkg version _ < <("$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>"$log"); then
		moved=$(grep -m1 '^kernel moved: ' "$log")
		echo "ok 2 7.x kernel source: $pkg $version${moved:+ # $moved}"
	else
		sed 's/^/# /' "$log"
		echo "not ok 2 7.x kernel source"
		rc=1
	fi
	return $rc
}

step_cargo_test() {
	local log=$MLX_EXT_BUILD/cargo-test.log rc
	timeout -k 10 "$cargo_timeout" cargo test --workspace --color never >"$log" 2>&1
	rc=$?
	echo "TAP version 13"
	grep -vE '^test .* \.\.\. (ok|ignored)' "$log" | sed 's/^/# /'
	[ "$rc" != 124 ] || echo "# cargo test did not finish in ${cargo_timeout}s (MLX_EXT_CARGO_TIMEOUT)"
	cargo_ktap "$log"
	return $rc
}

step_harness() {
	local t rc=0 n=0 r
	echo "TAP version 13"
	echo "1..$(ls tests/harness/*.sh | wc -l)"
	for t in tests/harness/*.sh; do
		n=$((n + 1))
		timeout -k 5 300 "$t" >"$MLX_EXT_BUILD/harness.log" 2>&1
		r=$?
		# Each file is a KTAP document of its own: a subtest, indented.
		sed 's/^/    /' "$MLX_EXT_BUILD/harness.log"
		if [ $r = 0 ] && ! grep -q '^not ok' "$MLX_EXT_BUILD/harness.log"; then
			echo "ok $n $t"
		else
			echo "not ok $n $t"; rc=1
		fi
	done
	return $rc
}

step_format_lint() {
	local rc=0
	echo "TAP version 13"
	echo "1..3"
	# Failures show the diff to apply (or run: cargo fmt --all).
	cargo fmt --all --check 2>&1 | head -n 60 | sed 's/^/# /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then echo "ok 1 cargo fmt --check"; else echo "not ok 1 cargo fmt --check"; rc=1; fi
	# Module code is formatted like the kernel's (its .rustfmt.toml is the default).
	"$KRUSTFMT" --edition 2021 --check rust/mlx_ext.rs rust/mlx_ext_sim.rs 2>&1 | head -n 60 | sed 's/^/# /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then echo "ok 2 rustfmt --check rust/"; else echo "not ok 2 rustfmt --check rust/"; rc=1; fi
	timeout -k 10 "$cargo_timeout" cargo clippy --workspace --all-targets --color never -- -D warnings 2>&1 |
		tail -n 20 | sed 's/^/# /'
	if [ "${PIPESTATUS[0]}" = 0 ]; then echo "ok 3 cargo clippy -D warnings"; else echo "not ok 3 cargo clippy -D warnings"; rc=1; fi
	return $rc
}

# The test kernel's build tree, once step_module has built the module
# against it; the steps that need it fail without it.
kdir=
step_module() {
	local out rc
	echo "TAP version 13"
	echo "1..1"
	out=$("$MLX_EXT_ROOT/scripts/build-module.sh" --no-warnings 2> >(sed 's/^/# /' >&2))
	rc=$?
	if [ $rc = 0 ]; then
		kdir=$out
		echo "ok 1 module build without warnings"
	else
		echo "not ok 1 module build without warnings"
	fi
	return $rc
}

need_kdir() {
	[ -n "$kdir" ] && return 0
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 $1 # no test kernel and module: see the module build step"
	return 1
}

# The table of the distribution's options holds in the kernel built with it
# (its rows against Debian's own file: tests/harness/distro_config.sh).
step_distro_config() {
	need_kdir "distribution options" || return 1
	ktap_cmd "the 7.x kernel's .config has every row of kernel/distro.config" \
		"$MLX_EXT_ROOT/scripts/distro-config.sh" built "$(ksrc "$kdir")/.config"
}

step_rust_analyzer() {
	need_kdir "make rust-analyzer" || return 1
	ktap_cmd "make rust-analyzer" sh -c '"$1/scripts/rust-analyzer.sh" >/dev/null &&
		python3 "$1/tests/harness/rust_project.py" "$1/rust-project.json"' - "$MLX_EXT_ROOT"
}

# checkpatch ARGS...: the test kernel's checkpatch.pl --strict --terse on
# ARGS, printing its findings only (nothing for a clean file).
checkpatch() {
	perl "$(ksrc "$kdir")/scripts/checkpatch.pl" --no-tree --strict --terse "$@" 2>&1 |
		grep -v '^total: 0 errors, 0 warnings, 0 checks'
}

# EXPORT_SYMBOL is ignored: rust/helpers/export.c exports functions that
# are defined in Rust, as the kernel's own rust/exports.c does.
step_checkpatch() {
	local cfiles out
	need_kdir "checkpatch" || return 1
	mapfile -t cfiles < <(git ls-files '*.c' '*.h')
	# ALLOC_WITH_SIZEOF asks for kzalloc_obj(), which 7.x has and 6.12,
	# where the same C builds, does not.
	out=$(for f in "${cfiles[@]}"; do checkpatch --show-types --ignore EXPORT_SYMBOL,ALLOC_WITH_SIZEOF -f "$f"; done)
	ktap_cmd "checkpatch --strict (${#cfiles[@]} C files)" sh -c '[ -z "$1" ] || { echo "$1"; exit 1; }' - "$out"
}

# UNKNOWN_COMMIT_ID: the Fixes: tags name upstream commits, which the
# unpacked source (no git history) cannot look up.
step_upstream_patches() {
	local p n=0 rc=0 out patches=(patches/upstream/*.patch)
	need_kdir "upstream patches" || return 1
	echo "TAP version 13"
	echo "1..${#patches[@]}"
	for p in "${patches[@]}"; do
		n=$((n + 1))
		out=$(patch -p1 --dry-run -s -d "$(ksrc "$kdir")" <"$p" 2>&1 &&
			checkpatch --ignore UNKNOWN_COMMIT_ID "$p")
		if [ -z "$out" ]; then
			echo "ok $n upstream patch $(basename "$p")"
		else
			echo "$out" | sed 's/^/# /'
			echo "not ok $n upstream patch $(basename "$p")"; rc=1
		fi
	done
	return $rc
}

# The suite in two guests at once (scripts/vm-suite.sh, the split in
# tests/vm/split.txt): one KTAP document, each guest's verdict (a splat, a
# panic, a timeout, a guest that did not finish, its plan against its
# results) a result of its own.
step_vm() {
	local extra=$MLX_EXT_BUILD/vm-extra
	need_kdir "VM tests" || return 1
	"$MLX_EXT_ROOT/scripts/vm-extra.sh" "$extra" 2>&1 | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "not ok 1 the host's digests for the VM tests"; return 1; }
	# The suite's time on 2 idle cores is in Documentation/
	# measurements.rst: its limit leaves room for a busy machine (a hang
	# is still caught).
	MLX_EXT_VM_TIMEOUT=${MLX_EXT_VM_TIMEOUT:-2700} \
		"$MLX_EXT_ROOT/scripts/vm-suite.sh" run "$kdir" "$extra"
}

# The 6.12 leg compiles the modules; it boots nothing (make check-6.12
# does), so it builds the configured tree a module build needs, with
# vmlinux.o and the RDMA core's modules for modpost, not a bootable kernel
# (MLX_EXT_KERNEL_BUILD=tree, scripts/build-kernel.sh).
pkdir=
step_production_kernel() {
	local out rc
	echo "TAP version 13"
	echo "1..1"
	out=$(MLX_EXT_KERNEL=production MLX_EXT_KERNEL_BUILD=tree "$MLX_EXT_ROOT/scripts/build-kernel.sh" 2> >(sed 's/^/# /' >&2))
	rc=$?
	if [ $rc = 0 ]; then
		pkdir=$out
		echo "ok 1 production-config 6.12 tree for module builds"
	else
		echo "not ok 1 production-config 6.12 tree for module builds"
	fi
	return $rc
}

# 6.12 keeps building: both crates and the C, with the 6.12 kernel crate's
# lints, against the production config (GCC, as 6.12 distributions build),
# and modpost finds every symbol the modules use exported by 6.12.
step_module_612() {
	need_pkdir "module build for 6.12" || return 1
	ktap_cmd "module build for 6.12 without warnings" env MLX_EXT_KERNEL=production MLX_EXT_KERNEL_BUILD=tree \
		MLX_EXT_BUILD="$MLX_EXT_BUILD/612" "$MLX_EXT_ROOT/scripts/build-module.sh" --no-warnings
}

need_pkdir() {
	[ -n "$pkdir" ] && return 0
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 $1 # no 6.12 tree: see its build step"
	return 1
}

# After the VM tests: these rebuild the modules in the tree as a user
# would, against the 7.x kernel, whose module options are a distribution's,
# packaged as distributions package their headers (scripts/headers-
# layout.sh), with the toolchain a user of each has on PATH: Arch's rustc
# is `rustc`; Ubuntu's is `rustc-X.Y` beside another default rustc (this
# host's rustup one), which the build must find by itself. No RUSTC or
# BINDGEN is passed.
layouts=$MLX_EXT_BUILD/layouts
step_layouts() {
	local xy n=0 rc=0 out
	need_kdir "headers layouts" || return 1
	xy=$("$KRUSTC" --version | sed -n 's/^rustc \([0-9]*\.[0-9]*\)\..*/\1/p')
	rm -rf "$layouts/bin-arch" "$layouts/bin-ubuntu"
	mkdir -p "$layouts/bin-arch" "$layouts/bin-ubuntu"
	ln -s "$KRUSTC" "$layouts/bin-arch/rustc"
	ln -s "$KRUSTC" "$layouts/bin-ubuntu/rustc-$xy"
	# Ubuntu's default rustc, another version than the kernel's.
	printf '#!/bin/sh\necho "rustc 1.0.0 (0000000 2015-05-15) (another rustc)"\nexit 1\n' \
		>"$layouts/bin-ubuntu/rustc"
	chmod +x "$layouts/bin-ubuntu/rustc"
	ln -s "$KBINDGEN" "$layouts/bin-arch/bindgen"
	ln -s "$KBINDGEN" "$layouts/bin-ubuntu/bindgen"
	echo "TAP version 13"
	echo "1..6"
	for l in arch ubuntu debian; do
		n=$((n + 1))
		if out=$("$MLX_EXT_ROOT/scripts/headers-layout.sh" "$l" "$(ksrc "$kdir")" "$layouts/$l" 2>&1); then
			echo "ok $n $l's headers tree made: ${out#"$layouts/"}"
		else
			echo "$out" | sed 's/^/# /'
			echo "not ok $n $l's headers tree made"; rc=1
		fi
	done
	# refused N WHAT KDIR PATTERN: make modules KDIR stops before compiling,
	# in one line matching PATTERN.
	refused() {
		out=$(PATH="$layouts/bin-ubuntu:$PATH" make -s -C "$MLX_EXT_ROOT" modules KDIR="$3" 2>&1 >/dev/null)
		if [ "$(printf '%s\n' "$out" | grep -c '^mlx_ext: ')" = 1 ] &&
			printf '%s\n' "$out" | grep -qE "$4" && ! printf '%s\n' "$out" | grep -q '==> modules:'; then
			echo "# $(printf '%s\n' "$out" | grep '^mlx_ext: ')"
			echo "ok $1 $2"
		else
			echo "$out" | tail -n 20 | sed 's/^/# /'
			echo "not ok $1 $2"; rc=1
		fi
	}
	refused 4 "Debian's headers (Rust on, no Rust build products) refused in one line" \
		"$layouts/debian/usr/src/linux-headers-$(cat "$(ksrc "$kdir")/include/config/kernel.release")" \
		"no rust/libkernel.rmeta"
	# Ubuntu's headers without linux-lib-rust: the rust link dangles.
	local hdr lib
	hdr=$(ls -d "$layouts"/ubuntu/usr/src/linux-headers-* 2>/dev/null) lib=${hdr/linux-headers-/linux-lib-rust-}
	if [ ! -d "$hdr" ] || [ ! -d "$lib" ]; then
		echo "not ok 5 no Ubuntu layout"
		echo "not ok 6 no Ubuntu layout"
		return 1
	fi
	mv "$lib" "$lib.away"
	refused 5 "Ubuntu's headers without linux-lib-rust refused in one line" "$hdr" \
		"rust is a link to .*apt install linux-lib-rust-"
	mv "$lib.away" "$lib"
	# Ubuntu's HWE kernels: the rust link names another directory than the
	# one linux-lib-rust-<release> installs (KERNELS.md); the build finds
	# that one by the release and passes it to rustc (KRUSTFLAGS=-L).
	ln -sfn "../linux-hwe-x-lib-rust-${hdr##*/linux-headers-}/rust" "$hdr/rust"
	rm -f "$MLX_EXT_ROOT/mlx_ext.ko"
	if out=$(PATH="$layouts/bin-ubuntu:$PATH" MLX_EXT_SYSROOT="$layouts/ubuntu" \
		make -C "$MLX_EXT_ROOT" modules KDIR="$hdr" 2>&1) &&
		printf '%s\n' "$out" | grep -q "KRUSTFLAGS=-L $lib/rust " && [ -f "$MLX_EXT_ROOT/mlx_ext.ko" ]; then
		echo "ok 6 Ubuntu's headers with the rust link elsewhere build against linux-lib-rust-<release>"
	else
		echo "$out" | tail -n 20 | sed 's/^/# /'
		echo "not ok 6 Ubuntu's headers with the rust link elsewhere build against linux-lib-rust-<release>"
		rc=1
	fi
	ln -sfn "../${lib##*/}/rust" "$hdr/rust"
	return $rc
}

step_install() {
	need_kdir "install" || return 1
	if [ ! -d "$layouts/arch" ]; then
		printf 'TAP version 13\n1..1\nnot ok 1 install # no Arch layout: see the layouts step\n'
		return 1
	fi
	PATH="$layouts/bin-arch:$PATH" timeout -k 10 "${MLX_EXT_MODULE_TIMEOUT:-900}" \
		"$MLX_EXT_ROOT/scripts/install-check.sh" "$(ls -d "$layouts"/arch/usr/lib/modules/*/build)" \
		"$MLX_EXT_BUILD/stage" "$(ksrc "$kdir")"
}

step_dkms() {
	local extra=$MLX_EXT_BUILD/dkms-extra rc
	need_kdir "dkms" || return 1
	if ! compgen -G "$layouts/ubuntu/usr/src/linux-headers-*" >/dev/null; then
		printf 'TAP version 13\n1..1\nnot ok 1 dkms # no Ubuntu layout: see the layouts step\n'
		return 1
	fi
	PATH="$layouts/bin-ubuntu:$PATH" timeout -k 10 "${MLX_EXT_MODULE_TIMEOUT:-900}" \
		"$MLX_EXT_ROOT/scripts/dkms-check.sh" "$kdir" "$(ls -d "$layouts"/ubuntu/usr/src/linux-headers-*)"
	rc=$?
	rm -rf "$extra"
	mkdir -p "$extra/unsigned" && cp VERSION "$extra/"
	# The sample as built, before it was signed.
	cp "$MLX_EXT_BUILD/stage/mlx_ext_caps/unsigned/mlx_ext_caps.ko" "$extra/unsigned/" 2>/dev/null
	# The sample built against a wrong CRC of mlx_ext's (install-check.sh),
	# which a kernel with module versions must refuse.
	kconfig "$(ksrc "$kdir")/.config" MODVERSIONS >"$extra/modversions"
	if [ -f "$MLX_EXT_BUILD/stage/badcrc/mlx_ext_caps.ko" ]; then
		mkdir -p "$extra/badcrc" && cp "$MLX_EXT_BUILD/stage/badcrc/mlx_ext_caps.ko" "$extra/badcrc/"
	fi
	# mlx_ext with its BTF, built against Arch's layout (install-check.sh).
	if [ -f "$MLX_EXT_BUILD/stage/btf/mlx_ext.ko" ]; then
		mkdir -p "$extra/btf" && cp "$MLX_EXT_BUILD/stage/btf/mlx_ext.ko" "$extra/btf/"
	fi
	[ -d "$MLX_EXT_BUILD/dkms/boot/lib/modules" ] || return $rc
	# Signatures enforced, as lockdown enforces them under Secure Boot.
	MLX_EXT_GUEST_MODULES=$MLX_EXT_BUILD/dkms/boot/lib/modules \
		MLX_EXT_VM_APPEND="module.sig_enforce=1${MLX_EXT_VM_APPEND:+ $MLX_EXT_VM_APPEND}" \
		"$MLX_EXT_ROOT/scripts/vm-run.sh" tests/install/dkms.sh "$kdir" "$extra" || rc=1
	return $rc
}

run_steps
