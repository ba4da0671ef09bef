#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of the kernel cache's lock (cached_build in scripts/lib.sh),
# with a fake build in a temporary cache: concurrent builds of one key build
# once and neither deletes the other's tree; an interrupted build is started
# over; a failed build leaves nothing marked complete; a lock held too long
# fails with a message. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MLX_EXT_CACHE=$tmp/cache
say() { echo "$*" >&2; }

# The fake build: counts its runs, takes a while, leaves a file.
fake_build() {
	echo run >>"$tmp/runs"
	sleep "${FAKE_SECONDS:-2}"
	[ -z "${FAKE_FAIL:-}" ] || die "fake build failed"
	echo tree >"$1/tree"
}
build() { (cached_build "$MLX_EXT_CACHE/k" fake "${1:-fake_build}"); }

test_concurrent_builds_build_once() {
	rm -rf "$MLX_EXT_CACHE" "$tmp/runs"
	build >"$tmp/out1" 2>"$tmp/err1" &
	a=$!
	sleep 0.5
	build >"$tmp/out2" 2>"$tmp/err2" &
	b=$!
	wait $a || { echo "first build failed"; cat "$tmp/err1"; return 1; }
	wait $b || { echo "second build failed"; cat "$tmp/err2"; return 1; }
	expect_eq "$(wc -l <"$tmp/runs")" 1 "builds run" || return 1
	grep -q "waiting for it" "$tmp/err2" || { echo "second build did not wait"; cat "$tmp/err2"; return 1; }
	grep -q "reusing the build that just finished" "$tmp/err2" || { echo "second build did not reuse"; return 1; }
	expect_eq "$(cat "$tmp/out1") $(cat "$tmp/out2")" "$MLX_EXT_CACHE/k $MLX_EXT_CACHE/k" "printed dirs" || return 1
	[ -f "$MLX_EXT_CACHE/k/tree" ] && [ -f "$MLX_EXT_CACHE/k/.complete" ] || { echo "tree lost"; return 1; }
}

test_complete_build_is_reused_without_lock() {
	FAKE_SECONDS=0 build >/dev/null 2>&1
	# Hold the lock: a finished build must still be usable.
	exec {fd}>"$MLX_EXT_CACHE/k.lock"
	flock "$fd"
	MLX_EXT_LOCK_TIMEOUT=1 build >/dev/null 2>"$tmp/err"
	rc=$?
	exec {fd}>&-
	expect_eq "$rc" 0 "exit of a build with a complete tree" || { cat "$tmp/err"; return 1; }
	grep -q "reusing cached build" "$tmp/err"
}

test_interrupted_build_starts_over() {
	rm -rf "$MLX_EXT_CACHE" "$tmp/runs"
	mkdir -p "$MLX_EXT_CACHE/k"
	echo stale >"$MLX_EXT_CACHE/k/half-built"
	FAKE_SECONDS=0 build >/dev/null 2>&1 || return 1
	[ ! -e "$MLX_EXT_CACHE/k/half-built" ] || { echo "stale tree kept"; return 1; }
	expect_eq "$(wc -l <"$tmp/runs")" 1 "builds run"
}

test_failed_build_is_not_complete() {
	rm -rf "$MLX_EXT_CACHE" "$tmp/runs"
	if FAKE_SECONDS=0 FAKE_FAIL=1 build >/dev/null 2>&1; then echo "failed build succeeded"; return 1; fi
	[ ! -e "$MLX_EXT_CACHE/k/.complete" ] || { echo "failed build marked complete"; return 1; }
	# The lock was released: the next build runs at once.
	MLX_EXT_LOCK_TIMEOUT=1 FAKE_SECONDS=0 build >/dev/null 2>&1 || { echo "retry failed"; return 1; }
	expect_eq "$(wc -l <"$tmp/runs")" 2 "builds run"
}

test_lock_timeout_fails_with_message() {
	rm -rf "$MLX_EXT_CACHE"
	mkdir -p "$MLX_EXT_CACHE"
	exec {fd}>"$MLX_EXT_CACHE/k.lock"
	flock "$fd"
	MLX_EXT_LOCK_TIMEOUT=1 build >/dev/null 2>"$tmp/err"
	rc=$?
	exec {fd}>&-
	[ "$rc" != 0 ] || { echo "build went ahead under someone else's lock"; return 1; }
	grep -q "still held after 1s" "$tmp/err" || { cat "$tmp/err"; return 1; }
}

ktap_run test_concurrent_builds_build_once test_complete_build_is_reused_without_lock \
	test_interrupted_build_starts_over test_failed_build_is_not_complete \
	test_lock_timeout_fails_with_message
