#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of masked atomics on QPs a ULP creates and owns
# (mlx_ext_init_qp_attr, mlx_ext_attach_qp, mlx_ext_detach_qp;
# Documentation/ulp-api.rst, "Attaching to your own QP"), through the test
# ULP's "qpmode", "attachflags" and the API commands of api.sh run in attach
# mode.
# The setup makes the devices api.sh's does: mlxsim0 (cx3), mlxsim1
# (Connect-IB), mlxsim2 (cx4) and rxe0, with the test ULP loaded.

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/api.sh

ALL_TESTS="test_attach_refusals test_attach_exact test_attach_contention test_attach_group
	test_attach_detach_with_ops_in_flight test_attach_rdma_cm_sample
	test_attach_rdma_cm_device_removal"

setup() {
	stack_up sim && stack_models
}

cleanup() {
	stack_down
}

# attachflags DEV: the refusals of the attach API on DEV, on one line.
attachflags() {
	ulp "attachflags $1" | tr '\n' ' '
}

# Every refusal, per device: init_qp_attr adds max_ops to max_send_wr and
# makes max_send_sge 1 (8 + 4 = 12), refuses an overflow, a QP type other
# than RC and no attributes; attach refuses no QP, an unknown flag (the
# create flag's bit among them), the big-endian flag on a host-order device
# and its absence on a big-endian one (Connect-IB), a send CQ from
# ib_create_cq() with a comp_handler, and a UC QP; an IB_POLL_DIRECT CQ is
# fine. The simulator creates RC QPs only: its UC QP fails at
# ib_create_qp(). A handle given to mlx_ext_destroy_qp() is detached and
# its QP left to the ULP, which destroys it (KASAN would see a second
# destroy). mlx_ext_attach_qp_group joins a member's group on its device
# when the QP shares the member's send CQ, and refuses a QP with a CQ of
# its own, a failed attach's ERR_PTR as member, and a member of another
# device (on Connect-IB the test's member, a QP created without the
# big-endian flag, is refused already; the ERR_PTR case is refused there
# by the missing flag too).
test_attach_refusals() {
	init="init_adds 0 12 1 init_overflow -22 init_not_rc -22 init_null -22 attach_null -22"
	rest="attach_unknown_flag -22 attach_create_flag -22"
	expect_eq "$(attachflags rxe0:mlxsim0)" \
		"$init attach 0 attach_be -22 $rest attach_direct_cq 0 attach_created_cq -22 attach_uc -22 destroy_attached 0 group 0 group_other_cq -22 group_err_ptr -22 group_other_dev -22 " \
		"rxe0" || return 1
	expect_eq "$(attachflags mlxsim0)" \
		"$init attach 0 attach_be -22 $rest attach_direct_cq 0 attach_created_cq -22 attach_uc -95 destroy_attached 0 group 0 group_other_cq -22 group_err_ptr -22 " \
		"cx3" || return 1
	expect_eq "$(attachflags mlxsim1)" \
		"$init attach -22 attach_be 0 $rest attach_direct_cq -22 attach_created_cq -22 attach_uc -95 destroy_attached -22 group -22 group_other_cq -22 group_err_ptr -22 " \
		"connectib" || return 1
	for why in "the send CQ must come from ib_alloc_cq()" \
		"the device replies big-endian: attach with MLX_EXT_QP_ATOMIC_BE_REPLY" \
		"MLX_EXT_QP_ATOMIC_BE_REPLY on a device that does not reply big-endian" \
		"flags other than MLX_EXT_QP_ATOMIC_BE_REPLY" "only RC QPs carry atomics"; do
		dmesg | grep -q "mlx_ext_attach_qp: $why" ||
			{ echo "no log line: mlx_ext_attach_qp: $why"; return 1; }
	done
	for why in "the member is a QP of another device" "the group's QPs must share one send CQ"; do
		dmesg | grep -q "rxe0: mlx_ext_attach_qp_group: $why" ||
			{ echo "no log line: mlx_ext_attach_qp_group: $why"; return 1; }
	done
	dmesg | grep -q "mlx_ext_destroy_qp on an attached QP: detached, not destroyed" ||
		{ echo "no warning for mlx_ext_destroy_qp on an attached QP"; return 1; }
	for d in mlxsim0 mlxsim1; do objects_zero $d || return 1; done
}

