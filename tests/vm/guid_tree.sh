#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of which ports get a VF GUID tree, its files and their
# permissions, the split of a port's entries, and the tables a port starts
# with (Documentation/vf-guids.rst).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_tree_placement test_guid_tree_split test_guid_table_size
	test_guid_initial_tables test_guid_gids_read_the_port test_sysfs_lock_class_per_group
	test_guid_failslab_add"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# Which ports get an iov tree, decided when mlx_ext adds a device from what
# its parent says (the simulator's struct mlx_ext_sim_info, read with no
# symbol dependency between the modules): a simulated adapter with 5 VFs
# (the seed's split), 126 (the most), 127 on two ports (refused, one
# message per port, the device otherwise fine), none, and rxe0 (RoCE).
test_guid_tree_placement() {
	sim_new "300 cx3 1 5" && sim_new "301 cx3 2 127" && sim_new "302 cx3 1 126" &&
		sim_new "303 cx4 1 0" || return 1
	log=$(dmesg | grep -E 'mlx_ext: (mlxsim30[0-3]|rxe0): ')
	echo "$log" | grep -E "VF GUID|port"
	[ -d $IB/mlxsim300/iov ] && [ -d $IB/mlxsim302/iov ] || { echo "no tree with 5 or 126 VFs"; return 1; }
	for d in mlxsim301 mlxsim303 rxe0; do
		[ ! -e $IB/$d/iov ] || { echo "$d has a tree"; return 1; }
	done
	expect_eq "$(record mlxsim301)" "hca hca native" "127 VFs: the device is fine" || return 1
	sim_del 300; sim_del 301; sim_del 302; sim_del 303
	echo "$log" | grep -q "mlxsim300: port 1: VF GUID table of 128 GUIDs for 5 VFs: the PF has 2, VF1 26, VF5 25" ||
		{ echo "no table line for 5 VFs"; return 1; }
	echo "$log" | grep -q "mlxsim302: port 1: VF GUID table of 128 GUIDs for 126 VFs: the PF has 2, VF1 1, VF126 1" ||
		{ echo "no table line for 126 VFs"; return 1; }
	for p in 1 2; do
		expect_eq "$(echo "$log" | grep -c "mlxsim301: port $p: no VF GUID tree: the port has 128 GUIDs: too few for the PF's 2 and one for each of 127 VFs")" 1 \
			"127 VFs, port $p" || return 1
	done
	# (Failures injected on rxe0's add path, test_failslab_add_path in
	# module.sh, say "no VF GUID tables (ENOMEM)" where one hit them: not
	# lines of a decision.)
	expect_eq "$(echo "$log" | grep -v 'no VF GUID tables (' | grep -c 'mlxsim303: .*VF GUID\|rxe0: .*VF GUID')" 0 \
		"lines for no VFs and RoCE"
}

