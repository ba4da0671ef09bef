#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of mlx_ext's atomic API for kernel ULPs
# (include/mlx_ext/mlx_ext.h, Documentation/ulp-api.rst), through the test
# ULP's "api", "apiflags", "hold ... api" and "apistats" commands
# (tests/ulp/).
# The setup makes mlxsim0 (cx3), mlxsim1 (Connect-IB with 2 ports and 5
# VFs) and mlxsim2 (cx4) beside rxe0, with the test ULP loaded
# (lib/stack.sh).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/api.sh

ALL_TESTS="test_api_exact test_api_flag_rules test_api_destroy_with_ops_in_flight
	test_api_emulation_faults test_api_no_atomics test_api_driver_refusal_downgrades
	test_api_driver_lacks_opcodes test_api_post_before_rts test_api_reuse_after_reset
	test_api_abi_and_fence
	test_api_refusal_in_softirq_during_rename test_api_query_caps_across_removal
	test_api_sync_contexts test_api_destroy_context test_api_contention test_api_combining test_api_request_pool
	test_api_request_pool_growth_fails test_api_post_gfp test_api_sync_no_allocation"

setup() {
	stack_up sim && stack_models
}

cleanup() {
	stack_down
}

# 10,000 random masked CAS/FA per device class through the API, every
# response and the final memory equal to the host's reference: native on
# cx3 and Connect-IB (one work request each; Connect-IB's big-endian replies
# converted), emulated on rxe0 and cx4, where the guess cache makes every
# operation one compare-and-swap but the first on each of the 8 words.
test_api_exact() {
	api_run mlxsim0 softirq 12 10000 masked none 10000 10000 || return 1
	api_run mlxsim1 workqueue 12 10000 masked be 10000 10000 || return 1
	api_run mlxsim2 unbound 12 10000 masked none 10000 10008 || return 1
	api_run rxe0 softirq 12 10000 masked none 10000 10008 || return 1
	# Standard CAS/FA through the API, and masked between two adapters.
	api_run rxe0 workqueue 11 2000 std none 2000 2000 || return 1
	api_run mlxsim1 softirq 11 2000 std be 2000 2000 || return 1
	api_run mlxsim2:mlxsim0 workqueue 11 2000 masked none 2000 2008 || return 1
	# 4-byte operations (standard and masked, on either half of the word):
	# one masked work request each on cx3 and Connect-IB, emulated on cx4
	# and rxe0; the other half of each word never changes (the final memory
	# is in the digest).
	api_run mlxsim0 softirq 11 2000 narrow none 2000 2000 || return 1
	api_run mlxsim1 workqueue 13 300 narrow be 300 300 || return 1
	api_run mlxsim2 unbound 13 300 narrow none 300 308 || return 1
	api_run rxe0 softirq 11 2000 narrow none 2000 2008
}

# apiflags DEV: the API's refusals and flag rules on DEV, on one line.
apiflags() {
	ulp "apiflags $1" | tr '\n' ' '
}

# The ATOMIC_BE_REPLY rules (SPEC section 3) and every refusal, per device.
# caps: atomic_cap masked_atomic_cap masked_mode standard sizes
# (MLX_EXT_ATOMIC_HCA 1, HCA_REPLY_BE 3; NATIVE 0, EMULATED 1).
# driver_sees_flag: what the driver says to the flag when mlx_ext does not
# take it out (ib_create_qp directly): every driver refuses it, so the
# successes below prove mlx_ext took it out.
test_api_flag_rules() {
	# sizes 12: 8- and 4-byte operands (MLX_EXT_ATOMIC_SIZE_8 | _4). A
	# 4-byte operation is refused on connectib without the flag, as any.
	common="size16 -22 misaligned -22 bad_opcode -22 no_done -22"
	expect_eq "$(apiflags mlxsim1)" \
		"query 0 caps 3 3 0 1 12 version 1 driver_sees_flag -95 fa_no_flag -95 fa_flag 0 mfa_no_flag -95 direct_cq -22 size4 -95 $common " \
		"connectib" || return 1
	expect_eq "$(apiflags mlxsim0)" \
		"query 0 caps 1 1 0 1 12 version 1 driver_sees_flag -95 fa_no_flag 0 fa_flag -22 mfa_no_flag 0 direct_cq -22 size4 0 $common " \
		"cx3" || return 1
	for d in mlxsim2 rxe0; do
		expect_eq "$(apiflags $d)" \
			"query 0 caps 1 0 1 1 12 version 1 driver_sees_flag -95 fa_no_flag 0 fa_flag -22 mfa_no_flag 0 direct_cq -22 size4 0 $common " \
			"$d" || return 1
	done
	dmesg | grep -q "mlxsim1: atomics refused to a ULP: the device replies big-endian" ||
		{ echo "no log of the refusal on connectib"; return 1; }
	for d in mlxsim0 mlxsim1 mlxsim2; do objects_zero $d || return 1; done
}

