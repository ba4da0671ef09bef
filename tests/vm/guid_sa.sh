#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the simulator's subnet administrator (Documentation/
# simulator.rst, "The subnet administrator"), at the MAD level through the
# test ULP's guidinfo, on adapters without VFs.

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_sim_sa_guidinfo test_sim_sa_programmed test_sim_sa_port_events
	test_sim_sa_del_with_query_in_flight"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# The simulated SA answers ib_sa's GuidInfoRecord queries at the MAD level,
# here on adapters with no VFs (mlx_ext's own GUID tables, which would send
# requests of their own, are tested in the other guid_*.sh files),
# through the port's GSI QP (QP1, made by ib_mad): SET assigns (0) or sets
# a value, DELETE clears; the answers carry the record and the port's GID
# table follows (gids/N in sysfs, through ib_core's cache). The port's own
# GUID is entry 0. Each request is logged once under its TID.
test_sim_sa_guidinfo() {
	sim_new "310 cx3 1 0" || return 1
	d=mlxsim310 port_guid=0002c90300013601 pg=2c90300013601
	lid=$(printf %x $(cat $IB/$d/ports/1/lid))
	# ib_mad's objects: a PD, its DMA MR, a CQ and QP1 on the one port.
	expect_eq "$(cat $SIMDBG/$d/objects | tr '\n' ' ')" "pd 1 cq 1 qp 1 mr 1 " "ib_mad's objects" || return 1
	expect_eq "$(gid $d 1 0 $port_guid)" $port_guid "entry 0: the port GUID" || return 1
	expect_eq "$(ulp "guidinfo $d 1 set 0 6 0 0 abc" | cut -d' ' -f1-11)" \
		"ok $lid 0 $pg 2c9ff01360101 abc 0 0 0 0 0" "SET: assign entry 1, set entry 2" || return 1
	expect_eq "$(gid $d 1 1 0002c9ff01360101)" 0002c9ff01360101 "gids/1 assigned" || return 1
	expect_eq "$(gid $d 1 2 0000000000000abc)" 0000000000000abc "gids/2 set" || return 1
	expect_eq "$(ulp "guidinfo $d 1 delete 0 4" | cut -d' ' -f1-6)" \
		"ok $lid 0 $pg 2c9ff01360101 0" "DELETE entry 2" || return 1
	expect_eq "$(gid $d 1 2 0000000000000000)" 0000000000000000 "gids/2 deleted" || return 1
	# As OpenSM (osm_sa_guidinfo_record.c): a SET of all ones sets all
	# ones (deleting is DELETE's); a GUID the port holds at another entry
	# is a duplicate, not set (the answer shows what the entry holds); GUID
	# 0 of block 0, the port's own, is read-only (ERR_REQ_INVALID, 0x200:
	# ib_sa reports -EINVAL); a record of block 15. (The other statuses,
	# which ib_sa's API cannot provoke, are host-tested: core/src/sim/sa.rs.)
	expect_eq "$(ulp "guidinfo $d 1 set 0 2 0 ffffffffffffffff" | cut -d' ' -f1,5)" \
		"ok ffffffffffffffff" "SET of all ones" || return 1
	expect_eq "$(gid $d 1 1 ffffffffffffffff)" ffffffffffffffff "gids/1 all ones" || return 1
	expect_eq "$(ulp "guidinfo $d 1 set 0 8 0 0 0 ffffffffffffffff" | cut -d' ' -f1,7)" \
		"ok 0" "a duplicate is not set" || return 1
	expect_eq "$(ulp "guidinfo $d 1 set 0 1 abc" | cut -d' ' -f1-2)" "err -22" "GUID 0 of block 0" || return 1
	expect_eq "$(gid $d 1 0 $port_guid)" $port_guid "entry 0 kept" || return 1
	expect_eq "$(ulp "guidinfo $d 1 set 15 80 0 0 0 0 0 0 0 1234" | cut -d' ' -f1-3,11)" \
		"ok $lid 15 1234" "block 15, entry 127" || return 1
	expect_eq "$(gid $d 1 127 0000000000001234)" 0000000000001234 "gids/127" || return 1
	log=$(sa_log $d 1)
	echo "$log"
	# Method SET (2) answered GetResp, DELETE (15); GuidInfoRecord (30);
	# one copy each (answered before ib_sa's 100 ms resend); the statuses.
	expect_eq "$(echo "$log" | awk '{print $3, $4, $5, $6, $7, $8, $9}' | tr '\n' ';')" \
		"2 30 0 6 1 0 0;15 30 0 4 1 0 0;2 30 0 2 1 0 0;2 30 0 8 1 0 0;2 30 0 1 1 200 0;2 30 15 80 1 0 0;" "log" || return 1
	expect_eq "$(echo "$log" | awk '{print $1}' | sort -u | wc -l)" 6 "one TID per request" || return 1
	sim_del 310
}

