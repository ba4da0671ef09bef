# SPDX-License-Identifier: GPL-2.0
# KTAP output for guest tests (Documentation/dev-tools/ktap.rst), in the
# style of kselftest: each test is a shell function; it fails by returning
# non-zero, skips by printing a reason and returning $KSFT_SKIP. Whatever it
# prints becomes "# " diagnostic lines.

KSFT_SKIP=4
ktap_n=0 ktap_pass=0 ktap_fail=0 ktap_skip=0

ktap_run() {
	tests="$*"
	set -- $tests
	echo "TAP version 13"
	echo "1..$#"
	for t in $tests; do
		ktap_n=$((ktap_n + 1))
		ktap_out=/tmp/ktap.$$.out
		ktap_t0=$(cut -d' ' -f1 /proc/uptime)
		"$t" >"$ktap_out" 2>&1
		rc=$?
		ktap_t1=$(cut -d' ' -f1 /proc/uptime)
		sed "s/^/# /" "$ktap_out"
		# What each test costs, to keep the suite within its time.
		echo "# $t took $(awk -v a="$ktap_t0" -v b="$ktap_t1" 'BEGIN { printf "%.1f", b - a }') s"
		name=${t#test_}
		if [ $rc = 0 ]; then
			echo "ok $ktap_n $name"; ktap_pass=$((ktap_pass + 1))
		elif [ $rc = $KSFT_SKIP ]; then
			echo "ok $ktap_n $name # SKIP $(tail -n1 "$ktap_out")"; ktap_skip=$((ktap_skip + 1))
		else
			echo "not ok $ktap_n $name"; ktap_fail=$((ktap_fail + 1))
		fi
	done
	echo "# Totals: pass:$ktap_pass fail:$ktap_fail xfail:0 xpass:0 skip:$ktap_skip error:0"
}

# Fails the calling test with a message unless "$1" = "$2".
expect_eq() {
	[ "$1" = "$2" ] && return 0
	echo "expected '$2', got '$1'${3:+ ($3)}"
	return 1
}