# Destroy and device removal while operations are in flight: emulated masked
# FAs contending on one word of cx4 with completions 300 ms late, released
# (mlx_ext_destroy_qp) or removed with the device (del_device: the ULP's
# remove destroys the QP); on cx3 and rxe0 too, and rdma link delete of
# rxe0. Every operation finishes exactly once, nothing is left on the
# device.
test_api_destroy_with_ops_in_flight() {
	echo 300 >$SIMDBG/mlxsim2/completion_delay_ms
	expect_eq "$(ulp 'hold mlxsim2 4 api')" "hold 0" "hold on cx4" || return 1
	expect_eq "$(ulp 'release mlxsim2')" "release 0" "release" || return 1
	apistats_check cancelled || return 1
	objects_zero mlxsim2 || return 1
	expect_eq "$(ulp 'hold mlxsim2 8 api')" "hold 0" "hold on cx4 again" || return 1
	sim_del 2 || return 1
	apistats_check cancelled || return 1
	sim_new "2 cx4" || return 1
	expect_eq "$(ulp 'hold mlxsim0 8 api')" "hold 0" "hold on cx3" || return 1
	expect_eq "$(ulp 'release mlxsim0')" "release 0" "release cx3" || return 1
	apistats_check || return 1
	expect_eq "$(ulp 'hold rxe0 8 api')" "hold 0" "hold on rxe0" || return 1
	expect_eq "$(ulp 'release rxe0')" "release 0" "release rxe0" || return 1
	apistats_check || return 1
	# rdma link delete with operations held: the ULP's remove destroys.
	expect_eq "$(ulp 'hold rxe0 8 api')" "hold 0" "hold on rxe0 again" || return 1
	rdma link delete rxe0 || return 1
	[ ! -e $IB/rxe0 ] || { echo "rxe0 still there"; return 1; }
	apistats_check || return 1
	add_rxe0 || return 1
	expect_eq "$(ulp 'api rxe0 softirq 12 20 masked none' | cut -c1-2)" ok "a new rxe0"
}

# Fault injection during emulation: an error completion ends the operation
# with the errno of its status (REM_OP_ERR: -EREMOTEIO) and nothing is
# left; late completions delay it but it completes.
test_api_emulation_faults() {
	knobs=$SIMDBG/mlxsim2
	echo 1 >$knobs/fail_atomics
	expect_eq "$(ulp 'api mlxsim2 workqueue 12 10 masked none')" "err op -121" \
		"injected error" || return 1
	objects_zero mlxsim2 || return 1
	echo 100 >$knobs/completion_delay_ms
	got=$(ulp 'api mlxsim2 softirq 12 5 masked none')
	echo 0 >$knobs/completion_delay_ms
	expect_eq "${got%% *}" ok "delayed emulation" || return 1
}

# A device with no atomics at all (cx4lx): the record says so and why,
# mlx_ext_query_caps() agrees, and every operation is refused at post time
# with -EOPNOTSUPP, the reason logged once.
test_api_no_atomics() {
	sim_new "3 cx4lx" || return 1
	expect_eq "$(record mlxsim3)" "none none unavailable" "cx4lx record" || return 1
	grep -q "no atomics" $IB/mlxsim3/mlx_ext/reason || { echo "reason: $(cat $IB/mlxsim3/mlx_ext/reason)"; return 1; }
	expect_eq "$(ulp 'apiflags mlxsim3' | sed -n 2p)" "caps 0 0 2 0 0" "caps" || return 1
	expect_eq "$(ulp 'api mlxsim3 softirq 12 10 masked none')" "err op -95" "masked" || return 1
	expect_eq "$(ulp 'api mlxsim3 softirq 12 10 std none')" "err op -95" "standard" || return 1
	expect_eq "$(dmesg | grep -c 'mlxsim3: atomics refused to a ULP')" 1 "refusals logged once" || return 1
	objects_zero mlxsim3 || return 1
	sim_del 3
}

# A driver the rules do not know (the simulator's) that refuses the first
# two compare-and-swaps ever posted to it with EOPNOTSUPP (refuse_atomics;
# cx4's masked operations are emulated over it): the first, the QP's first
# request, is posted again once the QP says it is in RTS, and refused
# again; the operation fails with -EOPNOTSUPP, the device's
# masked_atomic_mode drops to unavailable with the reason, once, and later
# operations are refused at post time. A new device
# starts afresh. Then a refusal of a kind the driver accepted before (here
# too twice, the QP's first request posted again): about the QP, not the
# opcode, so the operation fails and nothing is learnt.
test_api_driver_refusal_downgrades() {
	sim_new "4 cx4" || return 1
	expect_eq "$(record mlxsim4)" "hca none emulated" "before" || return 1
	echo 2 >$SIMDBG/mlxsim4/refuse_atomics || return 1
	expect_eq "$(ulp 'api mlxsim4 softirq 12 10 masked none')" "err op -95" "refused" || return 1
	expect_eq "$(cat $SIMDBG/mlxsim4/refuse_atomics)" "0 0" "knob used" || return 1
	expect_eq "$(record mlxsim4)" "hca none unavailable" "after" || return 1
	grep -q "refused a compare-and-swap (EOPNOTSUPP)" $IB/mlxsim4/mlx_ext/reason ||
		{ echo "reason: $(cat $IB/mlxsim4/mlx_ext/reason)"; return 1; }
	expect_eq "$(ulp 'apiflags mlxsim4' | sed -n 2p)" "caps 1 0 2 0 0" "caps after" || return 1
	expect_eq "$(ulp 'api mlxsim4 softirq 12 10 std none')" "err op -95" "standard after" || return 1
	expect_eq "$(dmesg | grep -c 'mlxsim4: the driver refused an atomic work request (EOPNOTSUPP): masked_atomic_mode is now unavailable')" 1 \
		"downgrade logged once" || return 1
	objects_zero mlxsim4 || return 1
	sim_del 4 || return 1
	sim_new "4 cx4" || return 1
	expect_eq "$(record mlxsim4)" "hca none emulated" "a new device" || return 1
	expect_eq "$(ulp 'api mlxsim4 softirq 12 10 masked none' | cut -c1-2)" ok "accepted first" || return 1
	echo 2 >$SIMDBG/mlxsim4/refuse_atomics || return 1
	expect_eq "$(ulp 'api mlxsim4 softirq 12 10 masked none')" "err op -95" "refused after" || return 1
	expect_eq "$(record mlxsim4)" "hca none emulated" "nothing learnt" || return 1
	expect_eq "$(cat $IB/mlxsim4/mlx_ext/reason)" "" "no reason" || return 1
	expect_eq "$(ulp 'api mlxsim4 softirq 12 10 masked none' | cut -c1-2)" ok "works again" || return 1
	expect_eq "$(dmesg | grep -c 'mlxsim4: the driver refused')" 1 "nothing more logged" || return 1
	objects_zero mlxsim4 || return 1
	sim_del 4
}

