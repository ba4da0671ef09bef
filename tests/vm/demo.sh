#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: load mlx_ext next to Soft-RoCE and three simulated Mellanox
# adapters, and show what it reports for each.

. /tests/common.sh

step() { echo; echo "### $*"; }

step "modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0"
add_rxe0 || { echo "could not add rxe0"; exit 1; }
step "modprobe mlx_ext_sim; a ConnectX-3, a two-port Connect-IB with 5 VFs, a ConnectX-4"
modprobe mlx_ext_sim || exit 1
for dev in "0 cx3" "1 connectib 2 5" "2 cx4"; do
	echo "echo \"$dev\" > /sys/bus/mlx_ext_sim/new_device"
	echo "$dev" >/sys/bus/mlx_ext_sim/new_device || exit 1
done
rdma dev show
rdma link show
step "modprobe mlx_ext"
modprobe mlx_ext || exit 1
dmesg | grep 'mlx_ext: '
step "what mlx_ext reports (/sys/class/infiniband/*/mlx_ext/)"
report
step "a kernel ULP (tests/ulp/) posts masked atomics through include/mlx_ext/mlx_ext.h"
ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
modprobe mlx_ext_test_ulp || exit 1
ctl=/sys/kernel/debug/mlx_ext_test_ulp/ctl
for d in "rxe0 none" "mlxsim0 none" "mlxsim1 be" "mlxsim2 none"; do
	set -- $d
	echo "api $1 softirq 7 100 masked $2" >$ctl || exit 1
	echo "$1 ($(cat $IB/$1/mlx_ext/masked_atomic_mode)): 100 random masked CAS/FA: $(cat $ctl)"
done
echo "(one digest of every response and the final memory: the same on every device, and the VM tests compare it with the host's reference arithmetic; attempts counts work requests, one per emulated operation but the first on each of the 8 words)"
rmmod mlx_ext_test_ulp || exit 1
step "rmmod mlx_ext; rmmod mlx_ext_sim"
rmmod mlx_ext || exit 1
ls $IB/rxe0/mlx_ext 2>/dev/null || echo "/sys/class/infiniband/rxe0/mlx_ext removed"
rmmod mlx_ext_sim || exit 1
echo "devices left: $(ls $IB | tr '\n' ' ')"
