#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The VM tests of mlx_ext, against Soft-RoCE (rxe0). Prints KTAP.

. /tests/ktap.sh
. /tests/common.sh
. /tests/sim.sh
. /tests/api.sh
. /tests/attach.sh
. /tests/guid.sh
. /tests/guid_sa.sh
. /tests/guid_tree.sh
. /tests/guid_engine.sh
. /tests/guid_lifecycle.sh
. /tests/guid_vports.sh
. /tests/guid_pci.sh

KMEMLEAK=/sys/kernel/debug/kmemleak
DIR=$IB/rxe0/mlx_ext

setup() {
	add_rxe0 || { echo "cannot add rxe0"; return 1; }
	# Leaks found from here on are ours: mark everything older as seen.
	if [ -w $KMEMLEAK ]; then
		echo scan >$KMEMLEAK
		echo clear >$KMEMLEAK
	fi
}

# The VM runs the tests on both of its CPUs (-smp 2), so that a race
# between a work item and the thread that queued it can happen. Without
# ACPI the kernel found one CPU in QEMU's MP table, and every test ran on
# it: the simulator's SA then answered only once new_device had returned,
# which hid a lost GID-change event (rust/simulator/sa.rs, set_events).
test_vm_smp() {
	expect_eq "$(cat /sys/devices/system/cpu/online)" 0-1 "online CPUs"
}

test_load_sees_rxe0() {
	modprobe mlx_ext || return 1
	dmesg | grep -q "mlx_ext: rxe0: atomic_cap" || { echo "add callback did not log rxe0"; return 1; }
	[ -d $DIR ] || { echo "$DIR missing"; return 1; }
}

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

test_link_delete_removes_dir() {
	rdma link delete rxe0 || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rdma link delete"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	[ -d $DIR ] || { echo "$DIR not restored after re-adding rxe0"; return 1; }
	expect_eq "$(cat $DIR/atomic_cap) $(cat $DIR/masked_atomic_cap)" "hca none" "after re-add"
}

test_rmmod_with_device_present() {
	rmmod mlx_ext || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rmmod"; return 1; }
	[ -e $IB/rxe0 ] || { echo "rxe0 vanished with mlx_ext"; return 1; }
	modprobe mlx_ext || return 1
	[ -d $DIR ] || { echo "$DIR missing after reload"; return 1; }
}