# A driver the rules do not know that lacks the masked opcodes, refusing
# them at every post (refuse_opcodes) with EINVAL, as bnxt_re, rxe, hns,
# qedr, mthca and rdmavt do, or with EOPNOTSUPP, as erdma does: the first
# refused request is emulated at once, every response and the final memory
# still equal the host's reference, and the driver sees no masked request
# after the first two (the knob counts 2: the QP's first request, refused,
# is posted again once the QP says it is in RTS, and refused again, which
# is learnt); the mode drops from native to
# emulated with the reason (sysfs, the log once), and standard atomics go
# on natively. One that lacks fetch-and-add: emulated over compare-and-swap
# from the first refusal on (the first fetch-and-add, the QP's first
# request, reaching the driver twice), exact. One that lacks every atomic
# opcode: a refused compare-and-swap, posted as itself or by an emulation, and a
# refused masked request make the device unavailable, with every reason;
# later operations fail with -EOPNOTSUPP whichever errno the driver used,
# and reach the driver no more.
test_api_driver_lacks_opcodes() {
	for errno in EINVAL EOPNOTSUPP; do
		sim_new "6 cx3" || return 1
		knob=$SIMDBG/mlxsim6/refuse_opcodes
		expect_eq "$(cat $knob)" "none 0" "knob at first" || return 1
		for bad in "masked ENOMEM" "some EINVAL" "masked" "masked EINVAL x" "einval"; do
			echo "$bad" >$knob 2>/dev/null && { echo "knob took '$bad'"; return 1; }
		done
		expect_eq "$(cat $knob)" "none 0" "knob after bad writes" || return 1
		expect_eq "$(record mlxsim6)" "hca hca native" "before ($errno)" || return 1
		echo "masked $errno" >$knob || return 1
		api_run mlxsim6 softirq 13 300 masked none 300 308 || return 1
		expect_eq "$(cat $knob)" "masked $errno 2" "the first masked request reached the driver twice" || return 1
		expect_eq "$(record mlxsim6)" "hca hca emulated" "after ($errno)" || return 1
		grep -q "refused a masked atomic work request ($errno)" $IB/mlxsim6/mlx_ext/reason ||
			{ echo "reason: $(cat $IB/mlxsim6/mlx_ext/reason)"; return 1; }
		expect_eq "$(ulp 'apiflags mlxsim6' | sed -n 2p)" "caps 1 1 1 1 12" "caps after ($errno)" || return 1
		api_run mlxsim6 workqueue 13 300 std none 300 300 || return 1
		expect_eq "$(dmesg | grep -c "mlxsim6: the driver refused an atomic work request ($errno): masked_atomic_mode is now emulated")" 1 \
			"logged once ($errno)" || return 1
		objects_zero mlxsim6 || return 1
		sim_del 6 || return 1

		sim_new "8 cx4" || return 1
		echo "fetch_add $errno" >$SIMDBG/mlxsim8/refuse_opcodes || return 1
		api_run mlxsim8 softirq 13 300 std none 300 600 || return 1
		expect_eq "$(cat $SIMDBG/mlxsim8/refuse_opcodes)" "fetch_add $errno 2" "the first fetch-and-add reached the driver twice" || return 1
		expect_eq "$(record mlxsim8)" "hca none emulated" "fetch_add ($errno)" || return 1
		grep -q "refused a fetch-and-add ($errno)" $IB/mlxsim8/mlx_ext/reason ||
			{ echo "reason: $(cat $IB/mlxsim8/mlx_ext/reason)"; return 1; }
		api_run mlxsim8 workqueue 13 300 masked none 300 308 || return 1
		objects_zero mlxsim8 || return 1
		sim_del 8 || return 1

		sim_new "7 cx3" || return 1
		knob=$SIMDBG/mlxsim7/refuse_opcodes
		echo "all $errno" >$knob || return 1
		expect_eq "$(ulp 'api mlxsim7 softirq 12 10 std none')" "err op -95" "standard ($errno)" || return 1
		expect_eq "$(record mlxsim7)" "hca hca native" "standard refused ($errno)" || return 1
		expect_eq "$(ulp 'api mlxsim7 softirq 12 10 masked none')" "err op -95" "masked ($errno)" || return 1
		expect_eq "$(record mlxsim7)" "hca hca unavailable" "all refused ($errno)" || return 1
		why=$(cat $IB/mlxsim7/mlx_ext/reason)
		for r in "masked atomic work request ($errno)" "compare-and-swap ($errno)"; do
			case "$why" in *"$r"*) ;; *) echo "no '$r' in: $why"; return 1 ;; esac
		done
		# Each refusal reached the driver once, the kinds learnt, but the
		# first on each of the two calls' fresh QPs: twice.
		n=$(echo "$why" | grep -o "the driver refused a" | wc -l)
		n=$((n + 2))
		expect_eq "$(cat $knob)" "all $errno $n" "refusals ($errno)" || return 1
		for kind in std masked; do
			expect_eq "$(ulp "api mlxsim7 workqueue 12 10 $kind none")" "err op -95" "$kind later ($errno)" || return 1
		done
		expect_eq "$(cat $knob)" "all $errno $n" "no more refusals ($errno)" || return 1
		objects_zero mlxsim7 || return 1
		sim_del 7 || return 1
	done
}

