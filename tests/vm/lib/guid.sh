# SPDX-License-Identifier: GPL-2.0
# The helpers of the VM tests of the VF GUID tables and of the simulated
# SA (Documentation/vf-guids.rst), whose tests are one file per model and
# concern: guid_sa.sh (the simulator's SA, at the MAD level), guid_tree.sh
# (which ports get a tree, its files and initial tables), guid_engine.sh
# (the alias model's writes, answers, backoff, events), guid_lifecycle.sh
# (removal, the switch, VF changes, GUIDs deleted at the SM),
# guid_vports.sh (the vport model) and guid_pci.sh (a real PCI PF, both
# models). Sourced by those files after lib/sim.sh, whose helpers these use.

# files DIR FIRST LAST: the paths DIR/FIRST to DIR/LAST, in numeric order
# (busybox's seq has no -f).
files() {
	for n in $(seq $2 $3); do echo "$1/$n"; done
}

# sa_totals DEV PORT: "requests R copies C" of the simulated SA.
sa_totals() {
	sed -n 3p $SIMDBG/$1/sa$2
}

# sa_log DEV PORT: the simulated SA's log of requests, one per line:
# TID FIRST_MS METHOD ATTR BLOCK MASK COPIES STATUS DECLINED (rust/simulator/sa.rs).
sa_log() {
	tail -n +4 $SIMDBG/$1/sa$2
}

# deletes DEV: "BLOCK MASK STATUS;" of each DELETE (method 0x15) of
# GuidInfoRecords port 1's SA logged.
deletes() {
	sa_log $1 1 | awk '$3 == 15 && $4 == 30 {printf "%s %s %s;", $5, $6, $8}'
}

# port_gid DEV PORT N: the GUID half of GID N of the port as ib_core's cache
# and sysfs show it.
port_gid() {
	cut -d: -f5- $IB/$1/ports/$2/gids/$3 | tr -d :
}

# port_gid_is DEV PORT N GUID
port_gid_is() {
	[ "$(port_gid $1 $2 $3)" = "$4" ]
}

# gid DEV PORT N WANT: port_gid, once it is WANT or after 2 s (the simulator
# raises a GID change event, which ib_core handles from a work item).
gid() {
	wait_until 2 port_gid_is "$@"
	port_gid $1 $2 $3
}

# The iov tree of mlx_ext (Documentation/vf-guids.rst)

# fn_dirs DEV: the function directories of DEV's iov tree, in order.
fn_dirs() {
	ls $IB/$1/iov | grep -v '^ports$'
}

# split_of DEV: the number of gid_idx files of each function, in order.
split_of() {
	for f in $(fn_dirs $1); do
		ls $IB/$1/iov/$f/ports/1/gid_idx | wc -l
	done | tr '\n' ' '
}

# gid_is DEV N GUID: whether gids/N of port 1 shows GUID (16 hex digits).
# False while the tree is not there; a read error is shown.
gid_is() {
	[ -e $IB/$1/iov/ports/1/gids/$2 ] && [ "$(cut -d: -f5- $IB/$1/iov/ports/1/gids/$2 | tr -d :)" = "$3" ]
}

# sm_guid DEV_ID N: what the simulated SM assigns to entry N of port 1.
sm_guid() {
	printf '0002c9ff%04x01%02x' $1 $2
}

# reqs_for DEV BLOCK MASK: the log lines of port 1's SA for that record and
# entry mask.
reqs_for() {
	sa_log $1 1 | awk -v b=$2 -v m=$3 '$5 == b && $6 == m'
}

# ms_apart LINES: the gaps, in ms, between the first copies of the logged
# requests LINES.
ms_apart() {
	echo "$1" | awk 'NR > 1 { printf "%d ", $2 - prev } { prev = $2 }'
}

# within MS WANT TOL: whether MS is WANT +- TOL.
within() {
	[ "$1" -ge $(($2 - $3)) ] && [ "$1" -le $(($2 + $3)) ]
}

# bus_numvfs DEV_ID: the simulated adapter's sriov_numvfs, as a PCI PF's.
bus_numvfs() {
	echo $SIMBUS/devices/mlxsim$1/sriov_numvfs
}

# vf_guids_of DEV_ID: what the simulated driver's set_vf_guid was told:
# "calls C failed F refused R", then "VF PORT node|port GUID" lines.
vf_guids_of() {
	cat $SIMDBG/mlxsim$1/vf_guids
}
