#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: load mlx_ext next to Soft-RoCE and three simulated Mellanox
# adapters, show what it reports for each, a ULP's masked atomics, and a VF
# GUID table converging with the simulated SA.

. /tests/lib/common.sh

step() { echo; echo "### $*"; }

step "modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0"
add_rxe0 || { echo "could not add rxe0"; exit 1; }
step "modprobe mlx_ext_sim; a ConnectX-3, a two-port Connect-IB with 5 VFs, a ConnectX-4"
modprobe mlx_ext_sim || exit 1
for dev in "0 cx3 1 5" "1 connectib 2 5" "2 cx4"; do
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
step "the VF GUID tables of mlxsim0 (ConnectX-3: alias GUIDs, 5 VFs): /sys/class/infiniband/mlxsim0/iov/"
I=$IB/mlxsim0/iov
SA=/sys/kernel/debug/mlx_ext_sim/mlxsim0/sa1
ls $I
echo "port 1, the PF's and VF1's entries (admin_guids, gids; each VF's base entry was assigned by the SM):"
for n in 0 1 2 3 27 28; do
	printf '  %3d  %-16s  %s\n' $n "$(cat $I/ports/1/admin_guids/$n)" "$(cat $I/ports/1/gids/$n)"
done
for f in $(ls $I | grep -v ports); do
	echo "  function $f: $(ls $I/$f/ports/1/gid_idx | wc -l) entries from $(cat $I/$f/ports/1/gid_idx/0), $(cat $I/$f/ports/1/state), $(cat $I/$f/ports/1/guid_events) GUID event(s)"
done
echo "the simulated SA's log (TID FIRST_MS METHOD ATTR BLOCK MASK COPIES STATUS DECLINED):"
sed 's/^/  /' $SA
step "echo 0x1234 > iov/ports/1/admin_guids/5, with the SA declining entry 5 twice"
echo "decline 5 2" >$SA
echo 0x1234 >$I/ports/1/admin_guids/5
for t in 1 2 3 4; do
	sleep 1
	echo "after ${t} s: gids/5 $(cat $I/ports/1/gids/5)"
done
echo "the requests for entry 5, retried 1 s then 2 s after a decline:"
tail -n +4 $SA | awk '$5 == 0 && $6 == 20' | sed 's/^/  /'
echo "the port's GID table as ib_core shows it: $(cat $IB/mlxsim0/ports/1/gids/5)"
step "the VFs of mlxsim1 (Connect-IB: a vport per VF, no alias GUIDs): echo 0x2222 > iov/<VF1>/ports/1/port_guid"
V=$IB/mlxsim1/iov/$(ls $IB/mlxsim1/iov | sed -n 2p)/ports/1
echo 0x1111 >$V/node_guid && echo 0x2222 >$V/port_guid || exit 1
echo "VF1 port 1: node_guid $(cat $V/node_guid), port_guid $(cat $V/port_guid) (read back through the driver's get_vf_guid)"
echo "requests mlx_ext sent to mlxsim1's SA: $(sed -n 3p /sys/kernel/debug/mlx_ext_sim/mlxsim1/sa1)"
step "rmmod mlx_ext; rmmod mlx_ext_sim"
rmmod mlx_ext || exit 1
ls $IB/rxe0/mlx_ext 2>/dev/null || echo "/sys/class/infiniband/rxe0/mlx_ext removed"
rmmod mlx_ext_sim || exit 1
echo "devices left: $(ls $IB | tr '\n' ' ')"
