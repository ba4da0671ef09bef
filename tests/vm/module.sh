#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the module itself against Soft-RoCE (rxe0): loading and
# unloading with devices present, the capability record in sysfs and its
# permissions, device removal, renaming and a second device, files held
# open across rmmod, the debugfs self-tests of the arithmetic and of the
# ib layer, and failslab on the add path.

. /tests/lib/area.sh

ALL_TESTS="test_load_sees_rxe0 test_sysfs_matches_ib_core test_sysfs_read_only
	test_link_delete_removes_dir test_rmmod_with_device_present
	test_load_unload_20_cycles test_atomics_selftest_matches_host
	test_atomics_selftest_rejects_bad_input test_show_is_bounded test_layer_selftest
	test_rename_device test_sysfs_file_open_across_rmmod
	test_debugfs_file_open_pins_module test_failslab_add_path
	test_two_devices_in_any_order test_module_tools_in_a_plain_script"

DIR=$IB/rxe0/mlx_ext

setup() {
	stack_up
}

cleanup() {
	stack_down
}

# mlx_ext's add callback sees a device that was there before it loaded.
test_load_sees_rxe0() {
	rmmod mlx_ext || return 1
	[ ! -e $DIR ] || { echo "$DIR left after rmmod"; return 1; }
	n=$(dmesg | grep -c "mlx_ext: rxe0: atomic_cap")
	modprobe mlx_ext || return 1
	expect_eq $(($(dmesg | grep -c "mlx_ext: rxe0: atomic_cap") - n)) 1 "add callback's lines for rxe0" || return 1
	[ -d $DIR ] || { echo "$DIR missing"; return 1; }
}

# mlx_ext's directory holds exactly five files, and what they say of rxe0
# is what ib_core and rxe say of it.
test_sysfs_matches_ib_core() {
	# rxe_param.h: IB_ATOMIC_HCA; rxe sets no masked atomic capability.
	expect_eq "$(cat $DIR/atomic_cap)" hca atomic_cap || return 1
	expect_eq "$(cat $DIR/masked_atomic_cap)" none masked_atomic_cap || return 1
	# rxe posts CAS and FA: masked atomics are emulated, nothing to explain.
	expect_eq "$(cat $DIR/masked_atomic_mode)" emulated masked_atomic_mode || return 1
	expect_eq "$(cat $DIR/reason)" "" reason || return 1
	expect_eq "$(cat $DIR/vf_guid_tables)" off vf_guid_tables || return 1
	expect_eq "$(ls $DIR | tr '\n' ' ')" \
		"atomic_cap masked_atomic_cap masked_atomic_mode reason vf_guid_tables " files
}

# Every file but the VF GUID tables' switch (test_guid_switch).
test_sysfs_read_only() {
	for f in atomic_cap masked_atomic_cap masked_atomic_mode reason; do
		expect_eq "$(stat -c %a $DIR/$f)" 444 "mode of $f" || return 1
		if echo glob 2>/dev/null >$DIR/$f; then
			echo "write to $f succeeded"
			return 1
		fi
	done
	expect_eq "$(cat $DIR/atomic_cap)" hca "after writes"
}

# The directory goes with the device, and comes back, with the same
# values, when the device is added again.
test_link_delete_removes_dir() {
	rdma link delete rxe0 || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rdma link delete"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	[ -d $DIR ] || { echo "$DIR not restored after re-adding rxe0"; return 1; }
	expect_eq "$(cat $DIR/atomic_cap) $(cat $DIR/masked_atomic_cap)" "hca none" "after re-add"
}

# rmmod takes the directory and leaves rxe0; a reload makes it again.
test_rmmod_with_device_present() {
	rmmod mlx_ext || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rmmod"; return 1; }
	[ -e $IB/rxe0 ] || { echo "rxe0 vanished with mlx_ext"; return 1; }
	modprobe mlx_ext || return 1
	[ -d $DIR ] || { echo "$DIR missing after reload"; return 1; }
}

