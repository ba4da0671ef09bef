#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest of scripts/dkms-check.sh, on the 7.x kernel (the distribution's
# module options, kernel/distro.config) booted with module.sig_enforce=1: its modules are only the kernel's and what
# DKMS installed (MLX_EXT_GUEST_MODULES), the tree's are not there. modprobe
# loads mlx_ext from updates/dkms with ib_core before it, and it works; the
# sample ULP, installed beside it, is loaded by modprobe alone; an unsigned
# module is refused; mlx_ext with its BTF loads; mlx_ext works next to the real mlx4_ib and mlx5_ib;
# the rdma_cm sample runs over rxe0.

. /tests/lib/ktap.sh
. /tests/lib/common.sh

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
	grep -qE '^updates/sample/mlx_ext_caps\.ko(\.[a-z]+)?: updates/dkms/mlx_ext\.ko' /lib/modules/$kver/modules.dep ||
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

# Signatures are enforced (as lockdown does under Secure Boot): the signed
# modules above loaded without the unsigned-module taint (E), and the
# sample as built, before Kbuild's modules_install signed it, is refused.
test_unsigned_module_refused() {
	expect_eq "$(cat /sys/module/module/parameters/sig_enforce)" Y "sig_enforce" || return 1
	add_rxe0 && modprobe mlx_ext || return 1
	case "$(cat /sys/module/mlx_ext/taint)" in
	*E*) echo "mlx_ext tainted the kernel as unsigned: $(cat /sys/module/mlx_ext/taint)"; return 1 ;;
	esac
	[ -f /extra/unsigned/mlx_ext_caps.ko ] || { echo "no unsigned module in /extra"; return 1; }
	if insmod /extra/unsigned/mlx_ext_caps.ko 2>/tmp/insmod.err; then
		echo "an unsigned module was loaded"
		rmmod mlx_ext_caps
		return 1
	fi
	cat /tmp/insmod.err
	[ ! -e /sys/module/mlx_ext_caps ] || return 1
	dmesg | grep -q 'Loading of unsigned module is rejected' ||
		{ echo "no refusal in the kernel log"; return 1; }
	rmmod mlx_ext
}

# BTF (CONFIG_DEBUG_INFO_BTF_MODULES, as Debian and Arch): mlx_ext built
# against Arch's headers, which carry vmlinux, has a .BTF section made
# against vmlinux's (scripts/install-check.sh). The kernel parses it as
# the module comes in and refuses the module where it does not
# (7.3 kernel/bpf/btf.c:8563-8592, MODULE_ALLOW_BTF_MISMATCH off); loaded,
# its BTF is /sys/kernel/btf/mlx_ext, and mlx_ext works. The DKMS build,
# against Ubuntu's layout, which has no vmlinux, has none.
test_module_with_btf_loads() {
	if [ ! -e /sys/kernel/btf/vmlinux ]; then
		echo "the kernel has no CONFIG_DEBUG_INFO_BTF"
		return $KSFT_SKIP
	fi
	[ -f /extra/btf/mlx_ext.ko ] ||
		{ echo "no mlx_ext built with its BTF (scripts/install-check.sh)"; return 1; }
	add_rxe0 && modprobe mlx_ext || return 1
	[ ! -e /sys/kernel/btf/mlx_ext ] || { echo "the DKMS build, made without vmlinux, has BTF"; return 1; }
	rmmod mlx_ext || return 1
	insmod /extra/btf/mlx_ext.ko || { dmesg | grep -i btf | tail -n 3; return 1; }
	rc=0
	[ -f /sys/kernel/btf/mlx_ext ] || { echo "mlx_ext loaded with no BTF registered"; rc=1; }
	expect_eq "$(cat $IB/rxe0/mlx_ext/masked_atomic_mode)" emulated "rxe0's record" || rc=1
	rmmod mlx_ext || return 1
	[ ! -e /sys/kernel/btf/mlx_ext ] || { echo "its BTF outlived the module"; return 1; }
	return $rc
}

