#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the guest's initramfs: busybox, the kernel's modules with modules.dep
# (the tree's modules among them, under extra/), the `rdma` tool and its
# libraries, the VM tests of tests/vm/ (areas in /tests, helpers in
# /tests/lib), and SCRIPT as /run.sh, which the guest's init
# (scripts/guest/init) runs.
#
# Usage: mkinitramfs.sh KERNEL_DIR SCRIPT OUTPUT EXTRA_DIR MODULE_KO...
# (MLX_EXT_GUEST_MODULES: see "Modules" below.)
# EXTRA_DIR's files (unless EXTRA_DIR is "") are copied to /extra in the
# guest (test vectors).
source "$(dirname "$0")/lib.sh"

kdir=$1 script=$2 out=$3 extra=$4
shift 4
[ -f "$script" ] || die "guest script $script not found"
[ $# -gt 0 ] || die "no module to install in the guest"
root=$(mktemp -d)
# mktemp's 0700 would be the guest's /: users other than root could not
# even run a shell.
chmod 755 "$root"
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,etc,proc,sys,dev,tmp,run,lib64,usr/bin,tests,extra}
# The kernel runs /sbin/modprobe to load modules on demand (crc32 for rxe).
ln -s bin "$root/sbin"
ln -s ../bin "$root/usr/sbin"
cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# copy_dynamic BIN: BIN into the guest's /usr/bin with the libraries it links.
copy_dynamic() {
	cp "$1" "$root/usr/bin/"
	ldd "$1" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
rdma=$(command -v rdma) || die "rdma not found (Debian package iproute2)"
copy_dynamic "$rdma"
# iproute2's ip, as /usr/bin/ip beside busybox's /bin/ip, which has no VF
# GUIDs (ip link set <pf> vf N node_guid|port_guid: tests/vm/guid_pci.sh).
iproute2_ip=$(dirname "$rdma")/ip
"$iproute2_ip" -V 2>/dev/null | grep -q iproute2 || die "iproute2's ip not found beside $rdma (Debian package iproute2)"
copy_dynamic "$iproute2_ip"

# perftest's atomic tests, the benchmark's anchor (tests/bench/bench.sh), with
# libibverbs' rxe provider, which libibverbs loads by name from its
# directory as /etc/libibverbs.d/rxe.driver says. Only the benchmark runs
# them; an image without them (perftest not installed) says so there.
if command -v ib_atomic_lat >/dev/null && command -v ib_atomic_bw >/dev/null; then
	copy_dynamic "$(command -v ib_atomic_lat)"
	copy_dynamic "$(command -v ib_atomic_bw)"
	for lib in /usr/lib/*-linux-gnu/libibverbs/librxe-rdmav*.so; do
		[ -e "$lib" ] || continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	mkdir -p "$root/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/" 2>/dev/null || true
fi

# Modules: the kernel's, plus the tree's as out-of-tree "extra" modules.
# MLX_EXT_GUEST_MODULES, a lib/modules directory, replaces both: the guest
# gets exactly what was installed there (scripts/dkms-check.sh installs
# mlx_ext with DKMS into one), and none of the tree's modules.
modroot=${MLX_EXT_GUEST_MODULES:-$kdir/modinst/lib/modules}
kver=$(ls "$modroot")
mkdir -p "$root/lib/modules"
cp -a "$modroot/$kver" "$root/lib/modules/"
rm -f "$root/lib/modules/$kver/build" "$root/lib/modules/$kver/source"
if [ -z "${MLX_EXT_GUEST_MODULES:-}" ]; then
	mkdir -p "$root/lib/modules/$kver/extra"
	cp "$@" "$root/lib/modules/$kver/extra/"
	# Installed modules of a kernel with CONFIG_MODULE_SIG_ALL (both of
	# the harness's) are signed, as Kbuild's modules_install signs them.
	ksrc=$(ksrc "$kdir")
	if grep -q '^CONFIG_MODULE_SIG_ALL=y' "$ksrc/.config"; then
		sign_module "$ksrc" "$root/lib/modules/$kver/extra"/*.ko || die "cannot sign the guest's modules"
	fi
fi
depmod -b "$root" "$kver" || die "depmod failed for the guest's modules"
# The kernel's configuration, for the tests of its debug options
# (kernel_lacks, tests/vm/lib/common.sh).
cp "$(ksrc "$kdir")/.config" "$root/kernel.config"
# The module tools are kmod's, as distributions have them, for every
# script and shell in the guest (the kernel's own /sbin/modprobe calls
# included). busybox's modprobe first hands a compressed module (.ko.xz,
# kernel/distro.config) to finit_module(), which the kernel refuses with
# "Invalid ELF header magic" in its log, before it decompresses it itself;
# and busybox's shell runs its own applet before it looks at PATH, so the
# guest's busybox is made to forget them (scripts/busybox-unapplet.py).
kmod=$(command -v kmod) || die "kmod not found (Debian package kmod)"
copy_dynamic "$kmod"
for tool in modprobe insmod rmmod lsmod modinfo depmod; do
	ln -sf ../usr/bin/kmod "$root/bin/$tool"
done
python3 "$MLX_EXT_ROOT/scripts/busybox-unapplet.py" "$root/bin/busybox" \
	modprobe insmod rmmod lsmod modinfo depmod ||
	die "cannot make the guest's busybox leave the module tools to kmod"

# The VM tests' areas in /tests, their helpers in /tests/lib (and, for
# scripts written before there was a lib/, /tests/common.sh and
# /tests/ktap.sh).
mkdir -p "$root/tests/lib"
cp "$MLX_EXT_ROOT"/tests/vm/*.sh "$root/tests/"
cp "$MLX_EXT_ROOT"/tests/vm/lib/*.sh "$root/tests/lib/"
ln -s lib/common.sh "$root/tests/common.sh"
ln -s lib/ktap.sh "$root/tests/ktap.sh"
# The guest's C helpers (tests/vm/lib/*.c), static: the guest has no libc.
for c in "$MLX_EXT_ROOT"/tests/vm/lib/*.c; do
	gcc -static -Os -Wall -o "$root/bin/$(basename "$c" .c)" "$c" ||
		die "cannot build the guest helper $c (needs gcc and libc6-dev)"
done
cp "$MLX_EXT_ROOT/scripts/guest/init" "$root/init"
cp "$script" "$root/run.sh"
basename "$script" >"$root/run.name"
chmod +x "$root/init" "$root"/tests/*.sh "$root"/tests/lib/*.sh "$root/run.sh"
[ -z "$extra" ] || cp -r "$extra"/. "$root/extra/"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$out"
