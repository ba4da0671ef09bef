#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots the test kernel in QEMU with the tree's modules installed and runs a
# guest shell script. Prints the exact QEMU command, keeps the whole console
# in build/console-NAME.log (NAME: the script's name without .sh), and exits
# non-zero when a KTAP test fails, the script fails, the guest panics, the
# kernel logs a splat, the run times out, or the guest does not finish.
#
# Usage: vm-run.sh [--shell] SCRIPT KERNEL_DIR [EXTRA_DIR]
#   SCRIPT     a guest shell script, anywhere: the suite tests/vm/check.sh,
#              one area tests/vm/<area>.sh, your own; it can source the
#              helpers in /tests/lib (tests/vm/lib/)
#   EXTRA_DIR  files copied to /extra in the guest
#   --shell    SCRIPT is interactive: the console is yours, no timeout
# Modules: every *.ko at the top of the tree (scripts/build-module.sh).
# Environment: MLX_EXT_ACCEL=auto|tcg|kvm (auto: KVM only if it really boots
# here, else TCG), MLX_EXT_VM_TIMEOUT seconds (default 900),
# MLX_EXT_VM_APPEND more kernel command line (mlx_ext_areas=a,b there runs
# only those areas of tests/vm/check.sh, mlx_ext_tests=a,b only those
# tests: tests/vm/lib/area.sh), MLX_EXT_TCG_THREAD=single|multi (below),
# MLX_EXT_VM_NAME the logs' NAME (default: the script's; scripts/vm-suite.sh
# names each of its guests).
source "$(dirname "$0")/lib.sh"

interactive=0
if [ "${1:-}" = --shell ]; then
	interactive=1
	shift
fi
[ $# -ge 2 ] || die "usage: vm-run.sh [--shell] SCRIPT KERNEL_DIR [EXTRA_DIR]"
script=$1 kdir=$2 extra=${3:-}
[ -f "$script" ] || die "guest script '$script' not found"
name=${MLX_EXT_VM_NAME:-$(basename "$script" .sh)}
timeout=${MLX_EXT_VM_TIMEOUT:-900}
mkdir -p "$MLX_EXT_BUILD"
initrd=$MLX_EXT_BUILD/initramfs-$name.cpio
log=$MLX_EXT_BUILD/console-$name.log
bzimage=$(ksrc "$kdir")/arch/x86/boot/bzImage
[ "$MLX_EXT_KERNEL_BUILD" = image ] || die "MLX_EXT_KERNEL_BUILD=$MLX_EXT_KERNEL_BUILD: a VM boots an image, which a tree has not"
[ -f "$bzimage" ] || die "no kernel image at $bzimage (run: make kernel)"
modules=("$MLX_EXT_ROOT"/*.ko)
[ -f "${modules[0]}" ] || die "no module built in $MLX_EXT_ROOT (run: make module)"

say "vm: initramfs $initrd (modules: ${modules[*]##*/})"
"$MLX_EXT_ROOT/scripts/mkinitramfs.sh" "$kdir" "$script" "$initrd" "$extra" "${modules[@]}"

# qemu_args ACCEL_ARGS... APPEND: fills the array `qemu` with the command.
qemu_args() {
	local append=${*: -1}
	# q35: PCI Express with MMCONFIG, where SR-IOV capabilities live.
	# The nvme function has 4 SR-IOV VFs for the simulator to take as a
	# real PCI PF (tests/vm/guid_pci.sh); no driver of the kernel binds it.
	# pci-testdev is a PCI function without SR-IOV, a parent that can never
	# have VFs (test_guid_pci_no_sriov).
	qemu=(qemu-system-x86_64 "${@:1:$#-1}" -machine q35 -smp 2 -m 1024 -nographic -no-reboot
		-kernel "$bzimage" -initrd "$initrd"
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0
		-netdev user,id=n1 -device virtio-net-pci,netdev=n1
		-device nvme-subsys,id=mlxsub
		-device nvme,serial=mlxext,subsys=mlxsub,addr=05.0,sriov_max_vfs=4,sriov_vq_flexible=8,sriov_vi_flexible=4
		-device pci-testdev,addr=06.0
		-append "console=ttyS0 loglevel=4 panic=-1 $append${MLX_EXT_VM_APPEND:+ $MLX_EXT_VM_APPEND}")
}

# Prints the QEMU command, quoted so that it can be pasted into a shell.
show_cmd() {
	local line
	printf -v line '%q ' "${qemu[@]}"
	echo "+ $line" >&2
}