# apistats_reposts STATS N: with "repost 1", every one of the N operations
# ended (done == posted == N) with its last repost refused with -ESHUTDOWN,
# none otherwise.
apistats_reposts() {
	set -- $1 "$2"
	echo "$*"
	posted=$2 done=$4 other=${12} refused=${16} rother=${18} n=${21}
	expect_eq "$posted $done $other" "$n $n 0" "posted, done, other" &&
		expect_eq "$refused $rother" "$n 0" "reposts refused with -ESHUTDOWN, refused otherwise"
}

# qpmode MODE: how the API commands get their QPs from now on.
qpmode() {
	ulp "qpmode $1" >/dev/null
}

# The API's random operations on attached QPs, each response and the final
# memory equal to the host's reference, on every device class: native on
# cx3 and Connect-IB (attached with MLX_EXT_QP_ATOMIC_BE_REPLY), emulated on
# cx4 and rxe0.
test_attach_exact() {
	qpmode attach || return 1
	api_run mlxsim0 softirq 11 2000 masked none 2000 2000 &&
		api_run mlxsim1 workqueue 11 2000 masked be 2000 2000 &&
		api_run mlxsim2 unbound 11 2000 masked none 2000 2008 &&
		api_run rxe0 softirq 11 2000 masked none 2000 2008 &&
		api_run rxe0 workqueue 11 2000 std none 2000 2000
	rc=$?
	qpmode create
	return $rc
}

# 4 threads, each on its own attached QP, masked operations on fields of
# one word and plain ones on a shared field (the ULP's run_contend): no
# lost update, no value the word never held. Detached before the ULP's
# drain, and (attach_drain) after it.
test_attach_contention() {
	qpmode attach &&
		contend_runs "rxe0 softirq 500" "mlxsim2 workqueue 500" "mlxsim0 unbound 250" &&
		qpmode attach_drain && contend_runs "rxe0 workqueue 250" "mlxsim2 softirq 250"
	rc=$?
	qpmode create
	[ $rc = 0 ] || return 1
	for d in mlxsim0 mlxsim2; do objects_zero $d || return 1; done
}

# group_run DEV HOW WANT WRS: the ULP's "group DEV softirq HOW" (5 masked
# FAs of 1 on one word posted at once: two from QP 0, then one from each of
# QPs 1, 2 and 3) answers WANT, and the QPs posted WRS work requests.
group_run() {
	pool_ulp "group $1 softirq $2"
	echo "$1 $2: $got; $((posted - posted0)) work requests"
	expect_eq "$got" "$3" "$1 $2" &&
		expect_eq "$((posted - posted0))" "$4" "$1 $2: work requests"
}