# A post before RTS (a ULP racing rdma_cm's ESTABLISHED event, or its bug)
# on a fresh adapter whose driver the rules do not know (cx3: native
# masked atomics): refused as ib_post_send() refuses it (-EINVAL), from a
# caller that may sleep (which asks the QP its state) and from one that
# may not (whose request the emulation tries once, and its compare-and-swap
# is refused too); nothing is learnt, masked_atomic_mode stays native, and
# a connected QP then works natively. Then, on a new device, the driver
# lacks the masked opcodes (refuse_opcodes): a connected QP's requests from
# a caller that may not sleep are each refused, then emulated that once,
# exact, and teach nothing (only a query tells a QP in RTS, and such a
# caller cannot make one); the first from a caller that may sleep is
# refused, the QP found in RTS, the request posted again and refused
# again: learnt, emulated, exact, and the next one no longer reaches the
# driver.
test_api_post_before_rts() {
	sim_new "9 cx3" || return 1
	for gfp in kernel atomic; do
		expect_eq "$(ulp "early mlxsim9 init $gfp")" "early -22" "in INIT ($gfp)" || return 1
		expect_eq "$(record mlxsim9)" "hca hca native" "after a post in INIT ($gfp)" || return 1
	done
	expect_eq "$(cat $IB/mlxsim9/mlx_ext/reason)" "" "no reason" || return 1
	expect_eq "$(dmesg | grep -c 'mlxsim9: the driver refused')" 0 "nothing learnt" || return 1
	expect_eq "$(ulp 'early mlxsim9 rts kernel')" "early ok 0 0 0x100000003" "connected" || return 1
	api_run mlxsim9 softirq 13 300 masked none 300 300 || return 1
	expect_eq "$(record mlxsim9)" "hca hca native" "native after" || return 1
	objects_zero mlxsim9 || return 1
	# A new device, whose driver has accepted no masked request yet.
	sim_del 9 && sim_new "9 cx3" || return 1
	echo "masked EINVAL" >$SIMDBG/mlxsim9/refuse_opcodes || return 1
	expect_eq "$(ulp 'early mlxsim9 rts atomic')" "early ok 0 0 0x100000003" "lacking masked, atomic" || return 1
	expect_eq "$(cat $SIMDBG/mlxsim9/refuse_opcodes)" "masked EINVAL 2" "masked requests the driver saw" || return 1
	expect_eq "$(record mlxsim9)" "hca hca native" "nothing learnt from an atomic caller" || return 1
	expect_eq "$(ulp 'early mlxsim9 rts kernel')" "early ok 0 0 0x100000003" "lacking masked, kernel" || return 1
	expect_eq "$(cat $SIMDBG/mlxsim9/refuse_opcodes)" "masked EINVAL 4" "the first posted twice, the second emulated" || return 1
	expect_eq "$(record mlxsim9)" "hca hca emulated" "learnt after the query" || return 1
	expect_eq "$(dmesg | grep -c 'mlxsim9: the driver refused an atomic work request (EINVAL): masked_atomic_mode is now emulated')" 1 \
		"logged once" || return 1
	objects_zero mlxsim9 || return 1
	sim_del 9
}

# A QP that sent (a fetch-and-add, which the driver accepted) and was taken
# back through RESET to INIT, as a ULP that reuses its QP on reconnect
# does: its first masked request, on a driver the rules do not know (cx3),
# is refused as ib_post_send() refuses it (-EINVAL), from a caller that may
# sleep and from one that may not, and the device's record stays: no
# refusal is learnt from what the QP did before its RESET. Connected
# again, the QP's masked request is carried out natively.
test_api_reuse_after_reset() {
	n=$(dmesg | grep -c 'mlxsim9: the driver refused')
	# A fresh device each time: one whose driver accepted a masked
	# request learns nothing from a refusal anyway.
	for gfp in atomic kernel; do
		sim_new "9 cx3" || return 1
		expect_eq "$(ulp "early mlxsim9 reuse $gfp")" "early reuse 0 -22 0 0x100000003" "reused ($gfp)" || return 1
		expect_eq "$(record mlxsim9)" "hca hca native" "after ($gfp)" || return 1
		expect_eq "$(cat $IB/mlxsim9/mlx_ext/reason)" "" "no reason ($gfp)" || return 1
		objects_zero mlxsim9 || return 1
		sim_del 9 || return 1
	done
	expect_eq "$(dmesg | grep -c 'mlxsim9: the driver refused')" "$n" "nothing learnt"
}

