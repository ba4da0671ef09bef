#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of a port's GUID engine against the simulated SA: admin writes
# and their refusals, declines and SA errors backing off, a storm of writes
# under every SA mode, GUID-change events, and a port coming back up
# (Documentation/vf-guids.rst).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_admin_writes test_guid_bad_writes test_guid_backoff
	test_guid_sa_error_backoff test_guid_storm test_guid_events test_guid_port_up_resends
	test_guid_port_up_ends_sa_backoff"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# Administrator writes reach the SA at once and come back operational: a
# value, 0 (the SM assigns one) and all ones (deleted, by a DELETE); SET and
# DELETE never share a request; the simulated port's GID table follows.
test_guid_admin_writes() {
	sim_new "324 cx3 1 5" || return 1
	d=mlxsim324 I=$IB/mlxsim324/iov
	wait_until 10 gid_is $d 103 $(sm_guid 324 103) || { echo "start never converged"; return 1; }
	echo clear_log >$SIMDBG/$d/sa1
	echo 0x1234 >$I/ports/1/admin_guids/5 || return 1
	wait_until 5 gid_is $d 5 0000000000001234 || { echo "value never operational"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/5)" 0000000000001234 "admin 5" || return 1
	expect_eq "$(port_gid $d 1 5)" 0000000000001234 "sim GID 5" || return 1
	echo 0 >$I/ports/1/admin_guids/6 || return 1
	wait_until 5 gid_is $d 6 $(sm_guid 324 6) || { echo "0 never assigned"; return 1; }
	echo ffffffffffffffff >$I/ports/1/admin_guids/5 || return 1
	wait_until 5 gid_is $d 5 0000000000000000 || { echo "never deleted"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/5)" ffffffffffffffff "admin 5 deleted" || return 1
	# A delete and a set in one record at once: two requests.
	echo ffffffffffffffff >$I/ports/1/admin_guids/6 && echo 77 >$I/ports/1/admin_guids/7 || return 1
	wait_until 5 gid_is $d 7 0000000000000077 || { echo "7 never set"; return 1; }
	wait_until 5 gid_is $d 6 0000000000000000 || { echo "6 never deleted"; return 1; }
	log=$(sa_log $d 1)
	echo "$log"
	# In order: the SET of 5, of 6, the DELETE of 5; then the DELETE of 6
	# and the SET of 7 in either order.
	expect_eq "$(echo "$log" | awk '{print $3, $5, $6}' | head -3 | tr '\n' ';')" \
		"2 0 20;2 0 40;15 0 20;" "first requests" || return 1
	expect_eq "$(echo "$log" | awk '{print $3, $5, $6}' | tail -n +4 | sort | tr '\n' ';')" \
		"15 0 40;2 0 80;" "a DELETE and a SET apart" || return 1
	sim_del 324
}

# Malformed writes are refused with EINVAL and change nothing (nothing is
# sent); the PF's entry 0 is EPERM; a user other than root cannot write;
# concurrent writers on one entry and on many: the last write wins and
# every entry ends operational.
test_guid_bad_writes() {
	sim_new "325 cx3 1 5" || return 1
	d=mlxsim325 A=$IB/mlxsim325/iov/ports/1/admin_guids
	wait_until 10 gid_is $d 103 $(sm_guid 325 103) || { echo "start never converged"; return 1; }
	echo clear_log >$SIMDBG/$d/sa1
	before=$(cat $A/9)
	n=0
	for bad in x 0x 0X " " "1 2" "-1" "+1" 12345678901234567 0x12345678901234567 \
		g 1g 0xg "0x 1" " 1" "1 " "1\n\n" "\n1" "1\t" 1.0 "1,2" "1;2" \
		ffff_ffff "0xffffffffffffffff0" 00000000000000000 "0x-1" "--1" "1-" \
		"\x01" "\xff" "1\x01" "0x0x1" xx1 "deadbeef cafe" "DEAD BEEF" "0x 0" "\t" "\r" \
		"1\r" "abc\r\n" "12345678 12345678" "fffffffffffffffff" "0x1fffffffffffffffff" \
		zz "0 x1" "0xx" "one" "0o17" "017a-" "#1" "%d" "$(printf 'a%.0s' $(seq 17))"; do
		got=$(sim_write $A/9 "$bad")
		[ "$got" = "Invalid argument" ] || { echo "'$bad' gave '$got'"; return 1; }
		n=$((n + 1))
	done
	echo "$n malformed writes refused"
	[ $n -ge 50 ] || { echo "only $n cases"; return 1; }
	expect_eq "$(cat $A/9)" "$before" "entry 9 unchanged" || return 1
	expect_eq "$(sim_write $A/0 1234)" "Operation not permitted" "entry 0" || return 1
	expect_eq "$(sim_write $A/0 junk)" "Operation not permitted" "entry 0, junk" || return 1
	grep -q '^nobody:' /etc/passwd 2>/dev/null ||
		{ mkdir -p /etc && echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd; }
	expect_eq "$(su nobody -c 'id -u' 2>&1)" 65534 "a shell as nobody" || return 1
	out=$(su nobody -c "echo 1234 >$A/9" 2>&1) && { echo "a non-root write succeeded"; return 1; }
	echo "non-root: $out"
	case "$out" in *"Permission denied"*) ;; *) echo "refused for another reason"; return 1 ;; esac
	expect_eq "$(cat $A/9)" "$before" "entry 9 still unchanged" || return 1
	sleep 0.5
	expect_eq "$(sa_log $d 1 | wc -l)" 0 "nothing sent" || return 1
	# Writers: 4 on entry 9, one each on entries 20 to 23.
	for w in 1 2 3 4; do
		(for i in $(seq 20); do echo "${w}00$i" >$A/9; done) &
	done
	for e in 20 21 22 23; do
		(for i in $(seq 20); do echo "$e$i" >$A/$e; done) &
	done
	wait
	last9=$(cat $A/9)
	case $last9 in 00000000000[1-4]0020) ;; *) echo "entry 9 holds $last9, not a writer's last value"; return 1 ;; esac
	for e in 9 20 21 22 23; do
		want=$(cat $A/$e)
		wait_until 10 gid_is $d $e $want || { echo "entry $e never operational"; return 1; }
	done
	expect_eq "$(cat $A/20 $A/21 $A/22 $A/23 | tr '\n' ' ')" "0000000000002020 0000000000002120 0000000000002220 0000000000002320 " "each writer's last value"
	sim_del 325
}

