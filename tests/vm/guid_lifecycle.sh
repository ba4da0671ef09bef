#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the VF GUID tables' lifetime: removal with a request in
# flight, the vf_guid_tables switch (also under readers), the VF count
# changing, and the GUIDs of a table that goes deleted at the SM
# (Documentation/vf-guids.rst).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_removal_in_flight test_guid_switch test_guid_switch_under_readers
	test_guid_vfs_change test_guid_retire"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# Removal and rmmod with SA queries in flight and work pending: every query
# ends, nothing leaks (test_no_leaks), nothing splats.
test_guid_removal_in_flight() {
	sim_new "329 cx3 2 5" || return 1
	d=mlxsim329
	wait_until 10 gid_is $d 103 $(sm_guid 329 103) || { echo "start never converged"; return 1; }
	echo silent >$SIMDBG/$d/sa1 && echo "decline 7 9" >$SIMDBG/$d/sa2 || return 1
	for e in 4 5 6 7; do echo $e >$IB/$d/iov/ports/1/admin_guids/$e; echo $e >$IB/$d/iov/ports/2/admin_guids/$e; done
	sleep 0.3
	sim_del 329 || return 1
	[ ! -e $IB/$d ] || { echo "$d still there"; return 1; }
	sim_new "330 cx3 1 5" || return 1
	echo silent >$SIMDBG/mlxsim330/sa1
	echo 9 >$IB/mlxsim330/iov/ports/1/admin_guids/9
	sleep 0.3
	ulp_loaded=0
	[ -e /sys/module/mlx_ext_test_ulp ] && ulp_loaded=1 && rmmod mlx_ext_test_ulp
	rmmod mlx_ext || return 1
	[ ! -e $IB/mlxsim330/iov ] || { echo "the tree outlived mlx_ext"; return 1; }
	modprobe mlx_ext || return 1
	[ $ulp_loaded = 0 ] || modprobe mlx_ext_test_ulp || return 1
	[ -d $IB/mlxsim330/iov ] || { echo "no tree after reload"; return 1; }
	sim_del 330
}

# The switch removes the iov tree while its files are being read, each by a
# reader that preads it in a tight loop (readloop, ~50,000 shows a second):
# the store returns with the tree gone, every reader ends with ENODEV, and
# lockdep says nothing. A read never fails otherwise, also while ib_core
# refreshes its GID cache after the grants that follow each on (gids/1 read
# ENOENT then, seen red on two CPUs). The path the review predicted a report on is this
# one: the store holds its own file's active reference (kernfs) while
# kobject_del drains the tree's files, and kernfs tells lockdep about a
# drain only when a reader is still inside that file when its turn comes
# (fs/kernfs/dir.c, kernfs_drain(): it returns early at the bias;
# __kernfs_remove() deactivates every file first, then drains them one by
# one). It is narrow: these readers did not reach it in 20 removals with
# one class for all files. With a class per kind of directory
# (test_sysfs_lock_class_per_group) it would read as the dependency it is,
# not as recursion.
test_guid_switch_under_readers() {
	if kernel_lacks PROVE_LOCKING; then
		echo "the kernel has no lockdep (CONFIG_PROVE_LOCKING)"
		return $KSFT_SKIP
	fi
	lockdep_live || { echo "lockdep was off before the test"; return 1; }
	sim_new "351 cx3 1 2" || return 1
	S=$IB/mlxsim351/mlx_ext/vf_guid_tables I=$IB/mlxsim351/iov
	for round in 1 2 3 4 5; do
		[ -d $I ] || { echo "no tree in round $round"; return 1; }
		fn=$(ls $I | grep -v '^ports$' | tail -n1)
		pids= n=0
		rm -f /tmp/readloop.*
		for f in ports/1/admin_guids/1 ports/1/gids/1 $fn/ports/1/state $fn/ports/1/gid_idx/0; do
			n=$((n + 1))
			readloop $I/$f 20000 >/tmp/readloop.$n &
			pids="$pids $!"
		done
		# Removed only once every reader has its file open (on two
		# CPUs under TCG a reader can take more than 0.5 s to get there).
		wait_until 10 eval '[ "$(cat /tmp/readloop.[1-4] | grep -c "^open$")" = 4 ]' ||
			{ echo "the readers never opened their files in round $round"; kill $pids; return 1; }
		sleep 0.2
		echo off >$S || { kill $pids; return 1; }
		[ ! -e $I ] || { echo "the tree outlived off"; kill $pids; return 1; }
		# Each reader ends at the removal (ENODEV, exit 0), well before
		# its 20 s (exit 3), and had no other error (exit 2).
		for p in $pids; do wait $p || { echo "a reader failed in round $round ($?)"; kill $pids 2>/dev/null; return 1; }; done
		echo on >$S || return 1
	done
	lockdep_live || { echo "lockdep reported: $(dmesg | grep -m1 -A3 -E '^WARNING: ')"; return 1; }
	sim_del 351
}

