#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Installs what building and testing mlx_ext needs, idempotently, and checks
# versions. Each failure is explained in one line.
source "$(dirname "$0")/lib.sh"

DEB_PACKAGES=(
	linux-source-6.12                       # the production kernel (7.x: scripts/kernel-source.sh)
	rustc-web rust-web-src rust-web-clippy  # rustc 1.9x with rust-src, clippy-driver
	rustfmt-web
	cargo-web                               # cargo where rustup is absent (same release)
	clang libclang-dev lld llvm             # libclang for 6.12's bindgen
	clang-22 lld-22 llvm-22 libclang1-22    # the 7.x kernel: its bindgen needs libclang >= 17
	flex bison bc libelf-dev libssl-dev cpio kmod xz-utils make
	libdw-dev                               # gendwarfksyms: the 7.x kernel's MODVERSIONS (kernel/distro.config)
	openssl                                 # the kernels' signing keys, signature checks
	qemu-system-x86                         # the test VM
	busybox-static iproute2                 # guest userland, `rdma` tool
	gcc libc6-dev                           # the production kernel; the guest's static C helpers (tests/vm/*.c)
	dkms                                    # make check installs mlx_ext with it (staged)
	perftest ibverbs-providers              # make bench-vm's anchor: ib_atomic_lat/bw on rxe0
)
# The kernel needs bindgen >= 0.65.1; one pinned version, so that a new
# release never changes the kernel cache key (lib.sh) behind anyone's back.
BINDGEN_VERSION=0.73.2

missing=()
for p in "${DEB_PACKAGES[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	say "installing Debian packages: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "need root to install ${missing[*]} (run: sudo $0)"
	apt-get update -qq || die "apt-get update failed: no access to Debian's package mirror?"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed (see the messages above)"
else
	say "Debian packages: all ${#DEB_PACKAGES[@]} present"
fi

bg_version() { "$KBINDGEN" --version 2>/dev/null | awk '{print $2}'; }
if [ "$(bg_version || true)" != "$BINDGEN_VERSION" ]; then
	if [ -n "${MLX_EXT_KBINDGEN_SET:-}" ]; then
		say "warning: KBINDGEN=$KBINDGEN is bindgen $(bg_version || echo '?'), not the pinned $BINDGEN_VERSION"
	else
		say "installing bindgen-cli $BINDGEN_VERSION with cargo (Debian's bindgen is too old)"
		cargo=$(command -v cargo) || die "cargo not found: install Debian's cargo-web (or rustup) to install bindgen-cli"
		timeout 900 "$cargo" install bindgen-cli --locked --version "=$BINDGEN_VERSION" --quiet ||
			die "cargo install bindgen-cli $BINDGEN_VERSION failed or took over 15 min (no access to crates.io?)"
		KBINDGEN=$HOME/.cargo/bin/bindgen
		[ "$(bg_version)" = "$BINDGEN_VERSION" ] || die "$KBINDGEN is bindgen $(bg_version), not $BINDGEN_VERSION"
	fi
fi
say "bindgen $(bg_version) at $KBINDGEN"

[ -x "$KRUSTC" ] || die "$KRUSTC missing: install Debian's rustc-web"
sysroot=$("$KRUSTC" --print sysroot)
[ -d "$sysroot/lib/rustlib/src/rust/library/core" ] ||
	die "$KRUSTC has no rust-src under $sysroot: install Debian's rust-web-src"
say "$("$KRUSTC" --version) with rust-src"
[ -f "$KERNEL612_TAR" ] || die "$KERNEL612_TAR missing: install linux-source-6.12"
read -r pkg version _ < <("$MLX_EXT_ROOT/scripts/kernel-source.sh") || die "no 7.x kernel source"
say "7.x kernel source: $pkg $version"
for t in cargo qemu-system-x86_64 busybox rdma clang-22 ld.lld-22 cpio; do
	command -v "$t" >/dev/null || die "$t not found on PATH after installing packages"
done
say "setup complete"
