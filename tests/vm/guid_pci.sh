#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the VF GUID tables on a real PCI PF: the VM's nvme function
# with SR-IOV (scripts/vm-run.sh), bound to the simulator's PCI driver and
# taken as a simulated adapter's parent ("pci:DDDD:BB:DD.F" in new_device),
# whose VFs the PCI core adds and removes (drivers/pci/iov.c).

. /tests/lib/area.sh
. /tests/lib/sim.sh
. /tests/lib/guid.sh

ALL_TESTS="test_guid_pci_vfs test_guid_pci_no_sriov test_guid_pci_teardown
	test_guid_failslab_pci test_guid_pci_vf_rebind test_guid_pci_netlink"

setup() {
	stack_up sim
}

# Besides the modules: the PCI functions the tests bound to the simulator
# (driver_override would bind them again at its next load) and a PF a
# failed test left off the bus.
cleanup() {
	stack_down || return 1
	for p in $PCIDEVS/*; do
		[ "$(cat $p/driver_override)" != mlx_ext_sim ] || echo >$p/driver_override || return 1
	done
	pci_pf >/dev/null || echo 1 >/sys/bus/pci/rescan
	pci_pf >/dev/null || { echo "no SR-IOV PF on the bus after a rescan"; return 1; }
}

PCIDEVS=/sys/bus/pci/devices

# pci_find VENDOR DEVICE [FILE]: the name of the VM's first PCI function
# with those IDs (and FILE in its directory, if given).
pci_find() {
	for p in $PCIDEVS/*; do
		[ "$(cat $p/vendor)" = $1 ] && [ "$(cat $p/device)" = $2 ] &&
			{ [ -z "$3" ] || [ -e "$p/$3" ]; } && { basename $p; return 0; }
	done
	return 1
}

# pci_pf: the name of the VM's SR-IOV PF (QEMU's nvme, 1b36:0010).
pci_pf() {
	pci_find 0x1b36 0x0010 sriov_totalvfs
}

# pci_vfs PF: the PCI names of PF's VFs, VF 0 first (its virtfnN links).
pci_vfs() {
	n=0
	while [ -e $PCIDEVS/$1/virtfn$n ]; do
		basename "$(readlink $PCIDEVS/$1/virtfn$n)"
		n=$((n + 1))
	done
}

# pci_bind PF: binds PF to the simulator's PCI driver (driver_override).
pci_bind() {
	echo mlx_ext_sim >$PCIDEVS/$1/driver_override && echo $1 >/sys/bus/pci/drivers_probe &&
		[ "$(basename "$(readlink $PCIDEVS/$1/driver)")" = mlx_ext_sim ]
}

# pf_with_vfs N: the VM's SR-IOV PF, $pf (its directory $P), bound to the
# simulator's PCI driver, with N VFs enabled.
pf_with_vfs() {
	pf=$(pci_pf) || { echo "no SR-IOV PF in the VM"; return 1; }
	P=$PCIDEVS/$pf
	[ "$(basename "$(readlink $P/driver)")" = mlx_ext_sim ] || pci_bind $pf || return 1
	echo $1 >$P/sriov_numvfs
}

# vf_entries DEV: the first GUID entry of each VF of port 1.
vf_entries() {
	for f in $(fn_dirs $1 | tail -n +2); do cat $IB/$1/iov/$f/ports/1/gid_idx/0 2>/dev/null; done
}

# converged DEV ID: there are VFs, and every VF's first entry holds what
# the SM assigns.
converged() {
	entries=$(vf_entries $1)
	[ -n "$entries" ] || return 1
	for e in $entries; do gid_is $1 $e $(sm_guid $2 $e) || return 1; done
}

# made_for DEV: for which numbers of VFs the tables were made, once each
# time, since the kernel log was last marked (mark).
made_for() {
	since_mark | sed -n "s/.*$1: port 1: VF GUID table of [0-9]* GUIDs for \([0-9]*\) VFs.*/\1/p" | tr '\n' ' '
}

# since_mark: the kernel log after the last mark.
since_mark() {
	dmesg | awk '/mlx_ext-test: MARK/ { n = NR } { l[NR] = $0 } END { for (i = n + 1; i <= NR; i++) print l[i] }'
}