# The device's switch, mlx_ext/vf_guid_tables (on by default on a simulated
# adapter, off on a real PCI PF): off removes the tree at once and nothing
# more is sent; on makes it again, from the initial tables. Malformed writes
# are -EINVAL and change nothing; a non-root write is refused; a device that
# could never have tables refuses "on" (rxe0, RoCE) but takes "off"; one
# with no VFs yet, or too many, takes "on" and has no tree.
test_guid_switch() {
	S0=$IB/rxe0/mlx_ext/vf_guid_tables
	expect_eq "$(cat $S0) $(stat -c %a $S0)" "off 644" "rxe0's switch" || return 1
	expect_eq "$(sim_write $S0 on)" "Operation not supported" "rxe0: on" || return 1
	expect_eq "$(sim_write $S0 off)" ok "rxe0: off" || return 1
	expect_eq "$(cat $S0)" off "rxe0's switch after" || return 1
	dmesg | grep -q "rxe0: vf_guid_tables: cannot be switched on: the port is not InfiniBand" ||
		{ echo "no message for rxe0"; return 1; }
	[ ! -e $IB/rxe0/iov ] || { echo "rxe0 has a tree"; return 1; }
	sim_new "350 cx3 1 5" || return 1
	d=mlxsim350 S=$IB/mlxsim350/mlx_ext/vf_guid_tables I=$IB/mlxsim350/iov
	expect_eq "$(cat $S)" on "a sim device's switch" || return 1
	wait_until 10 gid_is $d 103 $(sm_guid 350 103) || { echo "start never converged"; return 1; }
	echo 0x77 >$I/ports/1/admin_guids/9 && wait_until 5 gid_is $d 9 0000000000000077 || return 1
	for bad in "\n" On ON yes y 2 01 " on" "on " "on\n\n" "off\x00" true -1 "of" "onoff"; do
		got=$(sim_write $S "$bad")
		[ "$got" = "Invalid argument" ] || { echo "'$bad' gave '$got'"; return 1; }
	done
	grep -q '^nobody:' /etc/passwd 2>/dev/null ||
		{ mkdir -p /etc && echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd; }
	out=$(su nobody -c "echo off >$S" 2>&1) && { echo "a non-root write succeeded"; return 1; }
	case "$out" in *"Permission denied"*) ;; *) echo "non-root refused for another reason: $out"; return 1 ;; esac
	expect_eq "$(cat $S) $(cat $I/ports/1/admin_guids/9)" "on 0000000000000077" "after bad writes" || return 1
	# Off, with a query in flight: the tree is gone when the write returns.
	echo silent >$SIMDBG/$d/sa1 && echo 0x78 >$I/ports/1/admin_guids/10 || return 1
	sleep 0.2
	echo off >$S || return 1
	[ ! -e $I ] || { echo "the tree outlived off"; return 1; }
	expect_eq "$(cat $S)" off "switched off" || return 1
	echo accept >$SIMDBG/$d/sa1 && echo clear_log >$SIMDBG/$d/sa1
	sleep 1.5
	expect_eq "$(sa_log $d 1 | awk '$4 == 30' | wc -l)" 0 "requests while off" || return 1
	expect_eq "$(sim_write $S off)" ok "off again" || return 1
	# On: the initial tables again (the admin values went with the tree).
	echo on >$S || return 1
	[ -d $I ] || { echo "no tree after on"; return 1; }
	wait_until 10 gid_is $d 103 $(sm_guid 350 103) || { echo "never converged after on"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/9 $I/ports/1/admin_guids/10 | tr '\n' ' ')" \
		"ffffffffffffffff ffffffffffffffff " "admin values after on" || return 1
	log=$(dmesg | grep 'mlxsim350: ')
	echo "$log" | grep -q "vf_guid_tables switched off" && echo "$log" | grep -q "vf_guid_tables switched on" ||
		{ echo "no messages for the switch"; return 1; }
	echo "$log" | grep -q "VF GUID tables for 5 VFs removed" || { echo "no message for the removal"; return 1; }
	# Off and on racing admin writes and the device's removal.
	(for i in $(seq 20); do echo $i >$I/ports/1/admin_guids/$((i + 3)); done) 2>/dev/null &
	(for i in 1 2 3 4 5; do echo off >$S; echo on >$S; done) &
	wait
	expect_eq "$(cat $S)" on "after the race" || return 1
	(for i in 1 2 3 4 5 6 7 8; do echo off >$S; echo on >$S; done) 2>/dev/null &
	sleep 0.1
	sim_del 350 || return 1
	wait
	# No VFs yet: on is kept, there is no tree; too many VFs: the same.
	sim_new "351 cx3 1 0" && sim_new "352 cx3 1 127" || return 1
	for x in 351 352; do
		echo off >$IB/mlxsim$x/mlx_ext/vf_guid_tables && echo on >$IB/mlxsim$x/mlx_ext/vf_guid_tables ||
			{ echo "mlxsim$x refused the switch"; return 1; }
		[ ! -e $IB/mlxsim$x/iov ] || { echo "mlxsim$x has a tree"; return 1; }
	done
	sim_del 351; sim_del 352
}

