#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests that replay, step by step, what the software that really drives
# VF GUIDs does (../shared/REAL-CLIENTS.md section 2; Documentation/
# vf-guids.rst "Tools written for mlx4's tree"): OpenStack networking-mlnx's
# mlx4 flow on a simulated ConnectX-3 (the alias model), and the
# ib-sriov-cni and sriov-network-operator flows on a simulated ConnectX-4
# (the vport model). Each step names the client's file and line. The VF
# unbind and bind that the mlx5 clients do after a change is on a real PCI
# PF, in guid_pci.sh (test_guid_pci_vf_rebind).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_clients_networking_mlnx_mlx4 test_guid_clients_networking_mlnx_pkey
	test_guid_clients_cni_operator"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# sys_write PATH VALUE: a write as networking-mlnx makes it
# (eswitchd/internal/sys_ops/impl_os.py:29-44: open(path, 'w'),
# write("%s" % value), no newline).
sys_write() {
	printf %s "$2" >"$1"
}

# mlnx4_guid MAC: the GUID networking-mlnx makes of a port's MAC for mlx4
# (eswitchd/utils/ib_utils.py:53-62: the MAC without colons, 4 zero digits
# after its first 6): 16 hex digits, no 0x.
mlnx4_guid() {
	m=$(echo "$1" | tr -d :)
	echo "$(echo $m | cut -c1-6)0000$(echo $m | cut -c7-)"
}

# mlnx4_read_back DEV: networking-mlnx's get_devices_info for mlx4
# (ib_utils.py:137-161): every admin_guids/[1-9]* is INVALID_MAC
# ('ffffffffffffffff', constants.py:36) or must match GUID_FMT_MLNX4,
# ^[0-9a-fA-F]{16}$ (ib_utils.py:38), or _get_mac_from_guid raises
# InvalidGUIDFormatException (:72-85) and the whole read fails.
mlnx4_read_back() {
	for f in $IB/$1/iov/ports/1/admin_guids/[1-9]*; do
		v=$(cat $f)
		[ "$v" = ffffffffffffffff ] && continue
		echo "$v" | grep -Eq '^[0-9a-fA-F]{16}$' ||
			{ echo "InvalidGUIDFormatException: $f reads '$v'"; return 1; }
	done
}

# networking-mlnx's mlx4 flow (eswitchd/utils/ib_utils.py:206-230,
# _config_vf_mac_address_mlnx4) for one VF, on a ConnectX-3 whose SM has
# assigned every VF's base GUID (sm_guid_assign=1, the default):
#   1. pkey_idx/0 <- 'none' (:212-214): no such file here, the step is
#      test_guid_clients_networking_mlnx_pkey's SKIP;
#   2. idx = readline(iov/<vf>/ports/<p>/gid_idx/0).strip() (:47-51);
#   3. admin_guids/<idx> <- the MAC's GUID (:53-62), 16 digits, no newline;
# then, as MLNX_OFED's procedure checks, gids/<idx> shows it once the SM
# granted it; the read back of every VF (:137-161) takes every value;
# the release writes 'ffffffffffffffff' (MAC None, constants.py:36), which
# reads back the same, and the SM deletes the GUID.
test_guid_clients_networking_mlnx_mlx4() {
	sim_new "370 cx3 1 3" || return 1
	d=mlxsim370 I=$IB/mlxsim370/iov
	vf=$(fn_dirs $d | sed -n 2p)
	[ -n "$vf" ] || { echo "no VF directory"; return 1; }
	last=$(cat $I/$(fn_dirs $d | tail -n1)/ports/1/gid_idx/0)
	wait_until 10 gid_is $d $last $(sm_guid 370 $last) || { echo "the SM never assigned the last VF's base"; return 1; }
	mlnx4_read_back $d || { echo "read back of the SM's GUIDs"; return 1; }
	idx=$(cat $I/$vf/ports/1/gid_idx/0 | tr -d ' \n')
	expect_eq "$idx" 2 "VF 0's gid_idx/0" || return 1
	guid=$(mlnx4_guid fa:16:3e:5d:22:01)
	expect_eq "$guid" fa163e00005d2201 "the client's GUID" || return 1
	sys_write $I/ports/1/admin_guids/$idx $guid || { echo "the GUID write failed"; return 1; }
	wait_until 5 gid_is $d $idx $guid || { echo "gids/$idx never showed $guid"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/$idx)" $guid "admin_guids/$idx" || return 1
	mlnx4_read_back $d || return 1
	# _get_mac_from_guid (:72-85): the MAC back, from digits 0-5 and 10-15.
	v=$(cat $I/ports/1/admin_guids/$idx)
	expect_eq "$(echo $v | cut -c1-6)$(echo $v | cut -c11-16)" fa163e5d2201 "the MAC read back" || return 1
	sys_write $I/ports/1/admin_guids/$idx ffffffffffffffff || { echo "the release failed"; return 1; }
	expect_eq "$(cat $I/ports/1/admin_guids/$idx)" ffffffffffffffff "admin_guids/$idx released" || return 1
	wait_until 5 gid_is $d $idx 0000000000000000 || { echo "gids/$idx kept the GUID after the release"; return 1; }
	mlnx4_read_back $d || return 1
	sim_del 370
}