# An entry the SM declines is retried 1, 2, 4... s later (the first steps
# in real time; the 60 s cap is a host test), measured in the SA's log
# with a tolerance of 400 ms; once accepted it is operational. A write
# during a backoff goes out at once and restarts the backoff at 1 s.
test_guid_backoff() {
	sim_new "326 cx3 1 5" || return 1
	d=mlxsim326 A=$IB/mlxsim326/iov/ports/1/admin_guids
	wait_until 10 gid_is $d 103 $(sm_guid 326 103) || { echo "start never converged"; return 1; }
	echo "decline 10 3" >$SIMDBG/$d/sa1 && echo 0xabc >$A/10 || return 1
	wait_until 12 gid_is $d 10 0000000000000abc || { echo "never accepted"; reqs_for $d 1 4; return 1; }
	log=$(reqs_for $d 1 4)
	echo "$log"
	expect_eq "$(echo "$log" | awk '{print $9}' | tr '\n' ' ')" "4 4 4 0 " "declined 3 times, then accepted" || return 1
	gaps=$(ms_apart "$log")
	echo "gaps: $gaps ms (want 1000 2000 4000)"
	set -- $gaps
	within $1 1000 400 && within $2 2000 400 && within $3 4000 400 || { echo "backoff off"; return 1; }
	# A write during the 2 s backoff of entry 11.
	echo "decline 11 5" >$SIMDBG/$d/sa1 && echo 0xdef >$A/11 || return 1
	wait_until 5 eval '[ $(reqs_for $d 1 8 | wc -l) -ge 2 ]' || { echo "no retry of 11"; return 1; }
	# Within the 2 s backoff (polling the log takes a few hundred ms here).
	sleep 0.2
	echo 0xdee >$A/11 || return 1
	wait_until 5 eval '[ $(reqs_for $d 1 8 | wc -l) -ge 4 ]' || { echo "no retries after the write"; return 1; }
	log=$(reqs_for $d 1 8)
	echo "$log"
	set -- $(ms_apart "$log")
	echo "gaps: $* ms (want 1000, then the write (well before the 2000 of the backoff), then 1000)"
	within $1 1000 400 || { echo "first retry off"; return 1; }
	[ $2 -lt 1600 ] || { echo "the write waited for the backoff"; return 1; }
	within $3 1000 400 || { echo "the backoff did not restart at 1 s"; return 1; }
	echo accept >$SIMDBG/$d/sa1
	sim_del 326
}

# erroring_sa ID VFS ENTRY: a simulated ConnectX-3 ID with VFS VFs, once
# its port 1 converged (ENTRY holds what the SM assigns), whose SA then
# answers every request with status 12 (0x000c, the method and attribute
# combination unsupported). Sets d, A (port 1's admin_guids), ctl (the SA's
# control file) and n0 (the SA log's length then).
erroring_sa() {
	sim_new "$1 cx3 1 $2" || return 1
	d=mlxsim$1 A=$IB/mlxsim$1/iov/ports/1/admin_guids ctl=$SIMDBG/mlxsim$1/sa1
	wait_until 10 gid_is $d $3 $(sm_guid $1 $3) || { echo "start never converged"; return 1; }
	echo "status 12" >$ctl || return 1
	n0=$(sa_log $d 1 | wc -l)
}