# Groups (mlx_ext_attach_qp_group): emulated operations of the group's QPs
# on one word combine. On cx4 with completions 300 ms late, so that all 5
# are posted while the first compare-and-swap is in flight:
# - group: the first carries op 0, the second all 4 others (led by QP 0's
#   second, from the value the first left): 2 work requests, each response
#   what those before it left;
# - solo (each QP attached on its own): nothing combines across QPs, at
#   least one work request per operation, same final word;
# - fence: op 2 (QP 1) asks for a fence, which orders only on its own QP:
#   the second batch stops before it and it leads a third on QP 1;
# - detach: QP 0 detached once all are posted: its waiting op 1 ends
#   -ESHUTDOWN (nothing more is posted for a detaching QP), and the others
#   go on, led by QP 1's op 2 on QP 1;
# - destroy: QP 0 made by mlx_ext_create_qp() and the others attached in
#   its group; posted from QPs 1, 2, 0, 3, 3, QP 0 is destroyed while the
#   second batch (led by QP 2's) carries its operation: the destroy waits
#   for it, which succeeds;
# - drain: QP 0 drained (ERR) once all are posted: its executing
#   compare-and-swap is flushed (-ECANCELED, outcome unknown; the simulator
#   carried it out, as rxe's responder does before the flush), its waiting
#   op 1 never began (-ECONNABORTED), and QPs 1 to 3 go on: their batch
#   guesses 0 (the word's value was forgotten), fails, and succeeds from
#   the value returned: 3 work requests (2 if the flushed one never ran).
# Then 4 threads on 4 QPs of a group, masked and plain operations on one
# word (run_contend): exact, on rxe0, cx4 and cx3 (native). Also shown
# failing: posting the next batch on the detached QP ends ops 2..4 with
# -ESHUTDOWN; without the fence rule the fence case takes 2; a created QP
# that others joined, taken for a group of one, is destroyed before its
# operation ends (early 1).
test_attach_group() {
	echo 300 >$SIMDBG/mlxsim2/completion_delay_ms
	group_run mlxsim2 group "ok st 0,0,0,0,0 resp 0,1,2,3,4 word 5" 2 &&
		group_run mlxsim2 fence "ok st 0,0,0,0,0 resp 0,1,2,3,4 word 5" 3 &&
		group_run mlxsim2 detach "ok st 0,-108,0,0,0 resp 0,0,1,2,3 word 4 pending 2 early 0" 2 &&
		group_run mlxsim2 destroy "ok st 0,0,0,0,0 resp 0,1,2,3,4 word 5 pending 1 early 0" 2
	rc=$?
	# The drain comes 100 ms after the posts, while the simulator's work
	# item holds the first compare-and-swap for its 300 ms: it takes effect
	# and is flushed (as a request in flight at the responder when its QP
	# goes to ERR). Should the work item not have begun it by then, it is
	# flushed unexecuted, which is as valid: the word is then 3.
	if [ $rc = 0 ] && ! group_run mlxsim2 drain "ok st -125,-103,0,0,0 resp 0,0,1,2,3 word 4" 3; then
		group_run mlxsim2 drain "ok st -125,-103,0,0,0 resp 0,0,0,1,2 word 3" 2 || rc=1
	fi
	if [ $rc = 0 ]; then
		qpmode attach
		pool_ulp "group mlxsim2 softirq solo"
		qpmode create
		echo "mlxsim2 solo: $got; $((posted - posted0)) work requests"
		resp=$(echo "$got" | sed -n 's/.* resp \([0-9,]*\) .*/\1/p' | tr , '\n' | sort -n | tr '\n' ' ')
		case "$got" in "ok st 0,0,0,0,0 resp "*" word 5") ;; *) rc=1 ;; esac
		expect_eq "$resp" "0 1 2 3 4 " "solo: the responses, sorted" || rc=1
		[ $((posted - posted0)) -ge 5 ] ||
			{ echo "solo: $((posted - posted0)) work requests, expected 5 or more"; rc=1; }
	fi
	echo 0 >$SIMDBG/mlxsim2/completion_delay_ms
	[ $rc = 0 ] || return 1
	qpmode attach_group &&
		contend_runs "rxe0 softirq 500" "mlxsim2 workqueue 500" "mlxsim0 unbound 250"
	rc=$?
	qpmode create
	[ $rc = 0 ] || return 1
	for d in mlxsim0 mlxsim2; do objects_zero $d || return 1; done
}

