# SPDX-License-Identifier: GPL-2.0
# What an area's setup makes and its cleanup removes: the tree's modules
# (mlx_ext, the simulator, the test ULP, the samples) and the RDMA devices
# (Soft-RoCE's rxe0 and rxe1, the simulated adapters). The kernel's own
# modules (rdma_rxe, ib_core...) stay loaded once loaded.

ULPCTL=/sys/kernel/debug/mlx_ext_test_ulp/ctl

# The tree's modules, users first: the order rmmod takes them in.
TREE_MODULES="mlx_ext_counters mlx_ext_caps mlx_ext_test_ulp mlx_ext_sim mlx_ext"

# stack_up [sim]: rxe0 on eth0 with its address (rxe0's loopback goes
# through the IPv4-mapped GID of eth0) and mlx_ext; with "sim", also the
# simulator and the test ULP (tests/ulp/).
stack_up() {
	add_rxe0 || { echo "cannot add rxe0"; return 1; }
	ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
	modprobe mlx_ext || { echo "cannot load mlx_ext"; return 1; }
	[ "${1:-}" = sim ] || return 0
	modprobe mlx_ext_sim || { echo "cannot load mlx_ext_sim"; return 1; }
	modprobe mlx_ext_test_ulp || { echo "cannot load mlx_ext_test_ulp"; return 1; }
}

# stack_models: the three simulated adapters the data-path areas (api.sh,
# attach.sh) use: mlxsim0 a ConnectX-3, mlxsim1 a two-port Connect-IB with
# 5 VFs, mlxsim2 a ConnectX-4.
stack_models() {
	for dev in "0 cx3" "1 connectib 2 5" "2 cx4"; do
		echo "$dev" >/sys/bus/mlx_ext_sim/new_device || { echo "cannot make '$dev'"; return 1; }
	done
}

# stack_down: removes what stack_up and the tests made, whatever state a
# failed test left: fault injection off, the tree's modules unloaded
# (mlx_ext_sim's unload removes its devices), the rxe links deleted.
# Fails, saying why, if something could not be removed.
stack_down() {
	rc=0
	[ ! -d /sys/kernel/debug/failslab ] || failslab_off
	for m in $TREE_MODULES; do
		[ -e /sys/module/$m ] || continue
		rmmod $m || { echo "rmmod $m failed"; rc=1; }
	done
	# What is left once the simulator is gone are links (rxe), by any
	# name a test gave them (test_rename_device).
	for d in $IB/*; do
		[ -e "$d" ] || continue
		rdma link delete "$(basename "$d")" || { echo "cannot delete $(basename "$d")"; rc=1; }
	done
	ip addr del 10.0.2.15/24 dev eth0 2>/dev/null
	return $rc
}

# stack_left: what of the tree's modules and the RDMA devices is still
# there, on one line (nothing when stack_down did its work).
stack_left() {
	left=
	for m in $TREE_MODULES; do [ ! -e /sys/module/$m ] || left="$left $m"; done
	for d in $IB/*; do [ ! -e "$d" ] || left="$left $(basename "$d")"; done
	echo $left
}