# The number of VFs changes at run time (the simulated PF's sriov_numvfs,
# under the PCI rules: a new number only from 0): the tree is removed with
# the VFs, with every admin value, and made again with the new split, from
# the initial tables. Errors change nothing; a switched off device gets no
# tree from a change, and its tree comes with the switch; a change with
# queries in flight, one just before rmmod, and changes racing the device's
# removal end cleanly.
test_guid_vfs_change() {
	sim_new "353 cx3 1 5" || return 1
	d=mlxsim353 N=$(bus_numvfs 353) I=$IB/mlxsim353/iov S=$IB/mlxsim353/mlx_ext/vf_guid_tables
	expect_eq "$(cat $N) $(cat $SIMBUS/devices/mlxsim353/sriov_totalvfs) $(stat -c %a $N)" "5 255 644" \
		"sriov_numvfs, sriov_totalvfs" || return 1
	wait_until 10 gid_is $d 103 $(sm_guid 353 103) || { echo "start never converged"; return 1; }
	echo 0x55 >$I/ports/1/admin_guids/30 && wait_until 5 gid_is $d 30 0000000000000055 || return 1
	expect_eq "$(sim_write $N 3)" "Device or resource busy" "5 to 3" || return 1
	expect_eq "$(sim_write $N 256)" "Numerical result out of range" "256" || return 1
	for bad in x "\n" -1 "3 4" 0x 1.5; do
		expect_eq "$(sim_write $N "$bad")" "Invalid argument" "'$bad'" || return 1
	done
	expect_eq "$(sim_write $N 5)" ok "the same number" || return 1
	expect_eq "$(cat $N) $(cat $I/ports/1/admin_guids/30)" "5 0000000000000055" "after refused writes" || return 1
	expect_eq "$(split_of $d)" "2 26 25 25 25 25 " "split after refused writes" || return 1
	# To 0: the tree goes; to 3: a new one, from the initial tables.
	echo 0 >$N || return 1
	wait_until 5 eval "[ ! -e $I ]" || { echo "the tree outlived its VFs"; return 1; }
	echo clear_log >$SIMDBG/$d/sa1
	echo 3 >$N || return 1
	wait_until 5 eval "[ -d $I/ports/1/admin_guids ]" || { echo "no tree for 3 VFs"; return 1; }
	expect_eq "$(split_of $d)" "2 42 42 42 " "split of 3 VFs" || return 1
	expect_eq "$(fn_dirs $d | tr '\n' ' ')" "0161:00:00.0 0161:00:00.1 0161:00:00.2 0161:00:00.3 " \
		"functions" || return 1
	wait_until 10 gid_is $d 86 $(sm_guid 353 86) || { echo "3 VFs never converged"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/30) $(cat $I/ports/1/admin_guids/44)" \
		"ffffffffffffffff $(sm_guid 353 44)" "admin values after the change" || return 1
	expect_eq "$(sa_log $d 1 | awk '$4 == 30 {print $3, $5, $6}' | tr '\n' ';')" \
		"2 0 4;2 5 10;2 10 40;" "what the SA was asked for 3 VFs" || return 1
	log=$(dmesg | grep 'mlxsim353: ')
	echo "$log" | grep -q "VF GUID tables for 5 VFs removed" &&
		echo "$log" | grep -q "port 1: VF GUID table of 128 GUIDs for 3 VFs: the PF has 2, VF1 42, VF3 42" ||
		{ echo "no messages for the change"; return 1; }
	# Switched off: a change makes no tree; on: the tree of the new number.
	echo off >$S && echo 0 >$N && echo 126 >$N || return 1
	sleep 0.5
	[ ! -e $I ] || { echo "a tree while switched off"; return 1; }
	echo on >$S || return 1
	expect_eq "$(split_of $d | wc -w)" 127 "126 VFs after on" || return 1
	# To 0 with queries in flight.
	echo silent >$SIMDBG/$d/sa1
	for e in 4 5 6; do echo $e >$I/ports/1/admin_guids/$e; done
	sleep 0.2
	echo 0 >$N || return 1
	wait_until 5 eval "[ ! -e $I ]" || { echo "the tree outlived its VFs"; return 1; }
	echo accept >$SIMDBG/$d/sa1
	# A change made just before mlx_ext goes (its rebuild may still be
	# pending, and is then cancelled): the new number's tree comes with the
	# reload.
	ulp_loaded=0
	[ -e /sys/module/mlx_ext_test_ulp ] && ulp_loaded=1 && rmmod mlx_ext_test_ulp
	echo 2 >$N && rmmod mlx_ext || return 1
	[ ! -e $I ] || { echo "the tree outlived mlx_ext"; return 1; }
	modprobe mlx_ext || return 1
	[ $ulp_loaded = 0 ] || modprobe mlx_ext_test_ulp || return 1
	expect_eq "$(split_of $d)" "2 63 63 " "split of 2 VFs after the reload" || return 1
	echo 0 >$N || return 1
	# Changes racing the removal of the device.
	echo 5 >$N || return 1
	(for i in $(seq 10); do echo 0 >$N; echo 5 >$N; done 2>/dev/null) &
	sleep 0.3
	sim_del 353 || return 1
	wait
	[ ! -e $IB/$d ] || { echo "$d still there"; return 1; }
}

