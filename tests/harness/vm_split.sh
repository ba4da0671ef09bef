#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of the VM suite's split in two guests (scripts/vm-suite.sh):
# the committed table holds every area of tests/vm exactly once; a table
# that misses an area, or names one twice or one that does not exist, is
# caught; the one document of a run has one plan, numbers continued from
# guest a to b, each guest's closing checks named for it, and, when a guest
# panics mid-area or splats, its unrun tests failed by name and its verdict
# failed, the plan unchanged. The guests here are a stand-in for vm-run.sh
# that prints what a guest would. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

suite=$MLX_EXT_ROOT/scripts/vm-suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The stand-in for vm-run.sh: the guest's console (each planned result,
# then the closing checks) and vm-run.sh's verdict. FAKE_<guest>: ok, panic
# (after 3 results), splat (all results, then a BUG line), extra (a result
# beyond the plan), nolog (vm-run.sh dies before QEMU: no console).
cat >"$tmp/vm-run" <<'FAKE'
#!/usr/bin/env bash
areas=$(echo " $MLX_EXT_VM_APPEND " | sed -n 's/.* mlx_ext_areas=\([^ ]*\) .*/\1/p' | tr , ' ')
guest=$(echo " $MLX_EXT_VM_APPEND " | sed -n 's/.* mlx_ext_guest=\([^ ]*\) .*/\1/p')
mode=$(eval echo "\${FAKE_$guest:-ok}")
log=$MLX_EXT_BUILD/console-$MLX_EXT_VM_NAME.log
if [ "$mode" = nolog ]; then echo "mlx_ext: error: no kernel image at /x/bzImage (run: make kernel)" >&2; exit 1; fi
mapfile -t plan < <("$SUITE" plan $areas; echo "no_leaks_$guest"; echo "kernel_log_clean_$guest")
{
	echo "[    1.0] booting"
	echo "TAP version 13"
	echo "1..${#plan[@]}"
	n=0
	for t in "${plan[@]}"; do
		n=$((n + 1))
		if [ "$mode" = panic ] && [ $n = 4 ]; then echo "Kernel panic - not syncing: Fatal exception"; break; fi
		echo "# $t says"
		echo "ok $n $t"
	done
	[ "$mode" != extra ] || echo "ok $((n + 1)) one_more"
	[ "$mode" = panic ] || { echo "# Totals: pass:$n"; [ "$mode" != splat ] || echo "[    9.0] BUG: injected"; echo "mlx_ext-vm: done rc=0"; }
} >"$log"
case $mode in
panic) printf '\033[1m==> vm: FAILED: the guest panicked (see %s)\033[0m\n' "$log"; exit 1 ;;
splat) printf '\033[1m==> vm: FAILED: the kernel reported: BUG: injected (see %s)\033[0m\n' "$log"; exit 1 ;;
esac
echo "vm: ${#plan[@]} passed, 0 failed, 0 skipped"
FAKE
chmod +x "$tmp/vm-run"

# suite_run [VAR=VALUE...]: a run of the suite with the stand-in guests;
# its document in $tmp/doc, its exit status returned.
suite_run() {
	env MLX_EXT_BUILD="$tmp/build" MLX_EXT_VM_RUN="$tmp/vm-run" SUITE="$suite" "$@" \
		"$suite" run /nonexistent /nonexistent >"$tmp/doc" 2>"$tmp/err"
}

# results_agree: the document's plan equals its results, counted as make
# check's runner counts them; prints "PASSED FAILED SKIPPED".
results_agree() {
	local plan p f s
	plan=$(grep -m1 -E '^1\.\.[0-9]+$' "$tmp/doc" | cut -d. -f3)
	read -r p f s < <(ktap_counts "$tmp/doc")
	[ "$(grep -c '^1\.\.' "$tmp/doc")" = 1 ] || { echo "more than one plan"; return 1; }
	[ "$((p + f + s))" = "$plan" ] || { echo "plan $plan, results $((p + f + s))"; return 1; }
	# Numbered 1, 2, ... across both guests.
	grep -E '^(not )?ok [0-9]+ ' "$tmp/doc" | awk '{ n = $1 == "not" ? $3 : $2; if (n != NR) { print "result " NR " numbered " n; exit 1 } }' || return 1
	echo "$p $f $s"
}

# table ROWS...: a split table of ROWS ("area guest seconds") in $tmp/split.
table() { printf '%s\n' "# a table" "$@" >"$tmp/split"; }
real_rows() { grep -vE '^(#|$)' "$MLX_EXT_ROOT/tests/vm/split.txt"; }

