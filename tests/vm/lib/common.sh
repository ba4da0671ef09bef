# SPDX-License-Identifier: GPL-2.0
# Set-up shared by the guest scripts.

IB=/sys/class/infiniband

# What in the kernel log means something went wrong (a splat, a lockdep or
# kmemleak report, a refcount or kobject misuse).
KERNEL_SPLAT='WARNING:|BUG[: ]|Oops|refcount_t|general protection|Call Trace|UBSAN|possible (circular|recursive) locking|unreferenced object|kobject.*(not initialized|already)|module verification failed|Invalid ELF header'

# lockdep_live: whether lockdep still checks (it turns itself off for good
# after its first report of any kind, and KASAN reports turn it off too).
# A test that relies on lockdep checks it before and after: a report in
# between, whatever its headline, leaves it off.
lockdep_live() {
	grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats 2>/dev/null
}

# kernel_lacks NAME: true if the booted kernel was built without
# CONFIG_NAME (its .config is /kernel.config, scripts/mkinitramfs.sh), so
# that a test of a debug option skips on the 6.12 production-config kernel
# (make check-6.12) and still fails on a debug kernel that lost it. False
# when there is no /kernel.config: the test then runs.
kernel_lacks() {
	[ -f /kernel.config ] && ! grep -qx "CONFIG_$1=y" /kernel.config
}

# The WARNING: lines of splats a test provoked on purpose and checked
# (expect_splat), one per line: kernel_splats leaves them out, and the
# "Call Trace:" line of each (the next line that matches KERNEL_SPLAT). A
# splat's WARNING: line (with its time, file, line and function) is unique
# to it, and every other splat still shows its own lines.
EXPECTED_SPLATS=/tmp/expected-splats

# Prints the kernel log lines that match KERNEL_SPLAT, but those of the
# splats a test expected (expect_splat).
kernel_splats() {
	touch $EXPECTED_SPLATS
	dmesg | awk -v expected=$EXPECTED_SPLATS -v re="$KERNEL_SPLAT" '
		BEGIN { while ((getline l <expected) > 0) want[l] = 1 }
		$0 in want { skip = 1; next }
		$0 ~ re {
			if (skip && $0 ~ /Call Trace/) { skip = 0; next }
			skip = 0
			print
		}'
}

# expect_splat LINE...: the WARNING: lines of the splats a test provoked on
# purpose, which kernel_splats then leaves out with their call traces (the
# whole log stays for the tests after).
expect_splat() {
	for l in "$@"; do
		printf '%s\n' "$l" >>$EXPECTED_SPLATS
	done
}

# Loads rdma_rxe and adds Soft-RoCE device rxe0 on eth0.
add_rxe0() {
	modprobe rdma_rxe || return 1
	[ -e $IB/rxe0 ] || rdma link add rxe0 type rxe netdev eth0 || return 1
	[ -e $IB/rxe0 ]
}

# counters_run COUNT: loads the rdma_cm sample (samples/mlx_ext_counters)
# over rxe0's address with COUNT additions per counter, checks that it
# logged every counter at COUNT and no wrong response, and unloads it.
counters_run() {
	ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
	modprobe mlx_ext_counters addr=10.0.2.15 count="$1" || return 1
	dmesg | grep 'mlx_ext_counters:' | tail -n1
	dmesg | grep -q "mlx_ext_counters: 4 threads x $1 masked fetch-and-adds: counters $1 $1 $1 $1, 0 wrong responses\$" ||
		{ rmmod mlx_ext_counters; return 1; }
	rmmod mlx_ext_counters
}

# Prints what mlx_ext reports for each RDMA device.
report() {
	for dev in $IB/*; do
		[ -d "$dev/mlx_ext" ] || continue
		echo "$(basename "$dev"):"
		for f in "$dev"/mlx_ext/*; do
			[ -f "$f" ] && printf '  %-20s %s\n' "$(basename "$f")" "$(cat "$f")"
		done
	done
}

# wait_until SECONDS CMD...: runs CMD every 0.1 s until it succeeds; fails
# after SECONDS.
# (Its counter has a name of its own: CMD may be a helper with an n of its
# own, and shell variables are global.)
wait_until() {
	wait_until_n=$(($1 * 10))
	shift
	while [ $wait_until_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		wait_until_n=$((wait_until_n - 1))
	done
	return 1
}

# cmdline_list NAME: the comma-separated list NAME=a,b of the kernel
# command line (MLX_EXT_VM_APPEND), as "a b"; nothing if it is not there.
cmdline_list() {
	tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tr ',' ' '
}
