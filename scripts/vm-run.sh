#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots the test kernel in QEMU with mlx_ext.ko and runs guest script
# tests/vm/SCRIPT.sh. Prints the exact QEMU command, keeps the whole console
# in build/console-SCRIPT.log, and exits non-zero when a KTAP test fails, the
# guest panics, the run times out, or the guest does not finish.
#
# Usage: vm-run.sh SCRIPT KERNEL_DIR MODULE_KO [EXTRA_DIR]
# Environment: MLX_EXT_ACCEL=auto|tcg|kvm (auto: KVM only if it really
# boots here, else TCG), MLX_EXT_VM_TIMEOUT seconds (default 600).
source "$(dirname "$0")/lib.sh"

script=$1 kdir=$2 ko=$3 extra=${4:-}
timeout=${MLX_EXT_VM_TIMEOUT:-600}
mkdir -p "$MLX_EXT_BUILD"
initrd=$MLX_EXT_BUILD/initramfs-$script.cpio
log=$MLX_EXT_BUILD/console-$script.log
bzimage=$kdir/linux-source-6.12/arch/x86/boot/bzImage

say "vm: initramfs $initrd"
"$MLX_EXT_ROOT/scripts/mkinitramfs.sh" "$kdir" "$ko" "$initrd" "$extra"

qemu_cmd() { # ACCEL_ARGS... -- APPEND
	local append=${*: -1}
	echo qemu-system-x86_64 "${@:1:$#-1}" -smp 2 -m 1024 -nographic -no-reboot \
		-kernel "$bzimage" -initrd "$initrd" \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
		-append "'console=ttyS0 loglevel=4 panic=-1 $append'"
}

# Nested KVM is broken on some hosts (ENVIRONMENT.md): use it only if a
# short boot under it reaches user space. The verdict is cached per QEMU
# and kernel.
accel_args() {
	case "${MLX_EXT_ACCEL:-auto}" in
	tcg) echo "-accel tcg -cpu max"; return ;;
	kvm) echo "-accel kvm -cpu host"; return ;;
	esac
	if [ ! -w /dev/kvm ]; then echo "-accel tcg -cpu max"; return; fi
	local verdict=$MLX_EXT_CACHE/kvm-$(basename "$kdir")-$(qemu-system-x86_64 --version | head -n1 | tr -dc '0-9.')
	if [ ! -f "$verdict" ]; then
		say "vm: probing KVM (20 s at most)"
		if eval "timeout -k 2 20 $(qemu_cmd -accel kvm -cpu host mlx_ext_vm=none)" </dev/null 2>&1 |
			grep -q "mlx_ext-vm: done"; then echo kvm >"$verdict"; else echo tcg >"$verdict"; fi
	fi
	if [ "$(cat "$verdict")" = kvm ]; then echo "-accel kvm -cpu host"; else echo "-accel tcg -cpu max"; fi
}

read -ra accel <<<"$(accel_args)"
cmd=$(qemu_cmd "${accel[@]}" "mlx_ext_vm=$script")
say "vm: timeout ${timeout}s, console log $log"
echo "+ $cmd" >&2
set +e
# Shows the guest's output from its start marker on, and any crash before.
eval "timeout -k 5 $timeout $cmd" </dev/null 2>&1 | tr -d '\r' | tee "$log" |
	awk '/mlx_ext-vm: running/ { on = 1 } on || /Kernel panic|BUG:|Oops|WARNING:/ { print; fflush() }'
qemu_rc=${PIPESTATUS[0]}
set -e

fail() { say "vm: FAILED: $*"; echo "vm: $pass passed, $((failed + 1)) failed, $skip skipped"; exit 1; }
plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$log" | cut -d. -f3 || true)
pass=$(grep -cE '^ok [0-9]+ ' "$log" | head -n1 || true)
skip=$(grep -cE '^ok [0-9]+ .* # SKIP' "$log" || true)
pass=$((pass - skip))
failed=$(grep -cE '^not ok [0-9]+ ' "$log" || true)
grep -q 'Kernel panic' "$log" && fail "the guest panicked (see $log)"
[ "$qemu_rc" = 124 ] && fail "timed out after ${timeout}s (see $log)"
grep -q 'mlx_ext-vm: done' "$log" || fail "the guest did not finish (QEMU exit $qemu_rc; see $log)"
# A kernel splat fails the run even when no test looked at the log.
splat=$(grep -m1 -E '^mlx_ext-vm: splat: |(^|\] )(BUG:|Oops|kernel BUG)' "$log" || true)
[ -z "$splat" ] || fail "the kernel reported: $splat (see $log)"
guest_rc=$(sed -nE 's/^mlx_ext-vm: done rc=([0-9]+)$/\1/p' "$log" | tail -n1)
if [ -z "$plan" ]; then
	# No KTAP: a demo, which succeeds when the guest script does.
	[ "$guest_rc" = 0 ] || fail "guest script $script exited with $guest_rc"
	say "vm: $script finished"
	exit 0
fi
[ $((pass + skip + failed)) = "$plan" ] || fail "KTAP plan 1..$plan but $((pass + skip + failed)) results"
echo "vm: $pass passed, $failed failed, $skip skipped"
[ "$failed" = 0 ]
