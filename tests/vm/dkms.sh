#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest of scripts/dkms-check.sh: its modules are only what DKMS
# installed (MLX_EXT_GUEST_MODULES), the tree's are not there. modprobe
# loads mlx_ext from updates/dkms with ib_core before it, and it works; the
# sample ULP, installed beside it, is loaded by modprobe alone.

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

# The sample ULP, installed beside mlx_ext as a ULP package would be:
# modprobe loads mlx_ext (and ib_core) first through depmod's dependencies,
# no insmod path; the sample sees mlx_ext's record of rxe0.
test_sample_modprobe() {
	kver=$(uname -r)
	grep -q '^updates/sample/mlx_ext_caps.ko: updates/dkms/mlx_ext.ko' /lib/modules/$kver/modules.dep ||
		{ echo "modules.dep: $(grep mlx_ext_caps /lib/modules/$kver/modules.dep)"; return 1; }
	[ ! -e /sys/module/mlx_ext ] || { echo "mlx_ext loaded already"; return 1; }
	add_rxe0 || return 1
	modprobe mlx_ext_caps || return 1
	[ -e /sys/module/mlx_ext ] || { echo "modprobe did not bring mlx_ext in"; return 1; }
	dmesg | grep -q "mlx_ext_caps: built against mlx_ext $(cat /extra/VERSION) (API" ||
		{ echo "no version line: $(dmesg | grep mlx_ext_caps)"; return 1; }
	dmesg | grep -q "rxe0: mlx_ext_caps: atomic_cap 1 masked_atomic_cap 0 masked atomics emulated" ||
		{ echo "no record line: $(dmesg | grep 'mlx_ext_caps:')"; return 1; }
	# (Not busybox's modprobe -r: it also tries ib_core, which rxe holds,
	# and fails.)
	rmmod mlx_ext_caps && rmmod mlx_ext
}

test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

ktap_run test_dkms_modprobe test_sample_modprobe test_kernel_log_clean
