# SPDX-License-Identifier: GPL-2.0
# Helpers of the tests that use the simulated adapters (mlx_ext_sim,
# Documentation/simulator.rst) and the test ULP (tests/ulp/).

SIMBUS=/sys/bus/mlx_ext_sim
SIMDBG=/sys/kernel/debug/mlx_ext_sim

# sim_new "ID MODEL [PORTS [NUM_VFS [GUIDS]]]": creates a device or fails.
sim_new() {
	echo "$1" >$SIMBUS/new_device
}

# sim_del ID
sim_del() {
	echo "$1" >$SIMBUS/del_device
}

# What the simulator and ib_core hold, to compare before and after.
sim_state() {
	ls $SIMBUS/devices | tr '\n' ' '
	echo
	ls $IB | tr '\n' ' '
}

# sim_write FILE TEXT: writes TEXT (echo -e escapes, no newline added) to
# FILE and prints the error message of the write, "ok" if it succeeded.
# (An empty write never reaches the kernel: there is no such case.)
sim_write() {
	out=$( (echo -ne "$2" >"$1") 2>&1) && { echo ok; return; }
	echo "$out" | sed 's/.*write error: //'
}

# record DEV: mlx_ext's atomic_cap, masked_atomic_cap and masked_atomic_mode.
record() {
	echo $(cat $IB/$1/mlx_ext/atomic_cap $IB/$1/mlx_ext/masked_atomic_cap \
		$IB/$1/mlx_ext/masked_atomic_mode)
}

# The data path, through the test ULP (tests/ulp/): RC loopbacks,
# FRWR regions, atomics, their errors, and teardown.
# ulp COMMAND: runs a test ULP command and prints its result.
ulp() {
	echo "$1" >$ULPCTL || return 1
	cat $ULPCTL
}

# host_digest SEED COUNT KIND: what the host's reference arithmetic expects
# (scripts/check.sh wrote /extra/ulp_digests with core/examples/ulp_digest.rs).
host_digest() {
	sed -n "s/^$1 $2 $3 //p" /extra/ulp_digests
}

# Centiseconds since boot.
now_cs() {
	cut -d' ' -f1 /proc/uptime | tr -d .
}

# objects_zero DEV: fails unless every object a ULP made on DEV is gone:
# only ib_mad's are left (a PD, its DMA MR, a CQ and QP1 per port).
objects_zero() {
	n=$(ls $IB/$1/ports | wc -l)
	expect_eq "$(cat $SIMDBG/$1/objects | tr '\n' ' ')" "pd $n cq $n qp $n mr $n " "objects of $1"
}