mark() {
	echo "mlx_ext-test: MARK" >/dev/kmsg
}

# tables_for DEV PF N: DEV's tables were made once since the mark, for N
# VFs, in directories named by the PCI names of PF and its VFs.
tables_for() {
	expect_eq "$(made_for $1)" "$3 " "tables made for" &&
		expect_eq "$(fn_dirs $1 | tr '\n' ' ')" "$(echo $2 $(pci_vfs $2)) " "the function directories"
}

# An adapter on the PCI PF: refused until the PF is bound to the simulator,
# with a message; bad addresses and a second adapter on the same PF are
# refused. Its ib_device's parent is the PF, its switch is off until an
# administrator turns it on (a real PCI PF), and its tables are made once,
# when the PCI core added the last VF, for exactly that many VFs, in
# directories named by the functions' PCI names. Disabling the VFs removes
# the tables with them (as the first VF goes if the work item runs then,
# else when none is left; pci_num_vf() still says 3 for a second after the
# last), with the GUIDs deleted at the SM. Seen red with the count taken
# from pci_num_vf() 100 ms after the last event (the watch before this
# one).
test_guid_pci_vfs() {
	pf=$(pci_pf) || { echo "no SR-IOV PF in the VM"; return 1; }
	P=$PCIDEVS/$pf
	expect_eq "$(sim_write $SIMBUS/new_device "360 cx3 1 pci:$pf")" "No such device" "unbound PF" || return 1
	dmesg | grep -q "mlxsim360: pci:$pf: not bound to the mlx_ext_sim PCI driver" ||
		{ echo "no message for the unbound PF"; return 1; }
	expect_eq "$(sim_write $SIMBUS/new_device "360 cx3 1 pci:0000:7f:00.0")" \
		"No such file or directory" "no such function" || return 1
	for bad in "pci:$pf.0" "pci:0000:05.0" "pci:" "pci:0000:00:05.9"; do
		expect_eq "$(sim_write $SIMBUS/new_device "360 cx3 1 $bad")" "Invalid argument" "'$bad'" || return 1
	done
	pci_bind $pf || { echo "cannot bind $pf to mlx_ext_sim"; return 1; }
	sim_new "360 cx3 1 pci:$pf" || return 1
	d=mlxsim360 I=$IB/mlxsim360/iov S=$IB/mlxsim360/mlx_ext/vf_guid_tables
	expect_eq "$(basename "$(readlink $IB/$d/device)")" "$pf" "the ib_device's parent" || return 1
	expect_eq "$(sim_write $SIMBUS/new_device "361 cx4 1 pci:$pf")" "Device or resource busy" \
		"a second adapter on the PF" || return 1
	expect_eq "$(cat $S)" off "a PCI PF's switch" || return 1
	echo 3 >$P/sriov_numvfs || return 1
	[ ! -e $I ] || { echo "a tree before on"; return 1; }
	mark
	echo on >$S || return 1
	[ -d $I ] || { echo "no tree after on with 3 VFs"; return 1; }
	tables_for $d $pf 3 || return 1
	wait_until 10 converged $d 360 || { echo "never converged"; return 1; }
	# Disabled: the tables go with the VFs; the SM deletes the VFs' GUIDs.
	echo clear_log >$SIMDBG/$d/sa1
	echo 0 >$P/sriov_numvfs || return 1
	wait_until 3 eval "[ ! -e $I ]" || { echo "the tree outlived the VFs"; return 1; }
	[ -n "$(deletes $d)" ] || { echo "no GUID deleted at the SM"; return 1; }
	# Enabled: made once, for all of them.
	mark
	echo 4 >$P/sriov_numvfs || return 1
	wait_until 5 eval "[ -d $I ]" || { echo "no tree for 4 VFs"; return 1; }
	wait_until 10 converged $d 360 || { echo "never converged with 4 VFs"; return 1; }
	tables_for $d $pf 4 || return 1
	echo 0 >$P/sriov_numvfs && echo 2 >$P/sriov_numvfs || return 1
	wait_until 5 eval "[ -d $I ]" || { echo "no tree for 2 VFs"; return 1; }
	expect_eq "$(split_of $d)" "2 63 63 " "the split of 2 VFs" || return 1
	echo 0 >$P/sriov_numvfs
	sim_del 360
}