# The checked contract of the calls that take a structure (API 1.3): the
# header's version and the structure's size travel with each call; another
# major version, a newer minor one, another size, unknown flags and a
# non-zero reserved field are refused with -EINVAL, the version mismatches
# with a message naming the caller (the test ULP); an older minor is fine,
# and so are the unversioned calls of API 1.2 that older ULPs make.
# MLX_EXT_ATOMIC_FENCE puts IB_SEND_FENCE on the operation's work request:
# natively on cx3 (one), on each compare-and-swap of an emulation on cx4;
# operations without it are not fenced. modinfo shows the API version.
test_api_abi_and_fence() {
	want="query_major -22 query_newer -22 query_size -22 query_older 0 query_1_2 0 post_size -22 post_major -22 sync_size -22 sync_newer -22 reserved -22 flags -22 fence 0 plain 0 sync_1_2 0 "
	for dev in mlxsim0 mlxsim2; do
		before=$(cat $SIMDBG/$dev/fenced_atomics)
		expect_eq "$(ulp "abi $dev")" "$want" "$dev" || return 1
		after=$(cat $SIMDBG/$dev/fenced_atomics)
		[ $((after - before)) -ge 1 ] ||
			{ echo "$dev: $((after - before)) fenced atomics for one fenced operation"; return 1; }
		[ $dev != mlxsim0 ] || expect_eq "$((after - before))" 1 "cx3: one fenced work request" || return 1
	done
	# Unfenced operations: none fenced.
	before=$(cat $SIMDBG/mlxsim2/fenced_atomics)
	api_run mlxsim2 softirq 11 2000 masked none 2000 2008 || return 1
	expect_eq "$(cat $SIMDBG/mlxsim2/fenced_atomics)" "$before" "no fence asked" || return 1
	for call in mlx_ext_query_caps mlx_ext_post_atomic mlx_ext_atomic; do
		dmesg | grep -q "mlx_ext: .*\[mlx_ext_test_ulp\] called $call() built against API" ||
			{ echo "no message naming the caller of $call: $(dmesg | grep 'built against API' | tail -3)"; return 1; }
	done
	# scripts/check.sh read the header's version into /extra/api_version.
	expect_eq "$(modinfo -F api_version mlx_ext)" "$(cat /extra/api_version)" "modinfo api_version" || return 1
}

# The driver-refused path in softirq context while the device is renamed:
# in a burst on one word, the first compare-and-swap is posted by the ULP's
# thread and accepted; the next, which the emulation posts from the send
# CQ's handler (IB_POLL_SOFTIRQ) when the first completes, is refused
# ("1 1": accept one, refuse one). The batch ends there, in softirq, while
# rename callbacks rewrite the device's name in process context; nothing is
# learnt (the driver accepted a compare-and-swap before: the refusal is
# about the QP, not the opcode), and lockdep stays quiet.
test_api_refusal_in_softirq_during_rename() {
	if kernel_lacks PROVE_LOCKING; then
		echo "the kernel has no lockdep (CONFIG_PROVE_LOCKING)"
		return $KSFT_SKIP
	fi
	lockdep_live || { echo "lockdep was off before the test"; return 1; }
	sim_new "5 cx4" || return 1
	echo "1 1" >$SIMDBG/mlxsim5/refuse_atomics || return 1
	(
		i=0
		while [ $i -lt 20 ]; do
			rdma dev set mlxsim5 name mlxrn5 && rdma dev set mlxrn5 name mlxsim5 || exit 1
			i=$((i + 1))
		done
	) &
	renames=$!
	got=$(ulp 'burst mlxsim5|mlxrn5 softirq 8')
	wait $renames || { echo "a rename failed"; return 1; }
	expect_eq "$got" "err op -95" "the burst" || return 1
	# The refused operations ended in the send CQ's handler, in softirq.
	expect_eq "$(ulp lastfail)" "softirq 1" "where the refusal ended them" || return 1
	expect_eq "$(cat $SIMDBG/mlxsim5/refuse_atomics)" "0 0" "knob used" || return 1
	expect_eq "$(record mlxsim5)" "hca none emulated" "after" || return 1
	expect_eq "$(dmesg | grep -cE 'mlx(sim|rn)5: the driver refused')" 0 "nothing learnt" || return 1
	lockdep_live || { echo "lockdep reported: $(dmesg | grep -m1 -A3 -E '^WARNING: ')"; return 1; }
	objects_zero mlxsim5 || return 1
	sim_del 5
}

# A ULP that is not an ib_client nested in mlx_ext's (an rdma_cm user hears
# of a removal only after mlx_ext's remove) calls mlx_ext_query_caps() in a
# loop on a device it holds while the device is removed: each call sees the
# record whole or fails with -ENODEV once mlx_ext's remove has begun, never
# anything else (KASAN checks that none reads freed memory), and the
# removal completes once the ULP gives its reference back.
test_api_query_caps_across_removal() {
	for model in cx4 cx3; do
		sim_new "6 $model" || return 1
		expect_eq "$(ulp 'capsloop mlxsim6')" "capsloop 0" "$model: loop started" || return 1
		sleep 0.3
		sim_del 6 || return 1
		got=$(ulp capsresult)
		echo "$model: $got"
		case "$got" in
		"ok 0 "*) echo "$model: no call succeeded before the removal"; return 1 ;;
		"ok "*" enodev 1 other 0 running 0") ;;
		*) echo "$model: expected every call ok until one -ENODEV"; return 1 ;;
		esac
		[ ! -e $IB/mlxsim6 ] || { echo "$model: the device outlived its removal"; return 1; }
		bad=$(dmesg | grep -E -A2 'BUG: KASAN|general protection')
		[ -z "$bad" ] || { echo "$model: $bad"; return 1; }
	done
}