# Step 1 of networking-mlnx's mlx4 flow (ib_utils.py:212-214, via
# _config_vf_pkey :41-45) writes 'none' to iov/<vf>/ports/<p>/pkey_idx/0,
# and the flow stops when that write fails. mlx_ext has no P_Key
# paravirtualisation to map, so it provides no pkey_idx (a file that only
# stored values would lie; Documentation/vf-guids.rst, "Tools written for
# mlx4's tree"): the write fails, and the step is a SKIP with that reason.
# What is checked: the file is absent and the write fails, changing
# nothing.
test_guid_clients_networking_mlnx_pkey() {
	sim_new "371 cx3 1 1" || return 1
	d=mlxsim371 I=$IB/mlxsim371/iov
	vf=$(fn_dirs $d | sed -n 2p)
	rc=$KSFT_SKIP
	if [ -e $I/$vf/ports/1/pkey_idx ]; then
		echo "a pkey_idx directory: the documents say there is none"; rc=1
	elif sys_write $I/$vf/ports/1/pkey_idx/0 none 2>/dev/null; then
		echo "a write to pkey_idx/0 succeeded"; rc=1
	else
		echo "networking-mlnx's pkey_idx step (ib_utils.py:212-214): mlx_ext provides no pkey_idx, having no P_Key paravirtualisation to map (Documentation/vf-guids.rst); the client stops there on mlx_ext"
	fi
	sim_del 371
	return $rc
}

# client_sets STEP GUID CALLS: a client's STEP sets the node GUID, then
# the port GUID, of VF 0 of mlxsim372 to GUID (the colon form, either
# case); both files show it in lowercase, and the driver, CALLS calls so
# far, was last told it for both.
client_sets() {
	F=$IB/mlxsim372/iov/$(fn_dirs mlxsim372 | sed -n 2p)/ports/1
	echo $2 >$F/node_guid && echo $2 >$F/port_guid || { echo "$1: a write failed"; return 1; }
	g=$(echo $2 | tr A-F a-f) h=$(echo $2 | tr -d : | tr A-F a-f)
	expect_eq "$(cat $F/node_guid) $(cat $F/port_guid)" "$g $g" "after $1" &&
		expect_eq "$(vf_guids_of 372 | tr '\n' ';')" \
			"calls $3 failed 0 refused 0;0 1 node $h;0 1 port $h;" "what the driver was told by $1"
}

# The values and strings of the Kubernetes clients on a ConnectX-4, through
# the vport files. The clients themselves send their GUIDs through netlink
# (IFLA_VF_IB_NODE_GUID/PORT_GUID, the driver's set_vf_guid, which these
# files call as ip link does: that path is test_guid_pci_netlink), or
# through sriovnet, which writes the same strings to MLNX_OFED's
# sriov/<vf>/{node,port} first (mofed_ib_helper.go:57-73: guid.String(),
# the colon form), files these mirror but are not. So this checks that
# their sequence and strings work here and reach the driver, not their
# path.
# - ib-sriov-cni's add (pkg/sriov/sriov.go:226-258): it saves the VF's
#   GUID (all zeros on a fresh VF), then setVfGUID (:359-380) sets the
#   node GUID, then the port GUID, in the colon form its IsValidGUID
#   requires (pkg/utils/utils.go:230-243);
# - its delete (ResetVFConfig, :321-357): the saved GUID was all zeros,
#   so it writes all ones, FF:FF:FF:FF:FF:FF:FF:FF (:338-343,
#   utils.go:27 DefaultGUID), node then port;
# - the operator (pkg/host/internal/infiniband/infiniband.go:40-67): node,
#   then port, one GUID whose first byte is 1..0xfe (guid.go:51-61).
# Each value reads back in the form it was given (lowercase), and the
# driver was told each one (the simulator keeps the last of each).
test_guid_clients_cni_operator() {
	sim_new "372 cx4 1 2" || return 1
	saved=$(cat $IB/mlxsim372/iov/$(fn_dirs mlxsim372 | sed -n 2p)/ports/1/node_guid)
	expect_eq "$saved" 00:00:00:00:00:00:00:00 "the fresh VF's GUID (HostIFGUID)" || return 1
	client_sets "the CNI's add" 02:00:00:00:00:00:01:00 2 || return 1
	# The saved GUID was all zeros: the CNI releases with all ones.
	[ "$saved" = 00:00:00:00:00:00:00:00 ] && r=FF:FF:FF:FF:FF:FF:FF:FF || r=$saved
	client_sets "the CNI's delete" $r 4 || return 1
	client_sets "the operator's set" 7e:3a:11:00:00:00:00:00 6 || return 1
	sim_del 372
}

ktap_main "$@"