# held_gone DEV ENTRIES...: whether the port's GID table (ib_core's copy of
# what the simulated SM programmed) holds no GUID at any of ENTRIES.
held_gone() {
	d=$1
	shift
	for n in "$@"; do [ "$(gid $d 1 $n 0000000000000000)" = 0000000000000000 ] || return 1; done
}

# A table that goes deletes its GUIDs at the SM first (Engine::retire), as
# mlx4 deletes a VF's GUID when the VF shuts down: at the switch's off, at
# a change of the number of VFs, at rmmod and at the device's removal. One
# DELETE per record that holds a GUID, with exactly those entries, answered
# before the tree is gone; the port's GID table is empty but for entry 0.
# Admin writes meanwhile are refused (ENODEV); an SA that only fails gets
# the first try and one more, and the wait ends at 2 s with a message; a
# port whose link is down is not waited for.
test_guid_retire() {
	sim_new "357 cx3 1 5" || return 1
	d=mlxsim357 I=$IB/mlxsim357/iov S=$IB/mlxsim357/mlx_ext/vf_guid_tables N=$(bus_numvfs 357)
	ctl=$SIMDBG/mlxsim357/sa1 held="2 9 28 53 78 103" want="0 4 0;1 2 0;3 10 0;6 20 0;9 40 0;12 80 0;"
	port0=$(port_gid $d 1 0)
	converge() {
		wait_until 10 gid_is $d 103 $(sm_guid 357 103) || { echo "$1: never converged"; return 1; }
		echo 0x77 >$I/ports/1/admin_guids/9 && wait_until 5 gid_is $d 9 0000000000000077 || return 1
		for n in $held; do
			wait_until 2 eval "! port_gid_is $d 1 $n 0000000000000000" ||
				{ echo "$1: entry $n not programmed"; return 1; }
		done
		echo clear_log >$ctl
	}
	converge "start" || return 1
	# Off: answered before the write returns.
	echo off >$S || return 1
	[ ! -e $I ] || { echo "the tree outlived off"; return 1; }
	expect_eq "$(deletes $d)" "$want" "the deletes at off" || return 1
	held_gone $d $held || { echo "GUIDs left on the port after off"; return 1; }
	expect_eq "$(port_gid $d 1 0)" "$port0" "entry 0 after off" || return 1
	# A change of the number of VFs: answered before the tree goes.
	echo on >$S && converge "on" || return 1
	echo 0 >$N || return 1
	wait_until 5 eval "[ ! -e $I ]" || { echo "the tree outlived its VFs"; return 1; }
	expect_eq "$(deletes $d)" "$want" "the deletes at 5 VFs to 0" || return 1
	held_gone $d $held || { echo "GUIDs left on the port after 5 VFs to 0"; return 1; }
	# rmmod: answered before it returns.
	echo 5 >$N && converge "5 VFs again" || return 1
	ulp_loaded=0
	[ -e /sys/module/mlx_ext_test_ulp ] && ulp_loaded=1 && rmmod mlx_ext_test_ulp
	rmmod mlx_ext || return 1
	expect_eq "$(deletes $d)" "$want" "the deletes at rmmod" || return 1
	held_gone $d $held || { echo "GUIDs left on the port after rmmod"; return 1; }
	modprobe mlx_ext || return 1
	[ $ulp_loaded = 0 ] || modprobe mlx_ext_test_ulp || return 1
	# An SA that only fails, and an admin write while the table goes.
	converge "reload" || return 1
	echo "status 256" >$ctl || return 1
	echo off >$S &
	off=$!
	sleep 0.5
	expect_eq "$(cat $I/ports/1/admin_guids/9)" ffffffffffffffff "admin_guids/9 while it goes" || return 1
	expect_eq "$(sim_write $I/ports/1/admin_guids/12 5)" "No such device" "a write while it goes" || return 1
	wait $off || { echo "off failed"; return 1; }
	expect_eq "$(deletes $d)" "0 4 100;1 2 100;" "the deletes an SA that fails gets" || return 1
	dmesg | grep -q "mlxsim357: port 1: 6 GUID(s) not deleted at the SM within 2000 ms" ||
		{ echo "no message for the GUIDs left"; return 1; }
	# A port whose link is down: nothing can be sent, and OpenSM drops the
	# alias GUIDs of a port it no longer finds: not waited for.
	echo accept >$ctl && echo on >$S && converge "on after the failing SA" || return 1
	echo down >$SIMDBG/$d/port1 && echo off >$S || return 1
	dmesg | grep -q "mlxsim357: port 1: down: 6 GUID(s) left to the SM" ||
		{ echo "no message for a down port"; return 1; }
	expect_eq "$(deletes $d)" "" "deletes on a down port" || return 1
	echo up >$SIMDBG/$d/port1 || return 1
	# The device's removal: answered before it is gone, as the ULP's
	# notifier says (a VF goes down only when the DELETE of its base entry
	# is answered).
	echo on >$S && converge "on again" || return 1
	if [ $ulp_loaded = 1 ]; then
		expect_eq "$(ulp "guidevents $d 1 5" | cut -d' ' -f3-4)" "up 1" "VF5 before the removal" || return 1
	fi
	sim_del 357 || return 1
	[ ! -e $IB/$d ] || { echo "$d still there"; return 1; }
	[ $ulp_loaded = 1 ] || return 0
	for vf in 1 2 3 4 5; do
		expect_eq "$(ulp "guidevents $d 1 $vf" | cut -d' ' -f3-4)" "up 0" "VF$vf after the removal" || return 1
	done
}

ktap_main "$@"
