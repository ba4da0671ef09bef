# SPDX-License-Identifier: GPL-2.0
# KTAP output for guest tests (Documentation/dev-tools/ktap.rst), in the
# style of kselftest: each test is a shell function; it fails by returning
# non-zero, skips by printing a reason and returning $KSFT_SKIP. Whatever it
# prints becomes "# " diagnostic lines. The VM tests' areas run through
# area.sh, which uses ktap_test; ktap_run makes a KTAP document of its own
# (tests/install/dkms.sh, the harness's host tests).

KSFT_SKIP=4
ktap_n=0 ktap_pass=0 ktap_fail=0 ktap_skip=0

# ktap_test T [NAME]: runs the test function T as test number ktap_n + 1
# and prints its output and result, named NAME (T without test_ if none).
ktap_test() {
	ktap_n=$((ktap_n + 1))
	ktap_out=/tmp/ktap.$$.out
	ktap_t0=$(cut -d' ' -f1 /proc/uptime 2>/dev/null || date +%s)
	"$1" >"$ktap_out" 2>&1
	ktap_rc=$?
	ktap_t1=$(cut -d' ' -f1 /proc/uptime 2>/dev/null || date +%s)
	sed "s/^/# /" "$ktap_out"
	# What each test costs, to keep the suite within its time.
	echo "# $1 took $(awk -v a="$ktap_t0" -v b="$ktap_t1" 'BEGIN { printf "%.1f", b - a }') s"
	ktap_result "$ktap_rc" "${2:-${1#test_}}" "$(tail -n1 "$ktap_out")"
	rm -f "$ktap_out"
}

# ktap_result RC NAME [REASON]: the result line of test number ktap_n
# (RC 0 passed, $KSFT_SKIP skipped for REASON, else failed), counted.
ktap_result() {
	if [ "$1" = 0 ]; then
		echo "ok $ktap_n $2"; ktap_pass=$((ktap_pass + 1))
	elif [ "$1" = $KSFT_SKIP ]; then
		echo "ok $ktap_n $2 # SKIP $3"; ktap_skip=$((ktap_skip + 1))
	else
		echo "not ok $ktap_n $2"; ktap_fail=$((ktap_fail + 1))
	fi
}

ktap_totals() {
	echo "# Totals: pass:$ktap_pass fail:$ktap_fail xfail:0 xpass:0 skip:$ktap_skip error:0"
}

# ktap_run TEST...: a KTAP document of the tests, run in turn.
ktap_run() {
	echo "TAP version 13"
	echo "1..$#"
	for t in "$@"; do
		ktap_test "$t"
	done
	ktap_totals
}

# Fails the calling test with a message unless "$1" = "$2".
expect_eq() {
	[ "$1" = "$2" ] && return 0
	echo "expected '$2', got '$1'${3:+ ($3)}"
	return 1
}