# mlx_ext_atomic() from the send CQ's own completion context (an
# operation's done callback calling it on the same QP) is refused with
# -EDEADLK and one warning: in softirq (IB_POLL_SOFTIRQ), and in the CQ's
# work item (IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE), where waiting
# would never end: the completion it waits for is the next one that work
# item would deliver. From a task, it waits killable: a fatal signal ends
# the wait with -EINTR while the operation goes on (it completes seconds later;
# its memory is mlx_ext's, test_no_leaks and KASAN check it).
test_api_sync_contexts() {
	for poll in softirq workqueue unbound; do
		expect_eq "$(ulp "syncself mlxsim2 $poll")" "status 0 inner -35" "$poll" || return 1
	done
	expect_eq "$(dmesg | grep -c 'mlx_ext_atomic() called from')" 1 "warnings" || return 1
	got=$(ulp 'syncwait mlxsim2')
	case "$got" in "ret 0 response "*) ;; *) echo "unkilled: $got"; return 1 ;; esac
	n=$(dmesg | grep -c 'syncwait: waiting')
	# Every send request is delayed, the set-up's registrations too: the
	# ULP says when it is in mlx_ext_atomic(), the kill comes well inside
	# that operation's 4 s.
	echo 4000 >$SIMDBG/mlxsim2/completion_delay_ms
	sh -c "echo 'syncwait mlxsim2' >$ULPCTL" &
	pid=$!
	wait_until 30 sh -c "[ \$(dmesg | grep -c 'syncwait: waiting') -gt $n ]" ||
		{ echo "syncwait never waited"; echo 0 >$SIMDBG/mlxsim2/completion_delay_ms; return 1; }
	kill -9 $pid
	wait $pid
	echo 0 >$SIMDBG/mlxsim2/completion_delay_ms
	expect_eq "$(ulp syncresult)" "ret -4" "the killed wait" || return 1
	objects_zero mlxsim2
}

# mlx_ext_destroy_qp() checks its context as mlx_ext_detach_qp() does: from
# the send (or, for a QP mlx_ext made, receive) CQ's own completion work
# item, a drain would wait for ever for completions only that work item
# delivers. The ULP destroys, from the done callback of an operation, a
# created QP still in RESET (nothing to drain, so the call returns) whose
# send CQ, then receive CQ, is that IB_POLL_WORKQUEUE CQ, each twice: each
# call says so in a line of its own (rate-limited), and the first also
# with a backtrace (a WARN_ONCE), so that a second misuse does not hang
# without a word; the QP is gone. An attached QP whose receive CQ is that
# CQ is only detached, which waits for nothing of it: no warning. The
# WARNING line is this test's: the clean-log tests leave it, and the call
# trace that follows it, out (expect_splat), and every other splat still
# counts.
test_api_destroy_context() {
	warns=$(dmesg | grep -cE 'WARNING: .*mlx_ext_destroy_qp\+')
	for how in send recv; do
		case $how in
		send) why="its own send CQ's completion work item" ;;
		recv) why="its own receive CQ's completion work item" ;;
		esac
		msg="mlx_ext_destroy_qp() called from $why: it will wait for ever ("
		n=$(dmesg | grep -cF "$msg")
		for i in 1 2; do
			expect_eq "$(ulp "destroyself mlxsim2 $how")" "status 0 destroyed 1" "destroyself $how $i" || return 1
		done
		expect_eq "$(($(dmesg | grep -cF "$msg") - n))" 2 "the lines ($how)" || return 1
	done
	n=$(dmesg | grep -c "it will wait for ever")
	expect_eq "$(ulp "destroyself mlxsim2 attached")" "status 0 destroyed 1" "destroyself attached" || return 1
	expect_eq "$(dmesg | grep -c "it will wait for ever")" "$n" "no line for an attached QP" || return 1
	expect_eq "$(($(dmesg | grep -cE 'WARNING: .*mlx_ext_destroy_qp\+') - warns))" 1 "one backtrace" || return 1
	expect_splat "$(dmesg | grep -E 'WARNING: .*mlx_ext_destroy_qp\+' | tail -n 1)"
	objects_zero mlxsim2
}

# 4 kernel threads, each with its own QP, on one word (the ULP's
# run_contend): emulated masked FA into disjoint fields, masked CAS on them,
# plain FA and CAS on a shared field. Every response shows the thread's own
# field exactly as its own count (no lost update, no value the word never
# held) and no field going back; the final word holds every count. On the
# emulated devices (rxe0, cx4), and on cx3 natively.
test_api_contention() {
	contend_runs "rxe0 softirq 1000" "mlxsim2 workqueue 1000" "mlxsim0 unbound 500" ||
		return 1
	for d in mlxsim0 mlxsim2; do objects_zero $d || return 1; done
}

# Combining: 8 emulated masked FAs posted at once on one word from one QP,
# 50 rounds (the ULP's run_burst): every response shows the op's own field
# as its count, the responses of a round agree on one order, the final word
# holds every add; and on cx4 the adapter executed far fewer
# compare-and-swaps than there were operations (one round: the first alone,
# the other 7 in one; 2 per round at best, the first cold).
test_api_combining() {
	before=$(cat $SIMDBG/mlxsim2/atomics)
	got=$(ulp 'burst mlxsim2 softirq 8')
	after=$(cat $SIMDBG/mlxsim2/atomics)
	case "$got" in
	"ok ops 400 "*) ;;
	*) echo "cx4: $got"; return 1 ;;
	esac
	cas=$((after - before))
	echo "cx4: $got; $cas compare-and-swaps for 400 operations"
	[ "$cas" -le 200 ] || { echo "no combining: $cas compare-and-swaps"; return 1; }
	got=$(ulp 'burst rxe0 workqueue 8')
	echo "rxe0: $got"
	case "$got" in "ok ops 400 "*) ;; *) return 1 ;; esac
	# Native: nothing to combine, one work request each.
	before=$(cat $SIMDBG/mlxsim0/atomics)
	got=$(ulp 'burst mlxsim0 softirq 8')
	after=$(cat $SIMDBG/mlxsim0/atomics)
	case "$got" in "ok ops 400 attempts 400 "*) ;; *) echo "cx3: $got"; return 1 ;; esac
	expect_eq "$((after - before))" 400 "cx3 atomics"
}