# An adapter whose parent is a PCI function without SR-IOV (the VM's
# pci-testdev, scripts/vm-run.sh), as an mlx5 PF whose firmware has SR-IOV
# off: it can never have VFs, so "on" is refused with EOPNOTSUPP and a
# message, and changes nothing, in either model. Seen red with such a
# function taken as a PF with 0 VFs (mlx_ext_ib_pci_vfs() before it checked
# is_physfn and TotalVFs): "on" went through, for a tree that could never
# come.
test_guid_pci_no_sriov() {
	td=$(pci_find 0x1b36 0x0005) || { echo "no pci-testdev in the VM"; return 1; }
	[ ! -e $PCIDEVS/$td/sriov_totalvfs ] || { echo "$td has SR-IOV"; return 1; }
	pci_bind $td || { echo "cannot bind $td to mlx_ext_sim"; return 1; }
	rc=0
	for m in "365 cx3" "366 cx4"; do
		d=mlxsim${m% *} S=$IB/mlxsim${m% *}/mlx_ext/vf_guid_tables
		sim_new "$m 1 pci:$td" || { rc=1; break; }
		expect_eq "$(cat $S)" off "$d: the switch" || rc=1
		expect_eq "$(sim_write $S on)" "Operation not supported" "$d: on" || rc=1
		expect_eq "$(cat $S)" off "$d: the switch after on" || rc=1
		[ ! -e $IB/$d/iov ] || { echo "$d: a tree"; rc=1; }
		dmesg | grep -q "$d: vf_guid_tables: cannot be switched on: the device has no SR-IOV functions mlx_ext knows of" ||
			{ echo "$d: no message for the refusal"; rc=1; }
		sim_del ${m% *} || rc=1
		[ $rc = 0 ] || break
	done
	echo $td >$PCIDEVS/$td/driver/unbind && echo >$PCIDEVS/$td/driver_override || rc=1
	return $rc
}