# SA errors back off for the whole port (issue 23 section 2): with the SA
# answering every request with an error status (0x000c, the method and
# attribute combination unsupported), writes to entries of 5 records go
# out as soon as the one request in flight allows, and fail; then, with no
# write, the port waits 1, 2, 4, 8, 16 s between its requests, whichever
# record each is for: a handful in 40 s, where a fixed 1 s retry of each record sent about
# 200. A write goes out at once, and the SA accepting it ends the backoff:
# every entry converges.
test_guid_sa_error_backoff() {
	erroring_sa 345 5 103 || return 1
	for e in 10 30 50 70 90; do
		printf '%x\n' $((0x1000 + e)) >$A/$e || return 1
	done
	sleep 40
	n1=$(sa_log $d 1 | wc -l)
	gaps=$(ms_apart "$(sa_log $d 1 | tail -n +$((n0 + 1)))")
	echo "$((n1 - n0)) requests in the 40 s after the writes; gaps $gaps ms"
	[ $((n1 - n0)) -ge 5 ] && [ $((n1 - n0)) -le 12 ] ||
		{ echo "expected 5..12 requests"; echo accept >$ctl; sim_del 345; return 1; }
	# The last three gaps: 4, 8 and 16 s.
	set -- $gaps
	shift $(($# - 3))
	within $1 4000 800 && within $2 8000 800 && within $3 16000 800 ||
		{ echo "the gaps do not double: $*"; echo accept >$ctl; sim_del 345; return 1; }
	echo accept >$ctl || return 1
	echo 0x2010 >$A/10 || return 1
	for e in 30 50 70 90; do
		wait_until 10 gid_is $d $e $(printf %016x $((0x1000 + e))) ||
			{ echo "entry $e never converged"; sim_del 345; return 1; }
	done
	wait_until 10 gid_is $d 10 0000000000002010 || { echo "entry 10 never converged"; sim_del 345; return 1; }
	sim_del 345
}

# The port becoming active again ends the SA backoff (issue 23 section 2,
# as an admin write does): with the SA answering errors, a write's requests
# go out at 0, 1, 3 and 7 s, and the next would wait until 15 s; the SA then
# accepts, the port goes down and up at 8.5 s, and the next request goes
# out at once (ib_sa makes the SM's address again first: 200 ms), about 2 s
# after the last error, not 8 s (the SA log's times, not the shell's: the
# shell is slow on the debug kernel), and the write converges.
test_guid_port_up_ends_sa_backoff() {
	erroring_sa 332 2 65 || return 1
	echo 0x1010 >$A/10 || return 1
	sleep 8.5
	n1=$(sa_log $d 1 | wc -l)
	echo "$((n1 - n0)) requests in the 8.5 s of errors"
	[ $((n1 - n0)) -ge 3 ] && [ $((n1 - n0)) -le 5 ] ||
		{ echo "expected 4 requests (0, 1, 3, 7 s)"; echo accept >$ctl; sim_del 332; return 1; }
	echo accept >$ctl || return 1
	echo down >$SIMDBG/$d/port1 && sleep 0.3 && echo up >$SIMDBG/$d/port1 || return 1
	wait_until 20 gid_is $d 10 0000000000001010 || { echo "entry 10 never converged"; sim_del 332; return 1; }
	last_error=$(sa_log $d 1 | sed -n "${n1}p" | awk '{print $2}')
	next=$(sa_log $d 1 | tail -n +$((n1 + 1)) | awk '$4 == 30 {print $2; exit}')
	echo "the first request after the port came up went out $((next - last_error)) ms after the last error"
	[ $((next - last_error)) -lt 4000 ] || { echo "it waited for the backoff"; sim_del 332; return 1; }
	sim_del 332
}

# Storms: the SA times out, answers errors, and the port goes down and up,
# while writes go on; once the SA accepts again every admin value ends up
# operational, none lost.
test_guid_storm() {
	sim_new "327 cx3 1 3" || return 1
	d=mlxsim327 A=$IB/mlxsim327/iov/ports/1/admin_guids ctl=$SIMDBG/mlxsim327/sa1
	wait_until 10 gid_is $d 86 $(sm_guid 327 86) || { echo "start never converged"; return 1; }
	i=0
	for mode in silent "status 28" down silent up "status 12" port_down accept; do
		case $mode in
		up | down) echo $mode >$SIMDBG/$d/port1 ;;
		*) echo "$mode" >$ctl ;;
		esac
		for e in 3 17 40 41 99 127; do
			echo "$((e * 1000 + i))" >$A/$e || { echo "write refused in '$mode'"; return 1; }
		done
		i=$((i + 1))
		sleep 0.7
	done
	for e in 3 17 40 41 99 127; do
		want=$(cat $A/$e)
		wait_until 15 gid_is $d $e $want || { echo "entry $e: admin $(cat $A/$e), gid $(cat $IB/$d/iov/ports/1/gids/$e)"; return 1; }
	done
	echo "$(sa_log $d 1 | wc -l) requests logged"
	sim_del 327
}