# flight_pool DEV KIND DEPTH OPS MIN MAX: the ULP keeps DEPTH operations of
# KIND in flight on one QP (each reposted from its done) until OPS are done,
# all exact; the QP's pool made between MIN and MAX chunks (8 requests
# each) for it, took one request per operation, and freed every chunk with
# the QP.
flight_pool() {
	pool_ulp "flight $1 softirq $3 $4 $2"
	chunks=$((made - made0))
	echo "$1 $2 depth $3: $got; $chunks chunks for $((taken - taken0)) requests, $((posted - posted0)) work requests"
	case "$got" in "ok ops $4 "*) ;; *) return 1 ;; esac
	[ "$chunks" -ge "$5" ] && [ "$chunks" -le "$6" ] ||
		{ echo "$1 $2 depth $3: $chunks chunks made, expected $5..$6"; return 1; }
	expect_eq "$((taken - taken0))" "$4" "$1 $2 depth $3: requests taken" || return 1
	# Native and standard: one work request per operation; emulated: at
	# most one per operation and one more per word (combining and the
	# guess cache make it fewer).
	case "$1 $2" in
	mlxsim0*|"rxe0 std") expect_eq "$((posted - posted0))" "$4" "$1 $2 depth $3: work requests" || return 1 ;;
	*) [ $((posted - posted0)) -ge 1 ] && [ $((posted - posted0)) -le $(($4 + 1)) ] ||
		{ echo "$1 $2 depth $3: $((posted - posted0)) work requests"; return 1; } ;;
	esac
	expect_eq "$live" "$live0" "$1 $2 depth $3: chunks left after the QP"
}

# No allocation per operation (issue 22 section 3): a QP's requests come
# from its pool (rust/ib/request.rs), chunks of 8 with their reply buffers
# mapped once; the pool grows only when more operations are pending at once
# than it holds, and a slot is free again before the ULP's done runs. So
# 2,000 operations one at a time take the QP's first chunk only, and 64 kept
# in flight take at most 8 however many are done: native on cx3, standard
# and emulated on rxe0 (where pending operations wait in combining batches).
# With the simulator's completions held back (completion_delay_ms: the
# first completes 100 ms after the first post, far longer than 64 posts
# take), all 64 are pending at once: exactly 8 chunks, and 3 for 17
# emulated on cx4.
test_api_request_pool() {
	[ -r $POOL ] || { echo "no $POOL"; return 1; }
	flight_pool mlxsim0 masked 1 2000 1 1 || return 1
	flight_pool mlxsim0 masked 64 4000 1 8 || return 1
	flight_pool mlxsim0 std 8 2000 1 1 || return 1
	flight_pool rxe0 std 64 2000 1 8 || return 1
	flight_pool rxe0 masked 64 2000 1 8 || return 1
	echo 100 >$SIMDBG/mlxsim0/completion_delay_ms
	echo 100 >$SIMDBG/mlxsim2/completion_delay_ms
	flight_pool mlxsim0 masked 64 64 8 8 && flight_pool mlxsim2 masked 17 17 3 3
	rc=$?
	echo 0 >$SIMDBG/mlxsim0/completion_delay_ms
	echo 0 >$SIMDBG/mlxsim2/completion_delay_ms
	[ $rc = 0 ] || return 1
	# Bad input to the ULP's command is refused.
	echo 'flight mlxsim0 softirq 0 10 masked' >$ULPCTL 2>/dev/null &&
		{ echo "depth 0 accepted"; return 1; }
	return 0
}

# Pool growth that fails: each allocation made with mlx_ext on the stack by
# a flight of 24 on cx3, its completions held back so that all 24 are
# posted first, fails in turn (failslab's fail-nth, in the task that posts
# them: the QP's setup, its pool and first chunk, the chunks that the 9th
# and 17th posts add). A failed growth is that post's -ENOMEM; the
# operations already posted complete, and nothing is left: no chunk, no
# leak (test_no_leaks), no splat. Then a flight works again.
test_api_request_pool_growth_fails() {
	[ -d $FAILSLAB ] || { echo "no $FAILSLAB"; return $KSFT_SKIP; }
	read -r made0 live0 taken0 posted0 <<EOF_STATS
$(pool_stats)
EOF_STATS
	echo 100 >$SIMDBG/mlxsim0/completion_delay_ms
	failslab_on_mlx_ext
	n=1 rc=0 post_enomem=0 got=
	while [ $n -le 60 ]; do
		fail_nth $n "echo 'flight mlxsim0 softirq 24 24 masked' >$ULPCTL" ||
			{ echo "allocation $n: the command failed"; rc=1; break; }
		got=$(cat $ULPCTL)
		case "$got" in
		"ok ops 24 "*) [ $INJECTED = 0 ] && break ;;
		"err op -12") post_enomem=$((post_enomem + 1)) ;;
		"err "*" -12") ;;
		*) echo "allocation $n: $got"; rc=1; break ;;
		esac
		read -r made live taken posted <<EOF_STATS
$(pool_stats)
EOF_STATS
		[ "$live" = "$live0" ] || { echo "allocation $n ($got): $live chunks left, $live0 before"; rc=1; break; }
		n=$((n + 1))
	done
	failslab_off
	echo 0 >$SIMDBG/mlxsim0/completion_delay_ms
	echo "$((n - 1)) allocations failed in turn; $post_enomem were a post's growth"
	[ $rc = 0 ] || return 1
	[ "$got" != "${got#ok}" ] || { echo "never got through: $got"; return 1; }
	expect_eq "$post_enomem" 2 "growths failed at a post (the 9th and the 17th)" || return 1
	flight_pool mlxsim0 masked 64 400 1 8
}

