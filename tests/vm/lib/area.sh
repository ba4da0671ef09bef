# SPDX-License-Identifier: GPL-2.0
# The runner of a VM test area (tests/vm/<area>.sh), in the shape of a
# kselftest file (tools/testing/selftests/net/forwarding/lib.sh's
# ALL_TESTS and tests_run): the area sources this file and the helpers it
# needs, sets ALL_TESTS, defines setup and cleanup, and ends with
# `ktap_main "$@"`. setup makes the devices and loads the modules its
# tests need; cleanup removes them (stack_down, lib/stack.sh): an area
# starts from and leaves a guest with none of the tree's modules loaded,
# so that it runs alone, in any order, or in the suite (check.sh).
#
#   sh /tests/AREA.sh          the area alone: a KTAP document of its
#                              tests, then the closing checks (no leak, a
#                              clean kernel log)
#   sh /tests/AREA.sh --list   the names of the tests it would run
#
# mlx_ext_tests=a,b on the kernel command line (MLX_EXT_VM_APPEND) keeps
# only test_a and test_b of ALL_TESTS. check.sh runs an area with
# MLX_EXT_KTAP_FIRST set: its results are numbered from there and it
# prints no KTAP header and no closing checks, the suite's own.

. /tests/lib/ktap.sh
. /tests/lib/common.sh
. /tests/lib/failslab.sh
. /tests/lib/stack.sh

KMEMLEAK=/sys/kernel/debug/kmemleak

# area_tests: ALL_TESTS, or those of them mlx_ext_tests= names; then
# cleanup, which is a test of its own (the area's teardown: modules
# unloaded with their devices present).
area_tests() {
	only=$(cmdline_list mlx_ext_tests)
	picked=
	for t in $ALL_TESTS; do
		if [ -z "$only" ] || echo " $only " | grep -q " ${t#test_} "; then
			picked="$picked $t"
		fi
	done
	[ -z "$picked" ] || echo $picked cleanup
}

# ktap_begin: what a run starts with: leaks found from here on are ours,
# so everything older is marked as seen.
ktap_begin() {
	if [ -w $KMEMLEAK ]; then
		echo scan >$KMEMLEAK
		echo clear >$KMEMLEAK
	fi
}

# The closing checks of a run, after its last area.
CLOSING_TESTS="test_no_leaks test_kernel_log_clean"

# kmemleak finds no unreferenced object since the run began (ktap_begin).
test_no_leaks() {
	[ -w $KMEMLEAK ] || { echo "kmemleak not available"; return $KSFT_SKIP; }
	# Each area unloaded what it loaded (cleanup); whatever is left goes,
	# so that its objects are freed or reported.
	stack_down >/dev/null 2>&1
	# kmemleak reports objects older than 5 s only.
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	leaks=$(grep -c "unreferenced object" $KMEMLEAK)
	head -40 $KMEMLEAK
	expect_eq "$leaks" 0 "kmemleak unreferenced objects"
}

# Nothing in the kernel log matches KERNEL_SPLAT (lib/common.sh).
test_kernel_log_clean() {
	bad=$(kernel_splats)
	[ -z "$bad" ] && return 0
	echo "$bad"
	return 1
}

# The area's cleanup as a test: it must leave none of the tree's modules
# and no RDMA device.
test_cleanup() {
	cleanup || return 1
	left=$(stack_left)
	[ -z "$left" ] || { echo "left after cleanup: $left"; return 1; }
}

# ktap_main [--list]: runs the area that sourced this file.
ktap_main() {
	tests=$(area_tests)
	if [ "${1:-}" = --list ]; then
		echo $tests
		return 0
	fi
	area=$(basename "$0" .sh)
	# Run alone by scripts/vm-run.sh, the area is /run.sh.
	[ "$area" != run ] || area=$(basename "$(cat /run.name)" .sh)
	alone=1
	if [ -n "${MLX_EXT_KTAP_FIRST:-}" ]; then
		alone=0
		ktap_n=$((MLX_EXT_KTAP_FIRST - 1))
	else
		set -- $tests
		echo "TAP version 13"
		if [ $# = 0 ]; then
			echo "1..0 # SKIP mlx_ext_tests= names none of $area's tests"
			return 0
		fi
		echo "1..$(($# + 2))"
		ktap_begin
	fi
	[ -z "$tests" ] && return 0
	echo "# $area: setup"
	setup >/tmp/setup.$$.out 2>&1
	setup_rc=$?
	sed "s/^/# /" /tmp/setup.$$.out
	rm -f /tmp/setup.$$.out
	[ $setup_rc = 0 ] || echo "# $area: setup failed (exit $setup_rc): every test of the area fails"
	for t in $tests; do
		if [ "$t" = cleanup ]; then
			ktap_test test_cleanup "${area}_cleanup"
		elif [ $setup_rc = 0 ]; then
			ktap_test "$t"
		else
			ktap_n=$((ktap_n + 1))
			ktap_result 1 "${t#test_}"
		fi
	done
	echo "# $area: pass:$ktap_pass fail:$ktap_fail skip:$ktap_skip"
	if [ $alone = 1 ]; then
		for t in $CLOSING_TESTS; do ktap_test "$t"; done
		ktap_totals
	fi
}
