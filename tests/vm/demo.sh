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
step "rmmod mlx_ext; rmmod mlx_ext_sim"
rmmod mlx_ext || exit 1
ls $IB/rxe0/mlx_ext 2>/dev/null || echo "/sys/class/infiniband/rxe0/mlx_ext removed"
rmmod mlx_ext_sim || exit 1
echo "devices left: $(ls $IB | tr '\n' ' ')"