# same_flags A B: the gfp_flags A and B of a kmem trace name the same flags
# (show_gfp_flags, include/trace/events/mmflags.h, names them in the order
# of its table).
same_flags() {
	[ "$(echo "$1" | tr '|' '\n' | sort | tr '\n' ' ')" = \
		"$(echo "$2" | tr '|' '\n' | sort | tr '\n' ' ')" ]
}

# The GFP a ULP passes to mlx_ext_post_atomic() is what mlx_ext allocates
# with (issue 37 item 2): a flight of 24 on cx3, its completions held back,
# posted by the writing task with GFP_NOWAIT and then with
# GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN. The kmem:kmalloc
# events of the pool's chunk allocations (mlx_ext_ib_alloc_chunk) are the
# QP's first chunk, at attach (GFP_KERNEL), and the growths at the 9th and
# 17th posts, with the caller's flags: not GFP_ATOMIC (reserves) or
# GFP_KERNEL (sleeps), as when mlx_ext kept only whether the caller may
# sleep. (The whole trace is read: a "call_site.function" filter matched
# nothing of a module here.)
test_api_post_gfp() {
	tr=/sys/kernel/tracing
	[ -d $tr/events ] || mount -t tracefs nodev $tr 2>/dev/null
	ev=$tr/events/kmem/kmalloc
	[ -d $ev ] || { echo "no kmem:kmalloc event"; return $KSFT_SKIP; }
	echo 100 >$SIMDBG/mlxsim0/completion_delay_ms
	# Room for every allocation of the command (a few hundred events).
	size=$(sed 's/.*expanded: \([0-9]*\).*/\1/; s/ .*//' $tr/buffer_size_kb)
	echo 4096 >$tr/buffer_size_kb
	rc=0
	for case in "nowait GFP_NOWAIT" "quiet GFP_KERNEL_ACCOUNT|__GFP_NORETRY|__GFP_NOWARN"; do
		set -- $case
		echo >$tr/trace
		echo 1 >$ev/enable
		got=$(ulp "flight mlxsim0 softirq 24 24 masked $1")
		echo 0 >$ev/enable
		flags=$(sed -n 's/.*call_site=mlx_ext_ib_alloc_chunk+.* gfp_flags=\([^ ]*\) .*/\1/p' $tr/trace)
		echo "$1: $got; chunks allocated with:" $flags
		case "$got" in "ok ops 24 "*) ;; *) rc=1; break ;; esac
		set -- $flags
		[ $# = 3 ] || { echo "expected 3 chunk allocations, got $#"; rc=1; break; }
		expect_eq "$1" GFP_KERNEL "the QP's first chunk" || { rc=1; break; }
		same_flags "$2" "${case#* }" && same_flags "$3" "${case#* }" ||
			{ echo "the growths did not take the caller's ${case#* }"; rc=1; break; }
	done
	echo >$tr/trace
	echo $size >$tr/buffer_size_kb
	echo 0 >$SIMDBG/mlxsim0/completion_delay_ms
	return $rc
}

# mlx_ext_atomic() allocates nothing while its mempool keeps a free waiter
# (rust/helpers/export.c: 16 kept, over a slab cache of their own): on a
# held QP, two synchronous operations, each with the first allocation made
# with mlx_ext on the stack set to fail (failslab's fail-nth), succeed and
# make none. Native on cx3, emulated on rxe0. The positive control, under
# the same filter: with the 8 requests of the held QP's pool all pending
# (cx3's completions held back), the same call must grow the pool, and
# that allocation fails: -ENOMEM, injected. Without it, a filter that
# missed mlx_ext would pass the first part.
test_api_sync_no_allocation() {
	[ -d $FAILSLAB ] || { echo "no $FAILSLAB"; return $KSFT_SKIP; }
	rc=0
	for dev in mlxsim0 rxe0; do
		expect_eq "$(ulp "hold $dev 0 api")" "hold 0" "$dev: hold" || { rc=1; break; }
		for n in 0 1; do
			failslab_on_mlx_ext
			got=$(heldsync_nth $dev)
			echo "$dev: an allocation set to fail: $got"
			expect_eq "$got" "heldsync 0 response $n injected 0" "$dev: call $n" || rc=1
		done
		expect_eq "$(ulp "release $dev")" "release 0" "$dev: release" || rc=1
		[ $rc = 0 ] || return 1
	done
	# The filter is set first (it reads the module's text range), so that
	# the call comes well inside the held requests' 3 s (the set-up's
	# registration is delayed too, and the ULP waits 5 s for it).
	failslab_on_mlx_ext
	echo 3000 >$SIMDBG/mlxsim0/completion_delay_ms
	if expect_eq "$(ulp "hold mlxsim0 8 api")" "hold 0" "the pool's 8 pending"; then
		got=$(heldsync_nth mlxsim0)
		echo "positive control, a growth set to fail: $got"
		expect_eq "$got" "heldsync -12 response 0 injected 1" "the growth failed" || rc=1
	else
		rc=1
	fi
	failslab_off
	echo 0 >$SIMDBG/mlxsim0/completion_delay_ms
	expect_eq "$(ulp "release mlxsim0")" "release 0" "release" || rc=1
	return $rc
}

# heldsync_nth DEV: one "heldsync DEV" with the first allocation made with
# mlx_ext on the stack set to fail (the filter failslab_on_mlx_ext set,
# cleared after); prints its result and whether an allocation was
# injected: "heldsync RET response V injected 0|1".
heldsync_nth() {
	fail_nth 1 "echo 'heldsync $1' >$ULPCTL"
	failslab_off
	echo "$(cat $ULPCTL) injected $INJECTED"
}

ktap_main "$@"
