#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of make check's runner (scripts/steps.sh): steps that print
# KTAP are tallied by one parser; a step that fails without a failed result,
# or prints no result at all, is one failure; a step of KTAP files counts
# their results; cargo's libtest lines become KTAP, and a count that does
# not match cargo's own "test result:" lines is a failure; results missing
# from a document's plan fail. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tally STEP...: the last line make check's runner prints for STEPs (each
# "NAME | FUNCTION", the functions defined below).
tally() {
	MLX_EXT_BUILD=$tmp bash -c '
		source "$1/scripts/lib.sh"; set +e
		source "$1/scripts/steps.sh"
		s_ok() { printf "TAP version 13\n1..2\nok 1 a\nok 2 b # SKIP why\n"; }
		s_notok() { printf "TAP version 13\n1..2\nok 1 a\nnot ok 2 b\n"; return 1; }
		s_silent() { echo "could not start"; return 3; }
		s_none() { echo "nothing to say"; }
		s_files() {
			printf "TAP version 13\n1..2\n"
			printf "    TAP version 13\n    1..3\n    ok 1 x\n    ok 2 y\n    not ok 3 z\nnot ok 1 f1\n"
			printf "    TAP version 13\n    1..1\n    ok 1 w\nok 2 f2\n"
			return 1
		}
		cargo_log=$2
		s_cargo() { printf "TAP version 13\n"; cargo_ktap "$cargo_log"; }
		s_procsub() { mapfile -t x < <(echo a); printf "TAP version 13\n1..1\nnot ok 1 c\n"; return 1; }
		s_short() { printf "TAP version 13\n1..12\n"; for i in $(seq 11); do echo "ok $i t$i"; done; }
		s_long() { printf "TAP version 13\n1..1\nok 1 a\nok 2 b\n"; }
		s_files_short() {
			printf "TAP version 13\n1..1\n"
			printf "    TAP version 13\n    1..3\n    ok 1 x\n    ok 2 y\nok 1 f1\n"
		}
		shift 2
		STEPS=("$@")
		run_steps' - "$MLX_EXT_ROOT" "$tmp/cargo.log" "$@" 2>/dev/null | tail -n1
}

test_results_are_tallied() {
	expect_eq "$(tally 'one | s_ok' 'two | s_notok')" "2 passed, 1 failed, 1 skipped"
}

test_silent_failure_counts() {
	expect_eq "$(tally 'one | s_ok' 'two | s_silent')" "1 passed, 1 failed, 1 skipped"
}

test_no_result_counts() {
	expect_eq "$(tally 'one | s_none')" "0 passed, 1 failed, 0 skipped"
}

test_files_of_ktap_count_their_results() {
	expect_eq "$(tally 'one | s_files')" "3 passed, 1 failed, 0 skipped"
}

test_cargo_lines_become_ktap() {
	cat >"$tmp/cargo.log" <<'LOG'
running 3 tests
test a::b ... ok
test a::c ... FAILED
test a::d ... ignored, slow
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
   Doc-tests x
test src/api.rs - api::widen (line 12) ... ok
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
LOG
	expect_eq "$(tally 'c | s_cargo')" "2 passed, 1 failed, 1 skipped"
}

test_cargo_count_mismatch_fails() {
	cat >"$tmp/cargo.log" <<'LOG'
test a::b ... ok
test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
LOG
	expect_eq "$(tally 'c | s_cargo')" "1 passed, 1 failed, 0 skipped"
}

# A step that ends with a process substitution of its own, and a slow tee:
# its results are read once tee has written them, not the step before's.
test_slow_tee_after_process_substitution() {
	mkdir -p "$tmp/bin"
	printf '#!/bin/sh\nsleep 0.5\nexec /usr/bin/tee "$@"\n' >"$tmp/bin/tee"
	chmod +x "$tmp/bin/tee"
	expect_eq "$(PATH=$tmp/bin:$PATH tally 'one | s_ok' 'two | s_procsub')" "1 passed, 1 failed, 1 skipped"
}

# A document that plans 12 and prints 11: the missing one fails; one that
# prints more than it planned fails once; a KTAP file cut short counts its
# own missing result.
test_plan_and_results_agree() {
	expect_eq "$(tally 'short | s_short')" "11 passed, 1 failed, 0 skipped" || return 1
	expect_eq "$(tally 'long | s_long')" "2 passed, 1 failed, 0 skipped" || return 1
	expect_eq "$(tally 'files | s_files_short')" "2 passed, 1 failed, 0 skipped"
}

ktap_run test_plan_and_results_agree test_slow_tee_after_process_substitution test_results_are_tallied test_silent_failure_counts test_no_result_counts \
	test_files_of_ktap_count_their_results test_cargo_lines_become_ktap \
	test_cargo_count_mismatch_fails
