#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the vport model of VF GUIDs (Connect-IB, ConnectX-4 and later:
# mlx5's set_vf_guid/get_vf_guid; Documentation/vf-guids.rst), where the
# other guid_*.sh files test the alias-GUID model (ConnectX-3). Its PCI step
# is in guid_pci.sh.

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_vports"

setup() {
	stack_up sim
}

cleanup() {
	stack_down
}

# The vport model (SPEC section 4), chosen by the device's identity (an
# mlx5 part id: the simulated connectib and cx4): each VF's node and port
# GUID in iov/<function>/ports/<port>/, read from the driver's get_vf_guid
# and written through its set_vf_guid, as `ip link set <pf> vf N
# node_guid|port_guid` does. No alias table, no GuidInfoRecord sent, nothing
# set but what is written (not at the tree's making, not at its removal);
# the SM sees a vport's port GUID (an alias of it is refused as a
# duplicate). One pair per VF under the first port, as mlx5 keeps them
# whatever the port. 0 and all ones go to the driver as any value, in the
# colon form of ip link too (iproute2 lib/utils.c get_guid; ib-sriov-cni
# releases a VF's GUID with FF:FF:FF:FF:FF:FF:FF:FF, sriov.go:321-357);
# bad input (7 or 9 octets included) is EINVAL and sets nothing; the PF's
# are read-only; the driver's error comes back as it is. The alias model
# never calls set_vf_guid.
test_guid_vports() {
	sim_new "354 connectib 2 3" || return 1
	d=mlxsim354 I=$IB/mlxsim354/iov
	F0=$I/0162:00:00.0/ports/1 F1=$I/0162:00:00.1/ports/1 F3=$I/0162:00:00.3/ports/1
	expect_eq "$(fn_dirs $d | tr '\n' ' ')" "0162:00:00.0 0162:00:00.1 0162:00:00.2 0162:00:00.3 " \
		"functions" || return 1
	[ ! -e $I/ports ] && [ ! -e $F1/gid_idx ] || { echo "an alias table on a vport device"; return 1; }
	[ ! -e $I/0162:00:00.1/ports/2 ] || { echo "a second pair of a VF's GUIDs under port 2"; return 1; }
	expect_eq "$(stat -c %a $F0/node_guid $F0/port_guid $F1/node_guid $F1/port_guid | tr '\n' ' ')" \
		"444 444 644 644 " "modes" || return 1
	expect_eq "$(cat $F1/node_guid $F1/port_guid $F3/port_guid | tr '\n' ' ')" "00:00:00:00:00:00:00:00 00:00:00:00:00:00:00:00 00:00:00:00:00:00:00:00 " "VFs before any write" || return 1
	expect_eq "$(cat $F0/port_guid)" "$(port_gid $d 1 0 | sed 's/../&:/g; s/:$//')" "the PF's port GUID" || return 1
	expect_eq "$(cat $F0/node_guid)" "$(tr -d : <$IB/$d/node_guid | sed 's/../&:/g; s/:$//')" "the PF's node GUID" || return 1
	echo 0x1111 >$F1/node_guid && echo 0x2222 >$F1/port_guid && echo 2c90300abcdef >$F3/port_guid || return 1
	expect_eq "$(cat $F1/node_guid $F1/port_guid $F3/port_guid | tr '\n' ' ')" "00:00:00:00:00:00:11:11 00:00:00:00:00:00:22:22 00:02:c9:03:00:ab:cd:ef " \
		"VFs after the writes" || return 1
	expect_eq "$(vf_guids_of 354 | tr '\n' ';')" \
		"calls 3 failed 0 refused 0;0 1 node 0000000000001111;0 1 port 0000000000002222;2 1 port 0002c90300abcdef;" \
		"what the driver was told" || return 1
	for bad in 0x "\n" "1 2" 12345678901234567 -1 "1\n\n" 00:11:22:33:44:55:66 \
		00:11:22:33:44:55:66:77:88 0:11:22:33:44:55:66:77; do
		expect_eq "$(sim_write $F1/port_guid "$bad")" "Invalid argument" "'$bad'" || return 1
	done
	case "$(sim_write $F0/port_guid 5)" in
	*"Permission denied") ;;
	*) echo "the PF's port GUID was writable"; return 1 ;;
	esac
	echo "fail 1" >$SIMDBG/$d/vf_guids || return 1
	expect_eq "$(sim_write $F1/port_guid 0x3333)" "Input/output error" "a driver failure" || return 1
	expect_eq "$(vf_guids_of 354 | head -1) $(cat $F1/port_guid)" "calls 4 failed 1 refused 0 00:00:00:00:00:00:22:22" \
		"after bad writes and a failure" || return 1
	# 0, which ip link sends like any value; all ones in the colon form,
	# as ib-sriov-cni releases a VF's GUID: the driver is told both.
	echo 0 >$F3/port_guid || return 1
	expect_eq "$(cat $F3/port_guid) $(vf_guids_of 354 | head -1)" "00:00:00:00:00:00:00:00 calls 5 failed 1 refused 0" "VF3 cleared" || return 1
	echo FF:FF:FF:FF:FF:FF:FF:FF >$F3/port_guid || return 1
	expect_eq "$(cat $F3/port_guid) $(vf_guids_of 354 | sed -n '1p;4p' | tr '\n' ';')" \
		"ff:ff:ff:ff:ff:ff:ff:ff calls 6 failed 1 refused 0;2 1 port ffffffffffffffff;" "VF3 released with all ones" || return 1
	echo 00:02:C9:03:00:AB:CD:EF >$F3/port_guid || return 1
	expect_eq "$(cat $F3/port_guid)" "00:02:c9:03:00:ab:cd:ef" "the colon form" || return 1
	# The SM sees VF1's vport: an alias of its port GUID is a duplicate.
	expect_eq "$(ulp "guidinfo $d 1 set 1 3 2222 77" | cut -d' ' -f1,4-5)" "ok 0 77" "an alias of a vport's GUID" || return 1
	# Nothing ever went to the SA from mlx_ext: the ULP's one request only.
	expect_eq "$(sa_totals $d 1 | cut -d' ' -f1-2)" "requests 1" "requests to the SA" || return 1
	# The tree goes and comes back (off and on, a change of VFs): the
	# driver keeps what was set, and mlx_ext sets nothing.
	S=$IB/$d/mlx_ext/vf_guid_tables N=$(bus_numvfs 354)
	echo off >$S && [ ! -e $I ] && echo on >$S || return 1
	echo 0 >$N && echo 2 >$N || return 1
	# The work item makes the tree again after the change (on two CPUs it
	# can run after both writes: the tree for 3 VFs is there until then).
	wait_until 5 eval "[ -e $I/0162:00:00.2/ports/1/port_guid ] && [ ! -e $I/0162:00:00.3 ]" ||
		{ echo "no tree for 2 VFs, or VF3 outlived its VF"; return 1; }
	expect_eq "$(cat $F1/port_guid) $(vf_guids_of 354 | head -1)" "00:00:00:00:00:00:22:22 calls 7 failed 1 refused 0" \
		"after off, on and a change of VFs" || return 1
	dmesg | grep -q "mlxsim354: port 1: VF GUIDs on vports for 2 VFs, one pair per VF" ||
		{ echo "no message for the vports"; return 1; }
	sim_del 354
	# cx4 is an mlx5 part too; cx3 has alias GUIDs.
	sim_new "355 cx4 1 1" && sim_new "356 cx3 1 1" || return 1
	[ -e $IB/mlxsim355/iov/0163:00:00.1/ports/1/port_guid ] && [ ! -e $IB/mlxsim355/iov/ports ] ||
		{ echo "cx4: no vports"; return 1; }
	[ -d $IB/mlxsim356/iov/ports/1/admin_guids ] && [ ! -e $IB/mlxsim356/iov/0164:00:00.1/ports/1/port_guid ] ||
		{ echo "cx3: no alias table"; return 1; }
	wait_until 10 gid_is mlxsim356 2 $(sm_guid 356 2) || { echo "cx3 never converged"; return 1; }
	echo 0x4444 >$IB/mlxsim356/iov/ports/1/admin_guids/2 && wait_until 5 gid_is mlxsim356 2 0000000000004444 || return 1
	# The colon form on an alias table's entry too.
	echo 00:00:00:00:00:00:55:55 >$IB/mlxsim356/iov/ports/1/admin_guids/2 &&
		wait_until 5 gid_is mlxsim356 2 0000000000005555 || { echo "the colon form on admin_guids"; return 1; }
	expect_eq "$(vf_guids_of 356)" "calls 0 failed 0 refused 0" "cx3: no set_vf_guid call" || return 1
	sim_del 355; sim_del 356
}

ktap_main "$@"
