#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench` (its VM half): the atomic API's costs on the test kernel, in
# one run, with the ratios of issue 11's targets. A benchmark, not a test:
# it prints figures; it fails only if something could not run.

. /tests/common.sh

ULPCTL=/sys/kernel/debug/mlx_ext_test_ulp/ctl
OPS=${MLX_EXT_BENCH_OPS:-4000}

add_rxe0 || { echo "could not add rxe0"; exit 1; }
ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
modprobe mlx_ext_sim || exit 1
echo "0 cx3" >/sys/bus/mlx_ext_sim/new_device || exit 1
echo "2 cx4" >/sys/bus/mlx_ext_sim/new_device || exit 1
modprobe mlx_ext_test_ulp || exit 1

# bench DEV ARGS: the ULP's bench lines, "DEV NAME VALUE UNIT (...)".
bench() {
	dev=$1
	shift
	echo "bench $dev $*" >$ULPCTL || return 1
	sed "s/^/$dev /" $ULPCTL
}

# value DEV NAME: the figure of one line of $out.
value() {
	echo "$out" | awk -v d="$1" -v n="$2" '$1 == d && $2 == n { print $3 }'
}

# ratio A B: A / B with two decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'
}

echo "# mlx_ext atomics benchmark: $OPS operations per figure, kernel $(uname -r), $(nproc) CPUs (QEMU)"
out=$( (bench rxe0 softirq "$OPS"; bench mlxsim0 softirq "$OPS" short;
	bench mlxsim2 softirq "$OPS" short) 2>&1) || { echo "$out"; exit 1; }
echo "$out"
if echo "$out" | grep -q error; then
	echo "# some figures could not be taken"
	exit 1
fi
cas=$(value rxe0 cas)
echo
echo "# ratios (targets from issue 11)"
echo "rxe0 emulated masked CAS warm / native CAS: $(ratio "$(value rxe0 masked_cas_warm)" "$cas")x (target <= 1.1x)"
echo "rxe0 emulated masked FA warm / native CAS:  $(ratio "$(value rxe0 masked_fa_warm)" "$cas")x (target <= 1.1x)"
echo "rxe0 emulated masked CAS cold / native CAS: $(ratio "$(value rxe0 masked_cas_cold)" "$cas")x (target <= 2.1x)"
echo "rxe0 emulated masked FA cold / native CAS:  $(ratio "$(value rxe0 masked_fa_cold)" "$cas")x (target <= 2.1x)"
echo "rxe0 4-way emulated masked FA / native FA throughput, a QP per thread: $(ratio "$(value rxe0 masked_fa_4way)" "$(value rxe0 fa_4way)")x (target >= 0.5x)"
echo "rxe0 4-way emulated masked FA / native FA throughput, one QP (combining): $(ratio "$(value rxe0 masked_fa_4way_1qp)" "$(value rxe0 fa_4way_1qp)")x (target >= 0.5x)"
echo "mlx_ext over plain verbs, CAS on rxe0: $(ratio "$cas" "$(value rxe0 verbs_cas)")x"
echo "sim masked FA: emulated cx4 / native cx3: $(ratio "$(value mlxsim2 masked_fa_warm)" "$(value mlxsim0 masked_fa_warm)")x"
echo "sim masked CAS: emulated cx4 / native cx3: $(ratio "$(value mlxsim2 masked_cas_warm)" "$(value mlxsim0 masked_cas_warm)")x"