# Module versions (CONFIG_MODVERSIONS, as Ubuntu 26.04): the sample built
# against a Module.symvers whose CRC of mlx_ext_api_version is not this
# mlx_ext's, signed, is refused for that symbol (check_version(), 7.3
# kernel/module/version.c:70: "disagrees about version of symbol"), and
# mlx_ext stays usable.
test_wrong_crc_refused() {
	if [ "$(cat /extra/modversions 2>/dev/null)" != y ]; then
		echo "the kernel has no CONFIG_MODVERSIONS"
		return $KSFT_SKIP
	fi
	[ -f /extra/badcrc/mlx_ext_caps.ko ] ||
		{ echo "no module built against a wrong CRC (scripts/install-check.sh)"; return 1; }
	add_rxe0 && modprobe mlx_ext || return 1
	rc=0
	if insmod /extra/badcrc/mlx_ext_caps.ko 2>/tmp/insmod.err; then
		echo "a module with a wrong CRC of mlx_ext_api_version was loaded"
		rc=1
	else
		cat /tmp/insmod.err
		dmesg | grep -q 'mlx_ext_caps: disagrees about version of symbol mlx_ext_api_version' ||
			{ echo "no refusal in the kernel log: $(dmesg | grep mlx_ext_caps)"; rc=1; }
		# The right one, from updates/sample, still loads.
		[ $rc != 0 ] || modprobe mlx_ext_caps || rc=1
	fi
	[ ! -e /sys/module/mlx_ext_caps ] || rmmod mlx_ext_caps
	rmmod mlx_ext || rc=1
	return $rc
}

# mlx_ext beside the real Mellanox drivers, loaded with no adapter: they
# register with the PCI and auxiliary buses and ib_core and bind nothing;
# mlx_ext's records of rxe0 and of a simulated ConnectX-4 are unchanged, and
# each of them unloads while the others stay.
test_next_to_mlx4_ib_and_mlx5_ib() {
	modprobe mlx4_ib || return 1
	modprobe mlx5_ib || return 1
	for m in mlx4_core mlx4_ib mlx5_core mlx5_ib; do
		[ -e /sys/module/$m ] || { echo "$m not loaded"; return 1; }
	done
	add_rxe0 && modprobe mlx_ext && modprobe mlx_ext_sim || return 1
	echo "0 cx4" >/sys/bus/mlx_ext_sim/new_device || return 1
	expect_eq "$(cat $IB/rxe0/mlx_ext/masked_atomic_mode)" emulated "rxe0's record" || return 1
	expect_eq "$(cat $IB/mlxsim0/mlx_ext/masked_atomic_mode)" emulated "a simulated cx4's record" || return 1
	report
	# The real drivers saw no adapter: no ib_device of theirs.
	expect_eq "$(ls $IB | sort | tr '\n' ' ')" "mlxsim0 rxe0 " "ib devices" || return 1
	rmmod mlx5_ib && rmmod mlx4_ib || return 1
	expect_eq "$(cat $IB/mlxsim0/mlx_ext/masked_atomic_mode)" emulated "after the real drivers left" || return 1
	echo 0 >/sys/bus/mlx_ext_sim/del_device && rmmod mlx_ext_sim && rmmod mlx_ext || return 1
	rmmod mlx5_core mlx4_core
}

# The rdma_cm sample, installed beside the other: over rxe0 on this
# kernel, loaded by modprobe (rdma_cm and mlx_ext come with it).
test_counters_sample_on_rxe0() {
	add_rxe0 && counters_run 500 && rmmod mlx_ext
}

test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

ktap_run test_dkms_modprobe test_sample_modprobe test_unsigned_module_refused \
	test_module_with_btf_loads test_wrong_crc_refused test_next_to_mlx4_ib_and_mlx5_ib test_counters_sample_on_rxe0 test_kernel_log_clean