# The guest's CPU has no LA57 (la57=off), so its kernel runs 4-level paging.
# With 5-level paging the debug kernel (KASAN; seen on 6.12.117, before the
# debug kernel moved to 7.x) made a false "BUG: KASAN: wild-memory-access
# in do_raw_spin_lock" in some boots, from a timer interrupt
# (handle_edge_irq) taken inside identify_cpu(). 7.3 has the same window
# (its lines here): identify_cpu() zeroes boot_cpu_data.x86_capability
# (arch/x86/kernel/cpu/common.c:2031) with interrupts already on
# (init/main.c:1118, before arch_cpu_finalize_init() at 1158) and sets the
# LA57 word again only in get_cpu_cap() (common.c:1040). Until
# alternatives are patched, pgtable_l5_enabled() reads that bit
# (arch/x86/include/asm/pgtable_64_types.h:36, cpufeature.h:71-72), so in
# the window __VIRTUAL_MASK_SHIFT, and with it KASAN_SHADOW_START, are the
# 4-level ones (asm/page_64_types.h:51, asm/kasan.h:15-17), and
# addr_has_metadata() (mm/kasan/kasan.h:331-335) turns down every 5-level
# direct-map address (0xff11..., page_64_types.h:41): kasan_check_range()
# of the irq_desc's spinlock reports it as wild (mm/kasan/
# report_generic.c:128-140). QEMU 7.2's TCG "max" offers LA57
# (target/i386/cpu.c:661-663, 849, 6206-6215), as "host" does on a host with
# LA57.
# MLX_EXT_TCG_THREAD=single, the default, runs both vCPUs on one host
# thread (QEMU's -accel tcg,thread=single); multi gives each its own (QEMU's
# default where the target supports it). QEMU 7.2's multi-threaded TCG can
# run a stale translation of a site the kernel patched (an int3 panic in
# about one boot in sixteen), which QEMU 8.1 fixed; with two guests at once,
# single is also the faster (Documentation/building.rst, "Two guests at
# once, and boots counted"; the figures: measurements.rst).
tcg_cpu=(-accel "tcg,thread=${MLX_EXT_TCG_THREAD:-single}" -cpu max,la57=off)
kvm_cpu=(-accel kvm -cpu host,la57=off)

# Nested KVM is broken on some hosts (ENVIRONMENT.md): use it only if a
# short boot under it reaches user space. The verdict is cached per QEMU
# and kernel.
accel=()
choose_accel() {
	case "${MLX_EXT_ACCEL:-auto}" in
	tcg) accel=("${tcg_cpu[@]}"); return ;;
	kvm) accel=("${kvm_cpu[@]}"); return ;;
	esac
	accel=("${tcg_cpu[@]}")
	[ -w /dev/kvm ] || return 0
	local verdict
	verdict=$MLX_EXT_CACHE/kvm-$(basename "$kdir")-$(qemu-system-x86_64 --version | head -n1 | tr -dc '0-9.')
	if [ ! -f "$verdict" ]; then
		say "vm: probing KVM (20 s at most)"
		qemu_args "${kvm_cpu[@]}" mlx_ext_vm=probe
		if timeout -k 2 20 "${qemu[@]}" </dev/null 2>&1 | grep -q "mlx_ext-vm: done"; then
			echo kvm >"$verdict"
		else
			echo tcg >"$verdict"
		fi
	fi
	if [ "$(cat "$verdict")" = kvm ]; then accel=("${kvm_cpu[@]}"); fi
}
choose_accel

if ((interactive)); then
	qemu_args "${accel[@]}" mlx_ext_vm=shell
	say "vm: interactive; exit the guest's shell to power it off. Console log $log"
	show_cmd
	"${qemu[@]}" 2>&1 | tee "$log"
	exit "${PIPESTATUS[0]}"
fi

qemu_args "${accel[@]}" "mlx_ext_vm=$name"
say "vm: timeout ${timeout}s, console log $log"
show_cmd
start=$SECONDS
set +e
# Shows the guest's output from its start marker on, and any crash before.
timeout -k 5 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' | tee "$log" |
	awk '/mlx_ext-vm: running/ { on = 1 } on || /Kernel panic|BUG:|Oops|WARNING:/ { print; fflush() }'
qemu_rc=${PIPESTATUS[0]}
set -e
say "vm: ran for $((SECONDS - start)) s"

plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$log" | cut -d. -f3 || true)
read -r pass failed skip < <(ktap_counts "$log")
fail() { say "vm: FAILED: $*"; echo "vm: $pass passed, $((failed + 1)) failed, $skip skipped"; exit 1; }
grep -q 'Kernel panic' "$log" && fail "the guest panicked (see $log)"
[ "$qemu_rc" = 124 ] && fail "timed out after ${timeout}s (see $log; MLX_EXT_VM_TIMEOUT sets the limit)"
grep -q 'mlx_ext-vm: done' "$log" || fail "the guest did not finish (QEMU exit $qemu_rc; see $log)"
# A kernel splat fails the run even when no test looked at the log.
splat=$(grep -m1 -E "$CONSOLE_SPLAT_RE" "$log" || true)
[ -z "$splat" ] || fail "the kernel reported: $splat (see $log)"
guest_rc=$(sed -nE 's/^mlx_ext-vm: done rc=([0-9]+)$/\1/p' "$log" | tail -n1)
if [ -z "$plan" ]; then
	# No KTAP: a demo or a developer's script; its exit status is ours.
	if [ "$guest_rc" != 0 ]; then
		say "vm: guest script $script exited with $guest_rc"
		exit "$guest_rc"
	fi
	say "vm: $name finished"
	exit 0
fi
[ $((pass + skip + failed)) = "$plan" ] || fail "KTAP plan 1..$plan but $((pass + skip + failed)) results"
echo "vm: $pass passed, $failed failed, $skip skipped"
[ "$failed" = 0 ]