# 20 loads and unloads under a reader of the files: every cycle reads hca
# and leaves no directory behind.
test_load_unload_20_cycles() {
	rmmod mlx_ext || return 1
	# A reader races every removal against sysfs reads of the files.
	(while :; do cat $DIR/atomic_cap $DIR/masked_atomic_cap >/dev/null 2>&1; done) &
	reader=$!
	i=0 rc=0
	while [ $i -lt 20 ]; do
		modprobe mlx_ext || { echo "load $i failed"; rc=1; break; }
		v=$(cat $DIR/atomic_cap) || { rc=1; break; }
		[ "$v" = hca ] || { echo "cycle $i: atomic_cap '$v'"; rc=1; break; }
		rmmod mlx_ext || { echo "unload $i failed"; rc=1; break; }
		[ ! -e $DIR ] || { echo "cycle $i: $DIR left behind"; rc=1; break; }
		i=$((i + 1))
	done
	kill $reader
	wait $reader 2>/dev/null
	echo "$i cycles"
	modprobe mlx_ext
	return $rc
}

SELFTEST=/sys/kernel/debug/mlx_ext/atomics_selftest

# The module's compiled masked-atomics arithmetic against the host's
# bit-serial reference: the host wrote "SEED COUNT DIGEST" lines to
# /extra/atomics_digests (scripts/check.sh).
test_atomics_selftest_matches_host() {
	[ -s /extra/atomics_digests ] || { echo "no host digests in /extra"; return 1; }
	cases=0
	while read -r seed count digest; do
		echo "$seed $count" >$SELFTEST || return 1
		expect_eq "$(cat $SELFTEST)" "$seed $count $digest" "seed $seed" || return 1
		cases=$((cases + count))
	done </extra/atomics_digests
	echo "$cases cases x 4 operations agree with the host's reference"
	[ $cases -ge 100000 ]
}

# Malformed writes to the self-test are refused and change nothing.
test_atomics_selftest_rejects_bad_input() {
	echo "7 1000" >$SELFTEST || return 1
	before=$(cat $SELFTEST)
	for bad in "" "abc" "1" "1 2 3" "1 0" "1 1000001" "-1 5" "1  5" "1 5x" "0x1 5" " 1 5"; do
		if printf '%s\n' "$bad" >$SELFTEST 2>/dev/null; then
			echo "write of '$bad' was accepted"
			return 1
		fi
	done
	if printf '1 5\n\n' >$SELFTEST 2>/dev/null; then echo "two newlines accepted"; return 1; fi
	expect_eq "$(cat $SELFTEST)" "$before" "state after refused writes"
}

FILL=/sys/kernel/debug/mlx_ext/show_fill

# A show may write a page less one byte (sysfs takes a full page for an
# overflow): the ib layer's ShowBuf refuses the byte that would fill it.
test_show_is_bounded() {
	echo 4095 >$FILL || return 1
	expect_eq "$(cat $FILL | wc -c)" 4095 "bytes shown for 4095" || return 1
	expect_eq "$(cat $FILL | tail -c 1 | od -An -c | tr -d ' ')" '\n' "last byte" || return 1
	echo 4096 >$FILL || return 1
	if out=$(cat $FILL 2>&1); then
		echo "a show of 4096 bytes succeeded (${#out} bytes)"
		return 1
	fi
	echo "4096: $out"
	if dmesg | grep -q "bad count"; then echo "sysfs saw a full page"; return 1; fi
	echo 0 >$FILL
	expect_eq "$(cat $FILL | wc -c)" 0 "bytes shown for 0"
}

# Rules of the ib layer no other path reaches (debugfs layer_selftest): its
# one-per-module registrations refuse a second one instead of
# re-initialising the first (mlx_ext's ib_sa client, a static
# ib_sa_client whose query count a second ib_sa_register_client would
# reset while queries hold it); and IRQ-safe spinlock guards released out
# of order keep interrupts off until the last one goes (with
# spin_unlock_irqrestore the outer guard's release turned them on).
test_layer_selftest() {
	want="sa_client -16 irq_locks_out_of_order 1 1 "
	expect_eq "$(cat /sys/kernel/debug/mlx_ext/layer_selftest | tr '\n' ' ')" "$want" "first read" || return 1
	# The refusal changed nothing: the module's client is still the one
	# registered, and a second attempt is refused the same way.
	expect_eq "$(cat /sys/kernel/debug/mlx_ext/layer_selftest | tr '\n' ' ')" "$want" "again"
}

