#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: load mlx_ext next to Soft-RoCE and show what it reports.

. /tests/common.sh

step() { echo; echo "### $*"; }

step "modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0"
add_rxe0 || { echo "could not add rxe0"; exit 1; }
rdma link show
step "modprobe mlx_ext"
modprobe mlx_ext || exit 1
dmesg | grep 'mlx_ext: '
step "what mlx_ext reports (/sys/class/infiniband/*/mlx_ext/)"
report
step "rmmod mlx_ext"
rmmod mlx_ext || exit 1
ls $IB/rxe0/mlx_ext 2>/dev/null || echo "/sys/class/infiniband/rxe0/mlx_ext removed"
