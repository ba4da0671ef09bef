# SPDX-License-Identifier: GPL-2.0
# VM tests of masked atomics on QPs a ULP creates and owns
# (mlx_ext_init_qp_attr, mlx_ext_attach_qp, mlx_ext_detach_qp;
# Documentation/ulp-api.rst, "Attaching to your own QP"), through the test
# ULP's "qpmode", "attachflags" and the API commands of api.sh run in attach
# mode. Sourced by check.sh after api.sh, on the same devices: mlxsim0 cx3,
# mlxsim1 connectib, mlxsim2 cx4, and rxe0.

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
# destroy).
test_attach_refusals() {
	init="init_adds 0 12 1 init_overflow -22 init_not_rc -22 init_null -22 attach_null -22"
	rest="attach_unknown_flag -22 attach_create_flag -22"
	expect_eq "$(attachflags rxe0)" \
		"$init attach 0 attach_be -22 $rest attach_direct_cq 0 attach_created_cq -22 attach_uc -22 destroy_attached 0 " \
		"rxe0" || return 1
	expect_eq "$(attachflags mlxsim0)" \
		"$init attach 0 attach_be -22 $rest attach_direct_cq 0 attach_created_cq -22 attach_uc -95 destroy_attached 0 " \
		"cx3" || return 1
	expect_eq "$(attachflags mlxsim1)" \
		"$init attach -22 attach_be 0 $rest attach_direct_cq -22 attach_created_cq -22 attach_uc -95 destroy_attached -22 " \
		"connectib" || return 1
	for why in "the send CQ must come from ib_alloc_cq()" \
		"the device replies big-endian: attach with MLX_EXT_QP_ATOMIC_BE_REPLY" \
		"MLX_EXT_QP_ATOMIC_BE_REPLY on a device that does not reply big-endian" \
		"flags other than MLX_EXT_QP_ATOMIC_BE_REPLY" "only RC QPs carry atomics"; do
		dmesg | grep -q "mlx_ext_attach_qp: $why" ||
			{ echo "no log line: mlx_ext_attach_qp: $why"; return 1; }
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