# The SA declines an entry N times, per request (ib_sa's resends of one
# request do not count); answers with an error status; never answers (the
# query times out after ib_sa's 10 resends, 100 ms apart, under one TID);
# and refuses bad commands with nothing changed.
test_sim_sa_programmed() {
	sim_new "311 cx4 2 0" || return 1
	d=mlxsim311 ctl=$SIMDBG/mlxsim311/sa2
	lid=$(printf %x $(cat $IB/$d/ports/2/lid))
	echo "decline 3 2" >$ctl || return 1
	expect_eq "$(sed -n 2p $ctl)" "declines 3:2" "declines shown" || return 1
	for i in 1 2; do
		expect_eq "$(ulp "guidinfo $d 2 set 0 8" | cut -d' ' -f1-7)" \
			"ok $lid 0 2c90300013702 0 0 0" "declined $i" || return 1
	done
	expect_eq "$(ulp "guidinfo $d 2 set 0 8" | cut -d' ' -f7)" 2c9ff01370203 "granted the third time" || return 1
	expect_eq "$(sa_log $d 2 | awk '{print $9}' | tr '\n' ' ')" "8 8 0 " "declined entries per request" || return 1
	# Port 1 has an SA of its own, untouched.
	expect_eq "$(sa_log $d 1 | wc -l)" 0 "port 1's log" || return 1
	echo "status 28" >$ctl || return 1
	expect_eq "$(ulp "guidinfo $d 2 set 0 10" | cut -d' ' -f1-2)" "err -22" "error status" || return 1
	expect_eq "$(sa_log $d 2 | tail -1 | awk '{print $8}')" 1c "status logged" || return 1
	echo silent >$ctl || return 1
	out=$(ulp "guidinfo $d 2 set 0 10")
	echo "silent: $out"
	expect_eq "$(echo "$out" | cut -d' ' -f1-2)" "err -110" "no answer: timed out" || return 1
	ms=${out##* }
	[ "$ms" -ge 900 ] && [ "$ms" -lt 3000 ] || { echo "timed out after $ms ms, not about 1 s"; return 1; }
	copies=$(sa_log $d 2 | tail -1 | awk '{print $7, $8}')
	echo "copies and status of the unanswered request: $copies"
	case "$copies" in
	[5-9]" -" | 1[0-1]" -") ;;
	*) echo "expected 5..11 copies of one unanswered request, got '$copies'"; return 1 ;;
	esac
	echo port_down >$ctl || return 1
	expect_eq "$(ulp "guidinfo $d 2 set 0 10" | cut -d' ' -f1-2)" "err -110" "port_down: timed out" || return 1
	expect_eq "$(head -1 $ctl)" "mode port_down" "mode shown" || return 1
	before=$(cat $ctl)
	for bad in nonsense "status 0" "status 70000" "decline 128 1" "decline 1" \
		"decline 1 1 1" "accept\n\n" "silent please" "status 0x1c"; do
		expect_eq "$(sim_write $ctl "$bad")" "Invalid argument" "command '$bad'" || return 1
	done
	expect_eq "$(cat $ctl)" "$before" "nothing changed by bad commands" || return 1
	echo clear_log >$ctl && echo accept >$ctl || return 1
	expect_eq "$(sa_log $d 2 | wc -l)" 0 "log cleared" || return 1
	expect_eq "$(ulp "guidinfo $d 2 set 0 10" | cut -d' ' -f1,8)" "ok 2c9ff01370204" "accepting again" || return 1
	sim_del 311
}

# A port that goes down: nothing it sends reaches the SA, so queries time
# out; back up (IB_EVENT_PORT_ACTIVE), ib_sa asks the SA for its
# ClassPortInfo, which the simulated SA answers, and queries work again.
test_sim_sa_port_events() {
	sim_new "312 cx3 1 0" || return 1
	d=mlxsim312
	echo down >$SIMDBG/$d/port1 || return 1
	expect_eq "$(ulp "guidinfo $d 1 set 0 2" | cut -d' ' -f1-2)" "err -110" "port down" || return 1
	expect_eq "$(sa_log $d 1 | wc -l)" 0 "nothing reached the SA" || return 1
	echo up >$SIMDBG/$d/port1 || return 1
	for _ in $(seq 30); do
		sa_log $d 1 | awk '$3 == 1 && $4 == 1 && $8 == 0' | grep -q . && break
		sleep 0.2
	done
	sa_log $d 1
	sa_log $d 1 | awk '$3 == 1 && $4 == 1 && $8 == 0' | grep -q . ||
		{ echo "no ClassPortInfo GET answered after the port came up"; return 1; }
	expect_eq "$(ulp "guidinfo $d 1 set 0 2" | cut -d' ' -f1)" ok "port up" || return 1
	sim_del 312
}

# A device removed while a query waits for an SA that never answers: the
# query ends (its callback runs once), the device goes, nothing leaks.
test_sim_sa_del_with_query_in_flight() {
	sim_new "313 connectib 1 0" || return 1
	echo silent >$SIMDBG/mlxsim313/sa1 || return 1
	ulp "guidinfo mlxsim313 1 set 0 2" >/tmp/inflight &
	sleep 0.3
	sim_del 313 || return 1
	wait
	echo "the query: $(cat /tmp/inflight)"
	[ ! -e $IB/mlxsim313 ] || { echo "mlxsim313 still there"; return 1; }
	grep -q "^err" /tmp/inflight || { echo "the query did not end in an error"; return 1; }
}

ktap_main "$@"