# The name inside an ib_device may only be read under ib_core's lock: the ib
# layer keeps a copy, refreshed by the client's rename callback.
test_rename_device() {
	rdma dev set rxe0 name mlxren0 || return 1
	rc=0
	[ -d $IB/mlxren0/mlx_ext ] || { echo "no mlx_ext below the new name"; rc=1; }
	[ $rc = 0 ] && expect_eq "$(cat $IB/mlxren0/mlx_ext/atomic_cap)" hca "atomic_cap after the rename" || rc=1
	dmesg | grep -q "mlx_ext: mlxren0: device renamed" || { echo "the rename was not logged with the new name"; rc=1; }
	rmmod mlx_ext || rc=1
	dmesg | grep -q "mlx_ext: mlxren0: removed" || { echo "the removal was not logged with the new name"; rc=1; }
	rdma dev set mlxren0 name rxe0 || return 1
	modprobe mlx_ext || return 1
	[ -d $DIR ] || { echo "$DIR missing after renaming back"; return 1; }
	return $rc
}

# A sysfs file open across rmmod: the unload goes ahead, reads fail cleanly.
test_sysfs_file_open_across_rmmod() {
	exec 3<$DIR/atomic_cap || return 1
	if ! rmmod mlx_ext; then
		exec 3<&-
		echo "rmmod refused while a sysfs file was open"
		return 1
	fi
	rc=0
	if out=$(cat <&3 2>&1); then echo "read after rmmod succeeded: '$out'"; rc=1; fi
	echo "read after rmmod: $out"
	exec 3<&-
	modprobe mlx_ext || return 1
	expect_eq "$(cat $DIR/atomic_cap)" hca "after reload" || return 1
	return $rc
}

# A debugfs file held open pins the module (fops.owner), as it must.
test_debugfs_file_open_pins_module() {
	exec 3<$SELFTEST || return 1
	if rmmod mlx_ext 2>/dev/null; then
		exec 3<&-
		modprobe mlx_ext
		echo "rmmod succeeded while a debugfs file was open"
		return 1
	fi
	exec 3<&-
	rmmod mlx_ext || { echo "rmmod refused after the close"; return 1; }
	modprobe mlx_ext
}

# Fails each allocation made with mlx_ext's code on the stack while ib_core
# adds a device, in turn (fail-nth, filtered by the stack trace): the device
# comes up without an mlx_ext directory (or, where the allocation was
# kmemleak's own, which falls back to its pool, with one), nothing leaks or
# splats, and the device and the module work afterwards. The loop ends at
# the first step where no failure was injected (fail_nth), past the last
# allocation.
test_failslab_add_path() {
	[ -d $FAILSLAB ] || { echo "no $FAILSLAB"; return $KSFT_SKIP; }
	rdma link delete rxe0 || return 1
	failslab_on_mlx_ext
	n=1 rc=0 refused=0 absorbed=0 t0=$(date +%s)
	while [ $n -le 300 ]; do
		fail_nth $n "rdma link add rxe0 type rxe netdev eth0" ||
			{ echo "allocation $n: rdma link add failed"; rc=1; break; }
		[ -e $IB/rxe0 ] || { echo "allocation $n: rxe0 missing"; rc=1; break; }
		if [ $INJECTED = 0 ]; then
			# Nothing left to fail: the add went through.
			[ -d $DIR ] || { echo "no failure injected, yet no $DIR"; rc=1; }
			break
		fi
		if [ -d $DIR ]; then absorbed=$((absorbed + 1)); else refused=$((refused + 1)); fi
		rdma link delete rxe0 || { rc=1; break; }
		n=$((n + 1))
	done
	failslab_off
	echo "$((n - 1)) allocations failed in turn in $(($(date +%s) - t0)) s: $refused made the add fail, $absorbed were absorbed"
	[ $rc = 0 ] || return 1
	[ $refused -ge 5 ] || { echo "too few allocations reached: is the filter range right?"; return 1; }
	expect_eq "$(cat $DIR/atomic_cap)" hca "after the last step" || return 1
	rmmod mlx_ext && modprobe mlx_ext || return 1
	expect_eq "$(cat $DIR/atomic_cap)" hca "after a reload"
}