# A PF whose VFs are there before its adapter (the watch's first scan
# finds them). Teardown with SA traffic in flight on a PCI PF: the VFs
# disabled while requests are unanswered; the PF unbound from the
# simulator (its adapter goes with it); the PF removed from the bus with
# its VFs enabled (its adapter goes first, then its VFs, as a PF's driver
# must: no "driver left SR-IOV enabled") and found again by a rescan. The vport model on a PCI PF: its
# files under the VFs' PCI names. The simulator's PCI driver takes no
# new_id.
test_guid_pci_teardown() {
	pf_with_vfs 2 || return 1
	sim_new "362 cx3 1 pci:$pf" || return 1
	d=mlxsim362 I=$IB/mlxsim362/iov
	mark
	echo on >$IB/$d/mlx_ext/vf_guid_tables || return 1
	[ -d $I ] || { echo "no tree for the VFs already there"; return 1; }
	tables_for $d $pf 2 || return 1
	wait_until 10 converged $d 362 || { echo "never converged"; return 1; }
	echo silent >$SIMDBG/$d/sa1
	echo 0x77 >$I/ports/1/admin_guids/9 || return 1
	sleep 0.2
	echo 0 >$P/sriov_numvfs || return 1
	wait_until 5 eval "[ ! -e $I ]" || { echo "the tree outlived its VFs"; return 1; }
	echo accept >$SIMDBG/$d/sa1
	echo 2 >$P/sriov_numvfs || return 1
	wait_until 10 converged $d 362 || { echo "never converged again"; return 1; }
	echo silent >$SIMDBG/$d/sa1
	echo 0x78 >$I/ports/1/admin_guids/10 || return 1
	sleep 0.2
	# The VFs go before the unbind. Since 7.x the PCI core removes a VF
	# only under pci_rescan_remove_lock (7.3 drivers/pci/remove.c:128,
	# lockdep_assert_held), which sriov_numvfs and the removal of the PF
	# from the bus take (drivers/pci/iov.c:496-514, remove.c:134-139) and
	# an unbind does not: any PF driver that disables SR-IOV in its remove
	# (mlx5's, the simulator's) WARNs when unbound with VFs. The PF's
	# removal with its VFs enabled is tested below.
	echo 0 >$P/sriov_numvfs || return 1
	echo $pf >$P/driver/unbind || return 1
	[ ! -e $IB/$d ] || { echo "$d outlived its PCI parent"; return 1; }
	expect_eq "$(cat $P/sriov_numvfs)" 0 "VFs after unbind" || return 1
	dmesg | grep -q "mlxsim362: removed with its PCI parent" || { echo "no message for the removal"; return 1; }
	if dmesg | grep -q "$pf: driver left SR-IOV enabled"; then echo "VFs left enabled"; return 1; fi
	# The vport model: no alias table, one node and port GUID per VF.
	pci_bind $pf && sim_new "363 cx4 1 pci:$pf" || return 1
	d=mlxsim363 I=$IB/mlxsim363/iov
	echo on >$IB/$d/mlx_ext/vf_guid_tables && echo 2 >$P/sriov_numvfs || return 1
	wait_until 5 eval "[ -d $I ]" || { echo "no vport tree"; return 1; }
	vf0=$(pci_vfs $pf | head -n1)
	echo 0x1234 >$I/$vf0/ports/1/node_guid || return 1
	expect_eq "$(cat $I/$vf0/ports/1/node_guid)" 00:00:00:00:00:00:12:34 "VF 0's node GUID" || return 1
	[ ! -e $I/ports ] || { echo "an alias table on a vport device"; return 1; }
	# Removed from the bus with its VFs and adapter, then found again.
	echo 1 >$P/remove || return 1
	[ ! -e $IB/$d ] || { echo "$d outlived its PF"; return 1; }
	[ ! -e $P ] || { echo "$pf still on the bus"; return 1; }
	if dmesg | grep -q "$pf: driver left SR-IOV enabled"; then echo "VFs left enabled at removal"; return 1; fi
	echo 1 >/sys/bus/pci/rescan
	wait_until 5 eval "[ -e $P/sriov_totalvfs ]" || { echo "$pf not found by the rescan"; return 1; }
	expect_eq "$(cat $P/sriov_numvfs)" 0 "VFs after the rescan" || return 1
	# An empty ID table takes no new_id (pci-driver.c, new_id_store: its
	# driver_data must be an entry's): only driver_override binds.
	ven=$(cat $P/vendor) dev=$(cat $P/device)
	expect_eq "$(sim_write /sys/bus/pci/drivers/mlx_ext_sim/new_id "${ven#0x} ${dev#0x}")" \
		"Invalid argument" "new_id" || return 1
	[ ! -e $P/driver ] || { echo "$pf bound after new_id"; return 1; }
}

# Each allocation mlx_ext makes fails in turn (failslab, as in
# test_guid_failslab_add) while a simulated ConnectX-4 is added on the PCI
# PF with its VFs enabled (the PCI watch: its state and its bitmap of VFs),
# then while its vport tables are made at `on`. A failed watch leaves the
# device with a message (the count then comes from pci_num_vf()); failed
# tables leave none, with a message, and `on` fails. Nothing crashes,
# leaks (test_no_leaks) or splats, and afterwards the tables work.
test_guid_failslab_pci() {
	[ -d $FAILSLAB ] || { echo "no $FAILSLAB"; return $KSFT_SKIP; }
	pf_with_vfs 2 || return 1
	d=mlxsim364 I=$IB/mlxsim364/iov S=$IB/mlxsim364/mlx_ext/vf_guid_tables
	failslab_on_mlx_ext
	mark
	n=1 rc=0 adds=0 t0=$(date +%s)
	while :; do
		[ $n -le 300 ] || { echo "adds still failing after 300 steps"; rc=1; break; }
		fail_nth $n "echo '364 cx4 1 pci:$pf' >$SIMBUS/new_device" ||
			{ echo "add, allocation $n: new_device failed"; rc=1; break; }
		[ -e $IB/$d ] || { echo "add, allocation $n: $d missing"; rc=1; break; }
		[ $INJECTED = 0 ] && break
		adds=$((adds + 1))
		echo 364 >$SIMBUS/del_device || { rc=1; break; }
		n=$((n + 1))
	done
	unwatched=$(since_mark | grep -c "$d: changes of the number of VFs will not be seen")
	n=1 ons=0 refused=0
	while [ $rc = 0 ]; do
		[ $n -le 300 ] || { echo "on still failing after 300 steps"; rc=1; break; }
		if fail_nth $n "echo on >$S" 2>/dev/null; then
			[ $INJECTED = 0 ] && break
		else
			refused=$((refused + 1))
			[ ! -e $I ] || { echo "on, allocation $n: refused, yet a tree"; rc=1; }
			expect_eq "$(cat $S)" off "on, allocation $n: the switch after a refused on" || rc=1
		fi
		ons=$((ons + 1))
		if [ -e $I ] && [ ! -e $I/$(pci_vfs $pf | head -n1)/ports/1/node_guid ]; then
			echo "on, allocation $n: a tree without its files"; rc=1
		fi
		echo off >$S || rc=1
		n=$((n + 1))
	done
	failslab_off
	echo "$adds adds and $ons ons failed an allocation in $(($(date +%s) - t0)) s: $unwatched left no PCI watch, $refused refused on"
	[ $rc = 0 ] || return 1
	[ $unwatched -ge 1 ] || { echo "the watch's allocations never reached"; return 1; }
	[ $refused -ge 1 ] || { echo "no on refused"; return 1; }
	dmesg | grep -q "$d: no VF GUID tables" || { echo "no message for the missing tables"; return 1; }
	# Nothing failed: the tables work, and follow the VFs.
	[ -d $I ] || { echo "no tree once nothing fails"; return 1; }
	vf1=$(pci_vfs $pf | tail -n1)
	echo 0x4321 >$I/$vf1/ports/1/port_guid || return 1
	expect_eq "$(cat $I/$vf1/ports/1/port_guid)" 00:00:00:00:00:00:43:21 "VF 1's port GUID" || return 1
	echo 0 >$P/sriov_numvfs || return 1
	wait_until 5 eval "[ ! -e $I ]" || { echo "the tree outlived the VFs"; return 1; }
	sim_del 364
}

# The unbind and bind of a VF that the mlx5 clients do after they set its
# GUIDs, for the VF's driver to take them up: networking-mlnx
# (eswitchd/utils/ib_utils.py:240-253, UNBIND_PATH and BIND_PATH <- the
# VF's PCI name, common/constants.py:24-37), ib-sriov-cni (RebindVf,
# pkg/sriov/sriov.go:79-106, through sriovnet's UnbindVf/BindVf,
# sriovnet.go:182-204: the PF's driver's unbind and bind files) and the
# operator (Unbind, pkg/host/internal/sriov/sriov.go:637-643). On a PCI
# PF bound to the simulator, whose driver binds the VF too (as mlx5_core
# drives a ConnectX's VFs): the VF's unbind and bind leave the tree, its
# files and the GUIDs as they were, and set nothing (the driver is told
# nothing more).
test_guid_pci_vf_rebind() {
	vf_rebind
	rc=$?
	pci_undo 365 || rc=1
	return $rc
}

vf_rebind() {
	pf_with_vfs 2 || return 1
	sim_new "365 cx4 1 pci:$pf" || return 1
	d=mlxsim365 I=$IB/mlxsim365/iov
	echo on >$IB/$d/mlx_ext/vf_guid_tables || return 1
	vf0=$(pci_vfs $pf | head -n1)
	F=$I/$vf0/ports/1
	wait_until 5 eval "[ -e $F/port_guid ]" || { echo "no vport tree"; return 1; }
	echo 02:00:00:00:00:00:01:00 >$F/node_guid && echo 02:00:00:00:00:00:01:00 >$F/port_guid || return 1
	pci_bind $vf0 || { echo "cannot bind $vf0 to the PF's driver"; return 1; }
	tree=$(ls -R $I | md5sum) told=$(vf_guids_of 365)
	mark
	rc=0
	echo $vf0 >$P/driver/unbind || rc=1
	[ ! -e $PCIDEVS/$vf0/driver ] || { echo "$vf0 still bound"; rc=1; }
	expect_eq "$(cat $F/node_guid) $(cat $F/port_guid)" \
		"02:00:00:00:00:00:01:00 02:00:00:00:00:00:01:00" "while $vf0 is unbound" || rc=1
	echo $vf0 >$P/driver/bind || rc=1
	expect_eq "$(basename "$(readlink $PCIDEVS/$vf0/driver)")" mlx_ext_sim "$vf0 bound again" || rc=1
	expect_eq "$(ls -R $I | md5sum)" "$tree" "the tree after the rebind" || rc=1
	expect_eq "$(cat $F/node_guid) $(cat $F/port_guid)" \
		"02:00:00:00:00:00:01:00 02:00:00:00:00:00:01:00" "the GUIDs after the rebind" || rc=1
	expect_eq "$(vf_guids_of 365)" "$told" "what the driver was told" || rc=1
	expect_eq "$(since_mark | grep -c "$d: ")" 0 "messages of $d during the rebind" || rc=1
	return $rc
}

# pci_undo ID: what a test set up on the PCI PF $pf, undone whatever it
# reached: the VFs given back by the simulator's PCI driver, disabled, and
# adapter ID deleted.
pci_undo() {
	[ -n "$pf" ] || return 0
	for v in $(pci_vfs $pf); do
		[ ! -e $PCIDEVS/$v/driver ] || echo $v >$PCIDEVS/$v/driver/unbind || return 1
		echo >$PCIDEVS/$v/driver_override || return 1
	done
	echo 0 >$PCIDEVS/$pf/sriov_numvfs || return 1
	[ ! -e $IB/mlxsim$1 ] || sim_del $1
}

# IP: iproute2's ip (scripts/mkinitramfs.sh), where busybox's has no VF
# GUIDs.
IP=/usr/bin/ip

# vf_line NETDEV VF: the "vf VF ..." line of ip link show NETDEV, with the
# VF's NODE_GUID and PORT_GUID (iproute2 ip/ipaddress.c print_vfinfo).
vf_line() {
	$IP link show dev $1 | tr -s ' ' | grep "^ vf $2 "
}

# The netlink path every mlx5 orchestrator uses (networking-mlnx's
# pyroute2 ip.link('set', vf=...), eswitchd/internal/netdev_ops/
# impl_pyroute2.py:63-81; ib-sriov-cni and the operator through
# vishvananda/netlink LinkSetVfNodeGUID/LinkSetVfPortGUID,
# link_linux.go:871-913; and ip link itself): IFLA_VF_IB_NODE_GUID and
# PORT_GUID on the PF's IPoIB netdev, whose ndo_set_vf_guid calls
# ib_set_vf_guid (ipoib_main.c; the simulator's netdev does as ib_ipoib's,
# rust/helpers/simnet.c). On a simulated ConnectX-4 on the PCI PF: a GUID
# set with ip link shows in mlx_ext's tree, and one written to the tree
# shows in ip link show; then both paths at once, each under RTNL
# (rtnetlink's, and the one mlx_ext's vport files take), end with what each
# wrote last, every write accepted. The simulated driver refuses (and
# warns) when the calling task does not hold RTNL (lockdep's
# lockdep_rtnl_is_held(), not ASSERT_RTNL(), which the concurrent ip link
# would satisfy): the tree's first read and write, with no ip link running,
# would fail if the vport files stopped taking it. A VF beyond the PF's is
# refused.
test_guid_pci_netlink() {
	netlink
	rc=$?
	pci_undo 366 || rc=1
	[ ! -e /sys/class/net/mlxsim366ib1 ] || { echo "mlxsim366ib1 outlived its adapter"; rc=1; }
	return $rc
}

netlink() {
	[ -x $IP ] || { echo "no $IP in the guest"; return 1; }
	pf_with_vfs 2 || return 1
	sim_new "366 cx4 1 pci:$pf" || return 1
	d=mlxsim366 I=$IB/mlxsim366/iov nd=mlxsim366ib1
	echo on >$IB/$d/mlx_ext/vf_guid_tables || return 1
	vf0=$(pci_vfs $pf | head -n1) vf1=$(pci_vfs $pf | tail -n1)
	wait_until 5 eval "[ -e $I/$vf1/ports/1/port_guid ]" || { echo "no vport tree"; return 1; }
	[ -e /sys/class/net/$nd ] || { echo "no netdev $nd"; return 1; }
	rc=0
	$IP link set dev $nd vf 0 node_guid 02:00:00:00:00:00:01:01 || rc=1
	$IP link set dev $nd vf 0 port_guid 02:00:00:00:00:00:01:02 || rc=1
	expect_eq "$(cat $I/$vf0/ports/1/node_guid) $(cat $I/$vf0/ports/1/port_guid)" \
		"02:00:00:00:00:00:01:01 02:00:00:00:00:00:01:02" "ip link set, read in the tree" || rc=1
	echo 02:00:00:00:00:00:02:01 >$I/$vf1/ports/1/node_guid && echo 02:00:00:00:00:00:02:02 >$I/$vf1/ports/1/port_guid || rc=1
	line=$(vf_line $nd 1)
	echo "ip link show: $line"
	case "$line" in
	*"NODE_GUID 02:00:00:00:00:00:02:01, PORT_GUID 02:00:00:00:00:00:02:02"*) ;;
	*) echo "the tree's write is not in ip link show"; rc=1 ;;
	esac
	# What ip link show prints, ip link set takes, and the tree shows alike.
	case "$(vf_line $nd 0)" in
	*"NODE_GUID $(cat $I/$vf0/ports/1/node_guid), PORT_GUID $(cat $I/$vf0/ports/1/port_guid)"*) ;;
	*) echo "ip link show and the tree differ for VF 0"; rc=1 ;;
	esac
	# Both paths at once, on the same GUID: 30 ip link sets, and tree
	# writes for as long as they run. Each path holds RTNL for its call:
	# every write is accepted, and the file, ip link show and the driver
	# agree on one last value, the last of one of the two.
	rm -f /tmp/nl_failed
	(for i in $(seq 10 39); do $IP link set dev $nd vf 0 port_guid 02:00:00:00:00:00:03:$i || echo $i >>/tmp/nl_failed; done) &
	bg=$! n=0
	while kill -0 $bg 2>/dev/null; do
		echo 02:00:00:00:00:00:04:$((10 + n % 90)) >$I/$vf0/ports/1/port_guid || { echo "tree write $n failed"; rc=1; }
		n=$((n + 1))
	done
	wait
	[ ! -s /tmp/nl_failed ] || { echo "ip link set failed for: $(cat /tmp/nl_failed | tr '\n' ' ')"; rc=1; }
	last=$(cat $I/$vf0/ports/1/port_guid)
	echo "$n tree writes beside 30 ip link sets; last: $last"
	[ $n -ge 1 ] || { echo "no tree write while ip link ran"; rc=1; }
	case "$last" in
	02:00:00:00:00:00:03:39 | "02:00:00:00:00:00:04:$((10 + (n - 1) % 90))") ;;
	*) echo "the last value is neither path's last"; rc=1 ;;
	esac
	case "$(vf_line $nd 0)" in
	*"PORT_GUID $last"*) ;;
	*) echo "ip link show after both paths: $(vf_line $nd 0)"; rc=1 ;;
	esac
	expect_eq "$(vf_guids_of 366 | grep '^0 1 port ')" "0 1 port $(echo $last | tr -d :)" "the driver's last port GUID" || rc=1
	# A VF the PF does not have (it has 2; the simulator could keep more):
	# refused, as mlx5's firmware refuses a vport that does not exist, and
	# nothing reaches the driver.
	$IP link set dev $nd vf 2 node_guid 02:00:00:00:00:00:05:01 2>/dev/null &&
		{ echo "ip link set took VF 2 of a PF with 2"; rc=1; }
	expect_eq "$(vf_guids_of 366 | head -1)" "calls $((4 + 30 + n)) failed 0 refused 0" "set_vf_guid calls" || rc=1
	return $rc
}

ktap_main "$@"
