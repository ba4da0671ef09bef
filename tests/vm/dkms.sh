#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest of scripts/dkms-check.sh: its modules are only what DKMS
# installed (MLX_EXT_GUEST_MODULES), the tree's are not there. modprobe
# loads mlx_ext from updates/dkms with ib_core before it, and it works.

. /tests/ktap.sh
. /tests/common.sh

test_dkms_modprobe() {
	kver=$(uname -r)
	grep -q '^updates/dkms/mlx_ext.ko:' /lib/modules/$kver/modules.dep ||
		{ echo "no updates/dkms/mlx_ext.ko in modules.dep"; return 1; }
	[ ! -e /lib/modules/$kver/extra ] || { echo "the tree's modules are in the guest"; return 1; }
	modprobe mlx_ext || return 1
	expect_eq "$(cat /sys/module/mlx_ext/version)" "$(cat /extra/VERSION)" "version" || return 1
	add_rxe0 || return 1
	expect_eq "$(cat $IB/rxe0/mlx_ext/masked_atomic_mode)" emulated "rxe0's record" || return 1
	modprobe mlx_ext_sim || return 1
	echo "0 cx3" >/sys/bus/mlx_ext_sim/new_device || return 1
	expect_eq "$(cat $IB/mlxsim0/mlx_ext/masked_atomic_mode)" native "a simulated cx3's record" || return 1
	echo 0 >/sys/bus/mlx_ext_sim/del_device && rmmod mlx_ext_sim && rmmod mlx_ext
}

test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

ktap_run test_dkms_modprobe test_kernel_log_clean