# Detach with operations in flight: emulated masked FAs contending on one
# word of cx4, completions 300 ms late. Detached while the QP is still in
# RTS, every operation ends (carried out, or ESHUTDOWN for those a batch
# still waited to post) and its done has returned before the detach does;
# drained first, the compare-and-swap executing is carried out and flushed
# (ECANCELED: unknown), and those that waited for the next one end
# ECONNABORTED (not begun); removed with the device (the
# ULP's remove detaches, drains and destroys); and rdma link delete of rxe0.
test_attach_detach_with_ops_in_flight() {
	qpmode attach || return 1
	echo 300 >$SIMDBG/mlxsim2/completion_delay_ms
	expect_eq "$(ulp 'hold mlxsim2 4 api')" "hold 0" "hold on cx4" &&
		expect_eq "$(ulp 'release mlxsim2')" "release 0" "release" &&
		apistats_check inflight && objects_zero mlxsim2 || { qpmode create; return 1; }
	qpmode attach_drain
	expect_eq "$(ulp 'hold mlxsim2 4 api')" "hold 0" "hold on cx4, drained first" &&
		expect_eq "$(ulp 'release mlxsim2')" "release 0" "release" &&
		apistats_check notbegun && objects_zero mlxsim2 || { qpmode create; return 1; }
	# Done callbacks that post again: each is refused with -ESHUTDOWN once
	# the detach has begun, and the detach still returns with all over.
	qpmode attach
	ulp 'repost 1' >/dev/null
	expect_eq "$(ulp 'hold mlxsim2 4 api')" "hold 0" "hold on cx4, reposting" &&
		expect_eq "$(ulp 'release mlxsim2')" "release 0" "release" &&
		s=$(ulp apistats) && apistats_reposts "$s" 4 || { ulp 'repost 0'; qpmode create; return 1; }
	ulp 'repost 0' >/dev/null
	expect_eq "$(ulp 'hold mlxsim2 8 api')" "hold 0" "hold on cx4 again" &&
		sim_del 2 && apistats_check && sim_new "2 cx4" || { qpmode create; return 1; }
	expect_eq "$(ulp 'hold rxe0 8 api')" "hold 0" "hold on rxe0" &&
		rdma link delete rxe0 && apistats_check && add_rxe0
	rc=$?
	qpmode create
	return $rc
}

# The rdma_cm sample (samples/mlx_ext_counters) on rxe0: it connects to
# itself through rxe0's address (rdma_resolve_addr, rdma_resolve_route,
# rdma_create_qp on mlx_ext_init_qp_attr's room, rdma_connect, rdma_accept),
# attaches mlx_ext to its client QP, and 4 threads each add 1 to their own
# 16-bit counter of one word 1000 times (emulated masked fetch-and-add): the
# word ends with every counter at 1000 and no response was wrong. Unloading
# detaches, disconnects, drains and destroys.
test_attach_rdma_cm_sample() {
	counters_run 1000
}

# rdma link delete of rxe0 while the sample's threads run on its attached
# QP: rdma_cm's DEVICE_REMOVAL reaches both sides; the client's handler
# stops the threads and waits for them (each ends its operation in
# flight), then detaches, drains and destroys; the sample reports what it
# did, nothing is left (rxe0 goes away), and a new rxe0 works. (A detach
# with operations still in flight: attach_detach_with_ops_in_flight.)
test_attach_rdma_cm_device_removal() {
	ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
	# (Never dmesg -c: later tests read the whole log.)
	modprobe mlx_ext_counters addr=10.0.2.15 count=60000 &
	pid=$!
	# Until the threads run: the client's QP is attached by then.
	for _ in $(seq 200); do
		grep -q '^mlx_ext_counters ' /proc/modules && ps | grep -q '[m]lx_ext_add' && break
		sleep 0.1
	done
	sleep 1
	rdma link delete rxe0 || { wait $pid; return 1; }
	wait $pid
	line=$(dmesg | grep 'mlx_ext_counters: 4 threads' | tail -n1)
	echo "$line"
	case "$line" in
	*"0 wrong responses (device removed)") ;;
	*) rmmod mlx_ext_counters 2>/dev/null; return 1 ;;
	esac
	[ ! -e $IB/rxe0 ] || { echo "rxe0 still there"; return 1; }
	rmmod mlx_ext_counters || return 1
	add_rxe0 && counters_run 100
}

ktap_main "$@"
