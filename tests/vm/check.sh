#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The VM tests of mlx_ext, against Soft-RoCE (rxe0). Prints KTAP.

. /tests/ktap.sh
. /tests/common.sh

KMEMLEAK=/sys/kernel/debug/kmemleak
DIR=$IB/rxe0/mlx_ext

setup() {
	add_rxe0 || { echo "cannot add rxe0"; return 1; }
	# Leaks found from here on are ours: mark everything older as seen.
	if [ -w $KMEMLEAK ]; then
		echo scan >$KMEMLEAK
		echo clear >$KMEMLEAK
	fi
}

test_load_sees_rxe0() {
	modprobe mlx_ext || return 1
	dmesg | grep -q "mlx_ext: rxe0: atomic_cap" || { echo "add callback did not log rxe0"; return 1; }
	[ -d $DIR ] || { echo "$DIR missing"; return 1; }
}

test_sysfs_matches_ib_core() {
	# rxe_param.h: IB_ATOMIC_HCA; rxe sets no masked atomic capability.
	expect_eq "$(cat $DIR/atomic_cap)" hca atomic_cap || return 1
	expect_eq "$(cat $DIR/masked_atomic_cap)" none masked_atomic_cap || return 1
	expect_eq "$(ls $DIR | tr '\n' ' ')" "atomic_cap masked_atomic_cap " files
}

test_sysfs_read_only() {
	for f in atomic_cap masked_atomic_cap; do
		expect_eq "$(stat -c %a $DIR/$f)" 444 "mode of $f" || return 1
		if echo glob 2>/dev/null >$DIR/$f; then
			echo "write to $f succeeded"
			return 1
		fi
	done
	expect_eq "$(cat $DIR/atomic_cap)" hca "after writes"
}

test_link_delete_removes_dir() {
	rdma link delete rxe0 || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rdma link delete"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	[ -d $DIR ] || { echo "$DIR not restored after re-adding rxe0"; return 1; }
	expect_eq "$(cat $DIR/atomic_cap) $(cat $DIR/masked_atomic_cap)" "hca none" "after re-add"
}

test_rmmod_with_device_present() {
	rmmod mlx_ext || return 1
	[ ! -e $DIR ] || { echo "$DIR still there after rmmod"; return 1; }
	[ -e $IB/rxe0 ] || { echo "rxe0 vanished with mlx_ext"; return 1; }
	modprobe mlx_ext || return 1
	[ -d $DIR ] || { echo "$DIR missing after reload"; return 1; }
}

test_load_unload_50_cycles() {
	rmmod mlx_ext || return 1
	# A reader races every removal against sysfs reads of the files.
	(while :; do cat $DIR/atomic_cap $DIR/masked_atomic_cap >/dev/null 2>&1; done) &
	reader=$!
	i=0 rc=0
	while [ $i -lt 50 ]; do
		modprobe mlx_ext || { echo "load $i failed"; rc=1; break; }
		v=$(cat $DIR/atomic_cap) || { rc=1; break; }
		[ "$v" = hca ] || { echo "cycle $i: atomic_cap '$v'"; rc=1; break; }
		rmmod mlx_ext || { echo "unload $i failed"; rc=1; break; }
		[ ! -e $DIR ] || { echo "cycle $i: $DIR left behind"; rc=1; break; }
		i=$((i + 1))
	done
	kill $reader
	wait $reader 2>/dev/null
	echo "$i cycles"
	modprobe mlx_ext
	return $rc
}

SELFTEST=/sys/kernel/debug/mlx_ext/atomics_selftest

# The module's compiled masked-atomics arithmetic against the host's
# bit-serial reference: the host wrote "SEED COUNT DIGEST" lines to
# /extra/atomics_digests (scripts/check.sh).
test_atomics_selftest_matches_host() {
	[ -s /extra/atomics_digests ] || { echo "no host digests in /extra"; return 1; }
	cases=0
	while read -r seed count digest; do
		echo "$seed $count" >$SELFTEST || return 1
		expect_eq "$(cat $SELFTEST)" "$seed $count $digest" "seed $seed" || return 1
		cases=$((cases + count))
	done </extra/atomics_digests
	echo "$cases cases x 4 operations agree with the host's reference"
	[ $cases -ge 100000 ]
}

test_atomics_selftest_rejects_bad_input() {
	echo "7 1000" >$SELFTEST || return 1
	before=$(cat $SELFTEST)
	for bad in "" "abc" "1" "1 2 3" "1 0" "1 1000001" "-1 5" "1  5" "1 5x" "0x1 5" " 1 5"; do
		if printf '%s\n' "$bad" >$SELFTEST 2>/dev/null; then
			echo "write of '$bad' was accepted"
			return 1
		fi
	done
	if printf '1 5\n\n' >$SELFTEST 2>/dev/null; then echo "two newlines accepted"; return 1; fi
	expect_eq "$(cat $SELFTEST)" "$before" "state after refused writes"
}

test_no_leaks() {
	[ -w $KMEMLEAK ] || { echo "kmemleak not available"; return $KSFT_SKIP; }
	rmmod mlx_ext
	# kmemleak reports objects older than 5 s only.
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	leaks=$(grep -c "unreferenced object" $KMEMLEAK)
	cat $KMEMLEAK | head -40
	modprobe mlx_ext
	expect_eq "$leaks" 0 "kmemleak unreferenced objects"
}

test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

setup || echo "# setup failed; the tests below will fail"
ktap_run test_load_sees_rxe0 test_sysfs_matches_ib_core test_sysfs_read_only \
	test_link_delete_removes_dir test_rmmod_with_device_present \
	test_load_unload_50_cycles test_atomics_selftest_matches_host \
	test_atomics_selftest_rejects_bad_input test_no_leaks test_kernel_log_clean