# GUID-change events: a change of any entry of a function counts in its
# guid_events; its state follows its base entry only.
test_guid_events() {
	sim_new "328 cx3 1 2" || return 1
	d=mlxsim328 I=$IB/mlxsim328/iov
	wait_until 10 gid_is $d 65 $(sm_guid 328 65) || { echo "start never converged"; return 1; }
	F=$I/0148:00:00.1/ports/1 G=$I/0148:00:00.2/ports/1
	e0=$(cat $F/guid_events) g0=$(cat $G/guid_events)
	expect_eq "$(cat $F/state)" up "VF1 up" || return 1
	# A watcher poll()ing guid_events wakes.
	pollwait $F/guid_events 5000 >/tmp/pollwait.out &
	wait_until 5 grep -q armed /tmp/pollwait.out || { echo "the watcher never armed"; return 1; }
	echo 0x55 >$I/ports/1/admin_guids/5 || return 1
	wait_until 5 gid_is $d 5 0000000000000055 || return 1
	wait
	expect_eq "$(tail -1 /tmp/pollwait.out)" event "poll() on guid_events" || return 1
	expect_eq "$(cat $F/guid_events)" $((e0 + 1)) "VF1 event for a non-base entry" || return 1
	expect_eq "$(cat $F/state)" up "VF1 still up" || return 1
	expect_eq "$(cat $G/guid_events)" $g0 "VF2 untouched" || return 1
	echo ffffffffffffffff >$I/ports/1/admin_guids/2 || return 1
	wait_until 5 gid_is $d 2 0000000000000000 || return 1
	expect_eq "$(cat $F/state) $(cat $F/guid_events)" "down $((e0 + 2))" "VF1 base deleted" || return 1
	echo 0 >$I/ports/1/admin_guids/2 || return 1
	wait_until 5 gid_is $d 2 $(sm_guid 328 2) || return 1
	expect_eq "$(cat $F/state) $(cat $F/guid_events)" "up $((e0 + 3))" "VF1 base assigned again" || return 1
	# In-kernel users (the test ULP's notifier) saw the same.
	expect_eq "$(ulp "guidevents $d 1 1")" "calls $((e0 + 3)) up 1 count $((e0 + 3))" "VF1 notifications" || return 1
	expect_eq "$(ulp "guidevents $d 1 2")" "calls $g0 up 1 count $g0" "VF2 notifications" || return 1
	sim_del 328
}

# A port that comes back up may face an SM that lost what it granted: every
# GUID the port holds is sent again (as mlx4 invalidates all its records),
# and the table stays as it was.
test_guid_port_up_resends() {
	sim_new "331 cx3 1 5" || return 1
	d=mlxsim331 I=$IB/mlxsim331/iov
	wait_until 10 gid_is $d 103 $(sm_guid 331 103) || { echo "start never converged"; return 1; }
	echo 0x99 >$I/ports/1/admin_guids/9 || return 1
	wait_until 5 gid_is $d 9 0000000000000099 || return 1
	before=$(cat $I/ports/1/gids/*)
	echo clear_log >$SIMDBG/$d/sa1
	echo down >$SIMDBG/$d/port1 && sleep 0.3 && echo up >$SIMDBG/$d/port1 || return 1
	wait_until 5 eval '[ $(sa_log $d 1 | grep -c " 30 ") -ge 6 ]' || { echo "nothing sent again"; sa_log $d 1; return 1; }
	sleep 0.5
	# GuidInfoRecords only: ib_sa also asks for ClassPortInfo after the event.
	expect_eq "$(sa_log $d 1 | awk '$4 == 30 {print $3, $5, $6}' | sort | tr '\n' ';')" \
		"2 0 4;2 1 2;2 12 80;2 3 10;2 6 20;2 9 40;" "sent again: the VFs' bases and entry 9" || return 1
	expect_eq "$(cat $I/ports/1/gids/*)" "$before" "the table" || return 1
	sim_del 331
}

ktap_main "$@"