# Prints the RDMA devices that have an mlx_ext directory.
reported() {
	for d in $IB/*; do [ -d "$d/mlx_ext" ] && printf '%s ' "$(basename "$d")"; done
	echo
}

# rxe1 is on the VM's second NIC, eth1.
test_two_devices_in_any_order() {
	rdma link add rxe1 type rxe netdev eth1 || return 1
	expect_eq "$(reported)" "rxe0 rxe1 " "rxe1 added" || return 1
	rdma link delete rxe0 || return 1
	expect_eq "$(reported)" "rxe1 " "rxe0 removed first" || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	expect_eq "$(reported)" "rxe0 rxe1 " "rxe0 back" || return 1
	rmmod mlx_ext || return 1
	expect_eq "$(reported)" "" "after rmmod" || return 1
	modprobe mlx_ext || return 1
	expect_eq "$(reported)" "rxe0 rxe1 " "after modprobe with two devices" || return 1
	expect_eq "$(cat $IB/rxe1/mlx_ext/atomic_cap) $(cat $IB/rxe1/mlx_ext/masked_atomic_cap)" \
		"hca none" "rxe1's caps" || return 1
	rdma link delete rxe1 || return 1
	expect_eq "$(reported)" "rxe0 " "rxe1 removed second" || return 1
	rdma link add rxe1 type rxe netdev eth1 || return 1
	rmmod mlx_ext || return 1
	rdma link delete rxe1 || return 1
	rdma link delete rxe0 || return 1
	modprobe mlx_ext || return 1
	expect_eq "$(reported)" "" "loaded with no device" || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	expect_eq "$(reported)" "rxe0 " "rxe0 added after the load"
}

# A script that sources nothing, as one given to make vm-run or typed in
# make shell, gets kmod's module tools, as on a distribution: busybox's
# shell runs its own applet of a command's name before it looks at PATH
# (scripts/busybox-unapplet.py), and busybox's modprobe makes the kernel
# log "Invalid ELF header magic" for each compressed module it loads. Here
# ib_umad (a module in both kernels, kernel/common.config; compressed on
# 7.x) is loaded and removed, and mlx_ext reloaded: each tool is a file on
# PATH (kmod), and the log has no such line.
test_module_tools_in_a_plain_script() {
	cat >/tmp/plain.sh <<'EOF_PLAIN'
for t in modprobe insmod rmmod lsmod modinfo; do type $t; done
modprobe ib_umad && lsmod | grep -q '^ib_umad ' && modprobe -r ib_umad || exit 1
lsmod | grep -q '^ib_umad ' && exit 1
rmmod mlx_ext && modprobe mlx_ext && modinfo mlx_ext >/dev/null
EOF_PLAIN
	n=$(dmesg | grep -c 'Invalid ELF header')
	out=$(sh /tmp/plain.sh 2>&1)
	rc=$?
	echo "$out"
	[ $rc = 0 ] || { echo "the plain script failed ($rc)"; return 1; }
	for t in modprobe insmod rmmod lsmod modinfo; do
		echo "$out" | grep -q "^$t is /" || { echo "$t is not a file on PATH"; return 1; }
	done
	expect_eq "$(readlink /bin/modprobe)" ../usr/bin/kmod "/bin/modprobe" || return 1
	expect_eq "$(dmesg | grep -c 'Invalid ELF header')" "$n" "'Invalid ELF header' lines" || return 1
	[ -d $DIR ] || { echo "$DIR missing after the reload"; return 1; }
}

ktap_main "$@"