test_load_unload_50_cycles() {
	rmmod mlx_ext || return 1
	# A reader races every removal against sysfs reads of the files.
	(while :; do cat $DIR/atomic_cap $DIR/masked_atomic_cap >/dev/null 2>&1; done) &
	reader=$!
	i=0 rc=0
	while [ $i -lt 50 ]; do
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
	# registered (the GUID tests' SA queries go through it later).
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

FAILSLAB=/sys/kernel/debug/failslab

# Prints "START END" of the kernel function NAME, END being the address of
# the next symbol; nothing if there is no such function.
kernel_function_range() {
	sort /proc/kallsyms | grep -A1 " [tT] $1\$" | head -n 2 | awk '{ printf "0x%s ", $1 }'
}

# Prints "START END" of mlx_ext's .text: from its address to the next
# section's (the stack-trace filter of fault injection wants a range).
module_text_range() {
	start=$(cat /sys/module/mlx_ext/sections/.text)
	# Addresses are 0x and 16 hex digits: sorted as text, they sort as numbers.
	end=$(cat /sys/module/mlx_ext/sections/.[!.]* | sort -u | grep -x -A1 "$start" | tail -n +2)
	echo "$start ${end:-0xffffffffffffffff}"
}

# Sets failslab up to fail, when asked with fail-nth, only allocations made
# with mlx_ext's code on the stack.
failslab_on_mlx_ext() {
	read -r start end <<EOF_RANGE
$(module_text_range)
EOF_RANGE
	echo "mlx_ext .text: $start..$end"
	echo N >$FAILSLAB/ignore-gfp-wait
	echo 0 >$FAILSLAB/verbose
	echo 32 >$FAILSLAB/stacktrace-depth
	echo "$start" >$FAILSLAB/require-start
	echo "$end" >$FAILSLAB/require-end
	# kmemleak's allocation of its own record of each object (in
	# __alloc_object) falls back to a pool when it fails: leave it out, so
	# that only mlx_ext's allocations count.
	read -r rstart rend <<EOF_RANGE
$(kernel_function_range __alloc_object)
EOF_RANGE
	if [ -n "$rend" ]; then
		echo "$rstart" >$FAILSLAB/reject-start
		echo "$rend" >$FAILSLAB/reject-end
	fi
	echo 0 >$FAILSLAB/probability
}

# Runs the shell command CMD in a task whose Nth allocation made with
# mlx_ext's code on the stack fails (failslab_on_mlx_ext's filter, and
# /proc/self/fail-nth, which counts the allocations of this one task; exec
# keeps the task). Returns CMD's status, and sets INJECTED to 1 when the
# failure was injected, 0 when CMD made fewer than N such allocations
# (failslab's `times`, set to 1 here, drops to 0 when it fails one).
fail_nth() {
	echo 1 >$FAILSLAB/times
	sh -c "echo $1 >/proc/self/fail-nth && exec $2"
	fail_nth_rc=$?
	INJECTED=$(( $(cat $FAILSLAB/times) == 0 ))
	return $fail_nth_rc
}

failslab_off() {
	echo 0 >$FAILSLAB/times
	echo 0 >$FAILSLAB/require-start
	echo 0xffffffffffffffff >$FAILSLAB/require-end
	echo 0 >$FAILSLAB/reject-start
	echo 0 >$FAILSLAB/reject-end
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

# The same while mlx_ext adds a simulated adapter with VFs, whose VF GUID
# tables (engine, work item, event handler, sysfs tree) take most of the
# allocations: each failure leaves the device without tables (or without
# mlx_ext at all), with a message, and never crashes, leaks (test_no_leaks)
# or splats; the tables come up once nothing fails. The tables take about a
# thousand allocations (a sysfs file each): the first 20 fail in turn, then
# one in 29, to the last.
test_guid_failslab_add() {
	[ -d $FAILSLAB ] || { echo "no $FAILSLAB"; return $KSFT_SKIP; }
	failslab_on_mlx_ext
	n=1 steps=0 rc=0 no_mlx_ext=0 no_tables=0 absorbed=0 t0=$(date +%s)
	while [ $steps -le 200 ]; do
		steps=$((steps + 1))
		fail_nth $n "echo '340 cx3 1 1' >$SIMBUS/new_device" ||
			{ echo "allocation $n: new_device failed"; rc=1; break; }
		[ -e $IB/mlxsim340 ] || { echo "allocation $n: mlxsim340 missing"; rc=1; break; }
		if [ $INJECTED = 0 ]; then
			[ -d $IB/mlxsim340/iov ] || { echo "no failure injected, yet no tables"; rc=1; }
			break
		fi
		if [ ! -d $IB/mlxsim340/mlx_ext ]; then
			no_mlx_ext=$((no_mlx_ext + 1))
		elif [ ! -d $IB/mlxsim340/iov ]; then
			no_tables=$((no_tables + 1))
		else
			absorbed=$((absorbed + 1))
		fi
		echo 340 >$SIMBUS/del_device || { rc=1; break; }
		if [ $n -lt 20 ]; then n=$((n + 1)); else n=$((n + 29)); fi
	done
	failslab_off
	echo "$((steps - 1)) allocations failed, up to the ${n}th, in $(($(date +%s) - t0)) s: $no_mlx_ext left no mlx_ext directory, $no_tables no VF GUID tables, $absorbed were absorbed"
	[ $rc = 0 ] || return 1
	[ $steps -le 200 ] || { echo "still failing after 200 steps"; return 1; }
	[ $no_tables -ge 30 ] || { echo "too few allocations of the tables reached"; return 1; }
	dmesg | grep -q "mlxsim340: no VF GUID tables" || { echo "no message for the missing tables"; return 1; }
	# The tables work: the SM granted VF1's base.
	wait_until 10 gid_is mlxsim340 2 $(sm_guid 340 2) || { echo "the tables never converged"; return 1; }
	echo 340 >$SIMBUS/del_device
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

test_kasan_active() {
	dmesg | grep -m1 "KernelAddressSanitizer initialized" || { echo "KASAN is not active"; return 1; }
}

test_no_leaks() {
	[ -w $KMEMLEAK ] || { echo "kmemleak not available"; return $KSFT_SKIP; }
	# The test ULP first: it holds mlx_ext.
	rmmod mlx_ext_test_ulp 2>/dev/null
	rmmod mlx_ext_sim 2>/dev/null
	rmmod mlx_ext || { echo "rmmod mlx_ext failed"; return 1; }
	# kmemleak reports objects older than 5 s only.
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	leaks=$(grep -c "unreferenced object" $KMEMLEAK)
	cat $KMEMLEAK | head -40
	modprobe mlx_ext
	expect_eq "$leaks" 0 "kmemleak unreferenced objects"
}

test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

setup || echo "# setup failed; the tests below will fail"
# mlx_ext_tests=a,b on the kernel command line (MLX_EXT_VM_APPEND) runs only
# test_a and test_b, after test_load_sees_rxe0.
only=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^mlx_ext_tests=//p' | tr ',' ' ')
if [ -n "$only" ]; then
	ktap_run test_load_sees_rxe0 $(for t in $only; do printf 'test_%s ' "$t"; done)
	exit
fi
ktap_run test_vm_smp test_load_sees_rxe0 test_sysfs_matches_ib_core test_sysfs_read_only \
	test_link_delete_removes_dir test_rmmod_with_device_present \
	test_load_unload_50_cycles test_atomics_selftest_matches_host \
	test_atomics_selftest_rejects_bad_input test_show_is_bounded test_layer_selftest test_rename_device \
	test_sysfs_file_open_across_rmmod test_debugfs_file_open_pins_module \
	test_failslab_add_path test_two_devices_in_any_order \
	test_sim_load test_sim_models test_sim_ulp_load test_sim_bad_control_input \
	test_sim_port_down_up test_sim_many_devices test_sim_atomics_match_host \
	test_sim_masked_refused test_sim_atomic_errors test_sim_fault_injection \
	test_sim_del_device_with_work_in_flight test_api_exact test_api_flag_rules \
	test_api_destroy_with_ops_in_flight test_api_emulation_faults test_api_no_atomics \
	test_api_driver_refusal_downgrades test_api_driver_lacks_opcodes test_api_abi_and_fence test_api_refusal_in_softirq_during_rename test_api_query_caps_across_removal test_api_sync_contexts \
	test_api_contention test_api_combining test_api_request_pool \
	test_api_request_pool_growth_fails \
	test_attach_refusals test_attach_exact test_attach_contention test_attach_group \
	test_attach_detach_with_ops_in_flight test_attach_rdma_cm_sample \
	test_attach_rdma_cm_device_removal \
	test_guid_tree_placement test_sim_sa_guidinfo test_sim_sa_programmed \
	test_guid_tree_split test_guid_table_size test_guid_initial_tables test_guid_gids_read_the_port test_guid_admin_writes test_guid_bad_writes \
	test_guid_backoff test_guid_sa_error_backoff test_guid_storm test_guid_events test_guid_removal_in_flight \
	test_guid_port_up_resends test_guid_port_up_ends_sa_backoff test_guid_switch test_sysfs_lock_class_per_group test_guid_switch_under_readers test_guid_vfs_change test_guid_retire test_guid_vports \
	test_guid_pci_vfs test_guid_pci_no_sriov test_guid_pci_teardown test_guid_failslab_pci \
	test_guid_failslab_add \
	test_sim_sa_port_events test_sim_sa_del_with_query_in_flight \
	test_sim_rmmod_with_devices test_kasan_active \
	test_no_leaks test_kernel_log_clean