test_split_table_holds_every_area_once() {
	local out areas listed
	out=$("$suite" split --strict 2>&1) || { echo "$out"; return 1; }
	areas=$(for f in "$MLX_EXT_ROOT"/tests/vm/*.sh; do
		grep -q '^ALL_TESTS=' "$f" && basename "$f" .sh; done | sort | xargs)
	listed=$(echo "$out" | cut -d' ' -f2- | tr ' ' '\n' | sort | xargs)
	expect_eq "$listed" "$areas" "the two guests' areas against tests/vm's"
}

# An area in neither list runs in the lighter guest, said; --strict fails.
test_split_area_in_neither_list() {
	local out
	mapfile -t rows < <(real_rows | grep -v '^vm[[:space:]]')
	table "${rows[@]}"
	MLX_EXT_SPLIT=$tmp/split "$suite" split --strict >/dev/null 2>&1 && { echo "--strict passed without vm"; return 1; }
	out=$(MLX_EXT_SPLIT=$tmp/split "$suite" split 2>"$tmp/err") || { cat "$tmp/err"; return 1; }
	grep -q "warning: area vm is not in" "$tmp/err" || { echo "no warning: $(cat "$tmp/err")"; return 1; }
	# The lighter guest by the table's seconds.
	local sa sb want=a
	sa=$(real_rows | awk '$1 != "vm" && $2 == "a" { s += $3 } END { print s + 0 }')
	sb=$(real_rows | awk '$1 != "vm" && $2 == "b" { s += $3 } END { print s + 0 }')
	[ "$sb" -ge "$sa" ] || want=b
	echo "$out" | grep -q "^$want .* vm\( \|$\)" || { echo "vm not in guest $want ($sa s against $sb s): $out"; return 1; }
}

test_split_area_in_both_lists() {
	mapfile -t rows < <(real_rows)
	table "${rows[@]}" "api	b	10"
	MLX_EXT_SPLIT=$tmp/split "$suite" split >/dev/null 2>"$tmp/err" && { echo "an area twice passed"; return 1; }
	grep -q "area api in guest a and again in b" "$tmp/err" || { cat "$tmp/err"; return 1; }
	# And a run refuses to start.
	MLX_EXT_SPLIT=$tmp/split suite_run && { echo "the run started"; return 1; }
	grep -q '^not ok\|^ok' "$tmp/doc" && { echo "the run printed results"; return 1; }
	return 0
}

test_split_unknown_area_or_guest() {
	mapfile -t rows < <(real_rows)
	table "${rows[@]}" "nosuch	a	5"
	MLX_EXT_SPLIT=$tmp/split "$suite" split >/dev/null 2>"$tmp/err" && { echo "an unknown area passed"; return 1; }
	grep -q "no area 'nosuch'" "$tmp/err" || { cat "$tmp/err"; return 1; }
	mapfile -t rows < <(real_rows | sed 's/^\(api[[:space:]]*\)a/\1c/')
	table "${rows[@]}"
	MLX_EXT_SPLIT=$tmp/split "$suite" split >/dev/null 2>"$tmp/err" && { echo "guest c passed"; return 1; }
	grep -q "guest 'c' is not a or b" "$tmp/err" || { cat "$tmp/err"; return 1; }
}

# The plan the host computes is each area's ALL_TESTS, then its cleanup,
# even where ALL_TESTS spans lines.
test_plan_from_all_tests() {
	local n
	n=$(awk '/^ALL_TESTS="/, /"$/' "$MLX_EXT_ROOT/tests/vm/api.sh" | grep -o 'test_[a-z0-9_]*' | wc -l)
	expect_eq "$("$suite" plan api | wc -l)" "$((n + 1))" "api's results" || return 1
	expect_eq "$("$suite" plan api | tail -n1)" api_cleanup || return 1
	expect_eq "$("$suite" plan vm | xargs)" "vm_smp kasan_active vm_cleanup"
}

test_times_from_a_console_log() {
	cat >"$tmp/console.log" <<'LOG'
# area api: 3 tests
# test_api_x took 10.5 s
[   3.0] kernel line
# test_api_y took 4.0 s
# area api took 20.2 s
# area vm: 1 tests
# test_vm_smp took 1.6 s
# test_kasan_active took 1.0 s
LOG
	expect_eq "$("$suite" times "$tmp/console.log" | xargs)" "api 20 vm 3"
}

test_run_both_guests_pass() {
	local counts
	suite_run || { cat "$tmp/err" "$tmp/doc"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	[ "${counts#* }" = "0 0" ] || { echo "results: $counts"; return 1; }
	grep -qE '^ok [0-9]+ no_leaks_a$' "$tmp/doc" && grep -qE '^ok [0-9]+ kernel_log_clean_b$' "$tmp/doc" ||
		{ echo "closing checks not named for their guest"; return 1; }
	grep -qE '^ok [0-9]+ guest_a$' "$tmp/doc" && grep -qE '^ok [0-9]+ guest_b$' "$tmp/doc" ||
		{ echo "no verdicts"; return 1; }
}

# Guest b panics in its first area: the plan stays, each test b did not run
# fails by name, b's verdict fails; a's results stand.
test_run_guest_panics_mid_area() {
	local counts first
	FAKE_b=panic suite_run && { echo "the run passed"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	first=$(sed -n 's/^# guest b: \([a-z_0-9]*\).*/\1/p' "$tmp/doc" | head -n1)
	grep -qE "^not ok [0-9]+ $(MLX_EXT_BUILD=$tmp "$suite" plan "$first" | sed -n 4p)$" "$tmp/doc" ||
		{ echo "b's 4th test is not failed by name"; return 1; }
	grep -qE '^not ok [0-9]+ kernel_log_clean_b$' "$tmp/doc" || { echo "b's closing check not failed"; return 1; }
	grep -qE '^not ok [0-9]+ guest_b$' "$tmp/doc" && grep -q '^# guest b: the guest panicked' "$tmp/doc" ||
		{ echo "b's verdict did not fail with the reason"; return 1; }
	grep -q '^not ok [0-9]* .*_a$\|^not ok [0-9]* guest_a$' "$tmp/doc" && { echo "guest a failed"; return 1; }
	return 0
}

# A splat in the second guest only fails that guest's verdict.
test_run_splat_in_second_guest_only() {
	local counts
	FAKE_b=splat suite_run && { echo "the run passed"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	expect_eq "$(grep -cE '^not ok ' "$tmp/doc")" 1 "failed results" || return 1
	grep -qE '^not ok [0-9]+ guest_b$' "$tmp/doc" && grep -q '^# guest b: the kernel reported: BUG: injected' "$tmp/doc" ||
		{ echo "b's verdict did not fail with the splat"; return 1; }
}

# Guest a panics: b's results keep the numbers the plan gives them.
test_run_first_guest_panics() {
	local counts
	FAKE_a=panic suite_run && { echo "the run passed"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	grep -qE '^not ok [0-9]+ guest_a$' "$tmp/doc" || { echo "a's verdict did not fail"; return 1; }
	grep -qE '^ok [0-9]+ guest_b$' "$tmp/doc" || { echo "b's verdict failed"; return 1; }
}

# vm-run.sh dies before QEMU, with an earlier run's console left behind:
# the guest fails by its reason, each of its tests by name; the document
# ends with its totals, and the run fails.
test_run_guest_without_console() {
	local counts
	suite_run || { echo "the first run failed"; return 1; }
	FAKE_b=nolog suite_run && { echo "the run passed"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	grep -q '^# guest b: no kernel image at /x/bzImage' "$tmp/doc" && grep -qE '^not ok [0-9]+ guest_b$' "$tmp/doc" ||
		{ echo "b's verdict did not fail with vm-run.sh's reason"; return 1; }
	grep -qE '^not ok [0-9]+ attach_refusals$' "$tmp/doc" || { echo "b's first test not failed by name"; return 1; }
	grep -q '^# Totals: pass:[0-9]* fail:[1-9]' "$tmp/doc" || { echo "no totals with the failures"; return 1; }
}

# A result beyond the plan is a comment, and fails the guest's verdict.
test_run_result_beyond_the_plan() {
	local counts
	FAKE_b=extra suite_run && { echo "the run passed"; return 1; }
	counts=$(results_agree) || { echo "$counts"; return 1; }
	grep -q '^# beyond the plan: ok [0-9]* one_more' "$tmp/doc" && grep -qE '^not ok [0-9]+ guest_b$' "$tmp/doc" ||
		{ echo "the extra result is not a comment failing b"; return 1; }
}

test_run_refuses_chosen_areas() {
	MLX_EXT_VM_APPEND="mlx_ext_areas=api" suite_run && { echo "the run started"; return 1; }
	grep -q "run them in one guest" "$tmp/err" || { cat "$tmp/err"; return 1; }
}

ktap_run test_split_table_holds_every_area_once test_split_area_in_neither_list \
	test_split_area_in_both_lists test_split_unknown_area_or_guest test_plan_from_all_tests \
	test_times_from_a_console_log test_run_both_guests_pass test_run_guest_panics_mid_area \
	test_run_splat_in_second_guest_only test_run_first_guest_panics test_run_guest_without_console \
	test_run_result_beyond_the_plan test_run_refuses_chosen_areas