# The split of SPEC section 4: 5 VFs give 2, 26, 25, 25, 25, 25 entries,
# every gid_idx file names the physical entries in order (contiguous, in
# function order), and the function directories are named as mlx4's
# get_name names them; also 1, 63 and 126 VFs. Files have their modes.
test_guid_tree_split() {
	sim_new "320 cx3 1 5" || return 1
	I=$IB/mlxsim320/iov
	expect_eq "$(fn_dirs mlxsim320 | tr '\n' ' ')" \
		"0140:00:00.0 0140:00:00.1 0140:00:00.2 0140:00:00.3 0140:00:00.4 0140:00:00.5 " "functions" || return 1
	expect_eq "$(split_of mlxsim320)" "2 26 25 25 25 25 " "split" || return 1
	all=$(for f in $(fn_dirs mlxsim320); do
		c=$(ls $I/$f/ports/1/gid_idx | wc -l)
		cat $(files $I/$f/ports/1/gid_idx 0 $((c - 1))) </dev/null
	done | tr '\n' ' ')
	expect_eq "$all" "$(seq 0 127 | tr '\n' ' ')" "gid_idx of every function" || return 1
	expect_eq "$(ls $I/ports/1/admin_guids | wc -l) $(ls $I/ports/1/gids | wc -l)" "128 128" "tables" || return 1
	expect_eq "$(stat -c %a $I/ports/1/admin_guids/5 $I/ports/1/gids/5 $I/0140:00:00.1/ports/1/gid_idx/0 \
		$I/0140:00:00.1/ports/1/state $I/0140:00:00.1/ports/1/guid_events | tr '\n' ' ')" \
		"644 444 444 444 444 " "modes" || return 1
	sim_del 320
	for case in "1:2 126 " "63:$({ echo 2; for i in $(seq 63); do echo 2; done; } | tr '\n' ' ')" \
		"126:$({ echo 2; for i in $(seq 126); do echo 1; done; } | tr '\n' ' ')"; do
		vfs=${case%%:*} want=${case#*:}
		sim_new "321 cx3 1 $vfs" || return 1
		got=$(split_of mlxsim321 | tr -s ' ')
		last=$(fn_dirs mlxsim321 | tail -1)
		sim_del 321
		expect_eq "$got" "$(echo "$want" | tr -s ' ')" "split of $vfs VFs" || return 1
	done
	expect_eq "$last" "0141:00:15.6" "function 126's directory"
}

# The table is the port's GID table (gid_tbl_len, the SM's GUIDCap), not
# 128: a simulated ConnectX-3 with GUIDS 20 (new_device's fifth field) and
# 3 VFs splits 20 (2, 6, 6, 6) and shows 20 entries; its last entry, in the
# last, partial record, reaches the SA. One of 4 GUIDs cannot hold 3 VFs:
# no tree and one message per port.
test_guid_table_size() {
	sim_new "358 cx3 1 3 20" || return 1
	d=mlxsim358 I=$IB/mlxsim358/iov
	expect_eq "$(ls $IB/$d/ports/1/gids | wc -l)" 20 "ib_core's GID table" || return 1
	expect_eq "$(ls $I/ports/1/admin_guids | wc -l) $(ls $I/ports/1/gids | wc -l)" "20 20" "the tables" || return 1
	expect_eq "$(split_of $d)" "2 6 6 6 " "split of 20" || return 1
	wait_until 10 gid_is $d 14 $(sm_guid 358 14) || { echo "VF3's base never granted"; return 1; }
	expect_eq "$(sa_log $d 1 | awk '$3 == 2 {print $5, $6}' | tr '\n' ';')" "0 4;1 41;" \
		"what the SA was asked" || return 1
	echo 0x1919 >$I/ports/1/admin_guids/19 && wait_until 5 gid_is $d 19 0000000000001919 ||
		{ echo "entry 19 never set"; return 1; }
	expect_eq "$(sa_log $d 1 | tail -n1 | awk '{print $3, $5, $6, $8}')" "2 2 8 0" "entry 19's request" || return 1
	[ ! -e $I/ports/1/admin_guids/20 ] && [ ! -e $I/ports/1/gids/20 ] || { echo "an entry 20"; return 1; }
	dmesg | grep -q "mlxsim358: port 1: VF GUID table of 20 GUIDs for 3 VFs: the PF has 2, VF1 6, VF3 6" ||
		{ echo "no table line"; return 1; }
	sim_del 358
	sim_new "359 cx3 2 3 4" || return 1
	[ ! -e $IB/mlxsim359/iov ] || { echo "a tree on 4 GUIDs for 3 VFs"; return 1; }
	for p in 1 2; do
		expect_eq "$(dmesg | grep -c "mlxsim359: port $p: no VF GUID tree: the port has 4 GUIDs: too few for the PF's 2 and one for each of 3 VFs")" 1 \
			"port $p's message" || return 1
	done
	sim_del 359
}

# The tables a port starts with. sm_guid_assign=1 (the default): the SM is
# asked for each VF's base entry, one request per record that has one, and
# grants them; every other entry reads 0 in gids and all ones in
# admin_guids; the PF's entry 0 is the port GUID. sm_guid_assign=0: the SM
# is asked nothing, and only the PF's entry 0 is valid. The parameter is an
# int read as mlx4_ib's (main.c: "if sm_guid_assign > 0"): 2 enables, -1
# disables, and Y (a bool's spelling) is refused at load.
test_guid_initial_tables() {
	expect_eq "$(cat /sys/module/mlx_ext/parameters/sm_guid_assign)" 1 "sm_guid_assign default" || return 1
	expect_eq "$(stat -c %a /sys/module/mlx_ext/parameters/sm_guid_assign)" 444 "parameter mode" || return 1
	sim_new "322 cx3 1 5" || return 1
	d=mlxsim322 I=$IB/mlxsim322/iov
	wait_until 10 gid_is $d 103 $(sm_guid 322 103) || { echo "VF5's base never granted"; return 1; }
	# Every entry: "N ADMIN GUID", in order.
	seq 0 127 >/tmp/n
	cat $(files $I/ports/1/admin_guids 0 127) </dev/null >/tmp/a
	cat $(files $I/ports/1/gids 0 127) </dev/null | cut -d: -f5- | tr -d : >/tmp/g
	got=$(paste -d' ' /tmp/n /tmp/a /tmp/g)
	want=$(for n in $(seq 0 127); do
		case $n in
		0) echo "$n 0002c90300014201 0002c90300014201" ;;
		2 | 28 | 53 | 78 | 103) g=$(sm_guid 322 $n); echo "$n $g $g" ;;
		*) echo "$n ffffffffffffffff 0000000000000000" ;;
		esac
	done)
	[ "$got" = "$want" ] || { echo "wrong entries:"; echo "$got" | grep -vxF "$want"; return 1; }
	expect_eq "$(head -c 4 $I/ports/1/gids/7)" fe80 "subnet prefix" || return 1
	expect_eq "$(sa_log $d 1 | awk '{print $3, $5, $6, $7, $8}' | tr '\n' ';')" \
		"2 0 4 1 0;2 3 10 1 0;2 6 20 1 0;2 9 40 1 0;2 12 80 1 0;" "what the SA was asked" || return 1
	expect_eq "$(for f in $(fn_dirs $d); do cat $I/$f/ports/1/state; done | tr '\n' ' ')" \
		"up up up up up up " "states" || return 1
	# The SM's port GID table holds what it granted.
	expect_eq "$(port_gid $d 1 28)" "$(sm_guid 322 28)" "sim GID table" || return 1
	sim_del 322
	# The test ULP uses mlx_ext's API: it goes first, and comes back after.
	ulp_loaded=0
	[ -e /sys/module/mlx_ext_test_ulp ] && ulp_loaded=1 && rmmod mlx_ext_test_ulp
	rc=0
	for v in 0 -1 2; do
		rmmod mlx_ext && modprobe mlx_ext sm_guid_assign=$v || { rc=1; break; }
		got=$(cat /sys/module/mlx_ext/parameters/sm_guid_assign)
		sim_new "323 cx3 1 5" || { rc=1; break; }
		d=mlxsim323 I=$IB/mlxsim323/iov
		if [ $v = 2 ]; then
			wait_until 10 gid_is $d 103 $(sm_guid 323 103) || { echo "sm_guid_assign=2: VF5's base never granted"; rc=1; }
			n_req=$(sa_log $d 1 | wc -l)
			sim_del 323
			expect_eq "$got" 2 "sm_guid_assign=2 reads back" || rc=1
			expect_eq "$n_req" 5 "sm_guid_assign=2: SA requests" || rc=1
			break
		fi
		sleep 1.5
		n_req=$(sa_log $d 1 | wc -l)
		states=$(for f in $(fn_dirs $d); do cat $I/$f/ports/1/state; done | tr '\n' ' ')
		admins=$(cat $I/ports/1/admin_guids/* | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		sim_del 323
		expect_eq "$got" "$v" "sm_guid_assign=$v reads back" &&
			expect_eq "$n_req" 0 "sm_guid_assign=$v: SA requests" &&
			expect_eq "$states" "up down down down down down " "sm_guid_assign=$v: states" &&
			expect_eq "$admins" " 1 0002c90300014301; 127 ffffffffffffffff;" "sm_guid_assign=$v: admin values" ||
			{ rc=1; break; }
	done
	# A bool's spelling, as the parameter was before: refused at load.
	if [ $rc = 0 ]; then
		rmmod mlx_ext || rc=1
		if modprobe mlx_ext sm_guid_assign=Y 2>/dev/null; then
			echo "sm_guid_assign=Y accepted"
			rc=1
		fi
		dmesg | tail -n 5 | grep -q "invalid for parameter .sm_guid_assign" ||
			{ echo "no message for sm_guid_assign=Y"; rc=1; }
	fi
	[ -e /sys/module/mlx_ext ] && rmmod mlx_ext
	modprobe mlx_ext || return 1
	[ $ulp_loaded = 0 ] || modprobe mlx_ext_test_ulp || return 1
	return $rc
}

# gids/<n> reads the port's GID table (rdma_query_gid, ib_core's copy of
# what the driver reports), as mlx4's reads the port's GUIDInfo, not the
# engine's record of the SA's answers. A real SM answers a SET from its
# own records and programs the port afterwards (OpenSM's set_guidinfo
# queues the port's block, osm_queue_guidinfo, then answers); the
# simulator's SM holds that programming back on "program hold". An admin
# write is then answered (the SA's log) while gids/9 still shows the
# entry empty; once programmed it shows the GUID, as ib_core's own
# ports/1/gids/9 does. An entry without a GUID reads as the port's subnet
# prefix and zeros, as the drivers' query_gid gives it to ib_core (the
# simulator's did not, and ib_core cached no such entry and a subnet
# prefix of 0). Seen red on the engine's record: gids/9 showed the GUID
# before the port held it.
test_guid_gids_read_the_port() {
	sim_new "356 cx3 1 2" || return 1
	d=mlxsim356 I=$IB/mlxsim356/iov ctl=$SIMDBG/mlxsim356/sa1
	wait_until 10 gid_is $d 65 $(sm_guid 356 65) || { echo "start never converged"; return 1; }
	echo "program hold" >$ctl && echo clear_log >$ctl || return 1
	echo 0x77 >$I/ports/1/admin_guids/9 || return 1
	wait_until 5 eval '[ "$(sa_log $d 1 | awk '"'"'$3 == 2 && $8 == 0'"'"' | wc -l)" = 1 ]' ||
		{ echo "the SET was not answered"; sa_log $d 1; return 1; }
	sleep 0.5
	expect_eq "$(cat $I/ports/1/gids/9)" "fe80:0000:0000:0000:0000:0000:0000:0000" \
		"gids/9 while the SM has not programmed the port" || return 1
	echo "program now" >$ctl || return 1
	wait_until 5 gid_is $d 9 0000000000000077 || { echo "gids/9: $(cat $I/ports/1/gids/9)"; return 1; }
	expect_eq "$(cat $I/ports/1/gids/9)" "$(cat $IB/$d/ports/1/gids/9)" "gids/9 as ib_core shows it" &&
		expect_eq "$(cat $I/ports/1/gids/10)" "fe80:0000:0000:0000:0000:0000:0000:0000" "an entry without a GUID" &&
		expect_eq "$(cat $IB/$d/ports/1/gids/10)" "fe80:0000:0000:0000:0000:0000:0000:0000" "ib_core's view of it" &&
		expect_eq "$(cat $I/ports/1/gids/0)" "$(cat $IB/$d/ports/1/gids/0)" "entry 0, the port GUID" || return 1
	sim_del 356
}

# Each kind of sysfs directory gives its files their own lockdep class, as
# the driver core gives each static attribute one: kernfs models a file's
# active references as a lock of that class (/proc/lockdep: "kn->active",
# numbered #N when keys differ). Reading a file of each of the four kinds
# of the iov tree after a fresh load of mlx_ext (its classes go with its
# memory) registers four new classes; with one key for every file of the
# module (sysfs_attr_init() in sysfs.c's loop) there were none.
test_sysfs_lock_class_per_group() {
	[ -r /proc/lockdep ] || { echo "no /proc/lockdep"; return $KSFT_SKIP; }
	rmmod mlx_ext_test_ulp && rmmod mlx_ext && modprobe mlx_ext && modprobe mlx_ext_test_ulp || return 1
	sim_new "352 cx3 1 2" || return 1
	I=$IB/mlxsim352/iov
	fn=$(ls $I | grep -v '^ports$' | tail -n1)
	classes() { grep -cE '^[0-9a-f]+ FD: .*: kn->active' /proc/lockdep; }
	cat $IB/mlxsim352/mlx_ext/atomic_cap >/dev/null || return 1
	before=$(classes)
	for f in ports/1/admin_guids/1 ports/1/gids/1 $fn/ports/1/state $fn/ports/1/gid_idx/0; do
		cat $I/$f >/dev/null || return 1
		# Twice: the second read of a kind registers nothing new.
		cat $I/$f >/dev/null || return 1
	done
	after=$(classes)
	echo "kn->active classes: $before before the reads, $after after"
	expect_eq "$((after - before))" 4 "new classes" || return 1
	sim_del 352
}

# Each allocation made with mlx_ext's code on the stack fails in turn while
# mlx_ext adds a simulated adapter with VFs (as test_failslab_add_path does
# for rxe0, module.sh), whose VF GUID
# tables (engine, work item, event handler, sysfs tree) take most of the
# allocations: each failure leaves the device without tables (or without
# mlx_ext at all), with a message, and never crashes, leaks (test_no_leaks)
# or splats; the tables come up once nothing fails. The tables take about a
# thousand allocations (a sysfs file each): the first 20 fail in turn, then
# one in 59, to the last.
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
		if [ $n -lt 20 ]; then n=$((n + 1)); else n=$((n + 59)); fi
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

ktap_main "$@"
