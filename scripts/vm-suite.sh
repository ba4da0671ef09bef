#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The VM suite in two guests at once (make check's VM step): the areas of
# tests/vm split as tests/vm/split.txt says, each guest booted by
# scripts/vm-run.sh with tests/vm/check.sh and its own areas, and one KTAP
# document made of the two. Why two guests, and how they run, are in
# Documentation/building.rst, "The VM suite in two guests".
#
# Usage: vm-suite.sh COMMAND ...
#   run KERNEL_DIR EXTRA_DIR   both guests at once; prints the one document,
#                              with each guest's progress as comments
#   split [--strict]           prints "a AREA..." and "b AREA...": the table
#                              against the areas tests/vm has; --strict
#                              fails on an area the table misses
#   plan AREA...               the results the areas print, in order, as the
#                              host computes them from their ALL_TESTS
#   times LOG...               each area's seconds in console logs
#   table LOG...               a new split table from console logs
#   merge GUEST FIRST PLAN CONSOLE RUNLOG RC
#                              the guest's part of the document, numbered
#                              from FIRST
# Environment: MLX_EXT_VM_TIMEOUT (each guest's limit), and what vm-run.sh
# reads; MLX_EXT_SPLIT another table, MLX_EXT_VM_RUN another vm-run.sh (the
# harness's tests: tests/harness/vm_split.sh); MLX_EXT_VM_APPEND reaches
# both guests, and may not choose areas or tests (for those, one guest:
# make vm-run SCRIPT=tests/vm/check.sh).
source "$(dirname "$0")/lib.sh"

vm=$MLX_EXT_ROOT/tests/vm
table=${MLX_EXT_SPLIT:-$vm/split.txt}
guests=(a b)

# areas: every area of tests/vm (a file with an ALL_TESTS list, as check.sh
# finds them in the guest), in name order.
areas() {
	local f
	for f in "$vm"/*.sh; do
		[ -f "$f" ] && [ ! -L "$f" ] && grep -q '^ALL_TESTS=' "$f" || continue
		basename "$f" .sh
	done
}

# list_var FILE NAME: the words of the shell string NAME="..." in FILE,
# which may span lines.
list_var() {
	awk -v name="$2" '
		!on && index($0, name "=\"") == 1 { on = 1; $0 = substr($0, length(name) + 3) }
		on { if ((i = index($0, "\"")) > 0) { s = s " " substr($0, 1, i - 1); exit } s = s " " $0 }
		END { print s }' "$1" | xargs
}

# plan AREA...: the result names the areas print in check.sh, in order:
# each area's ALL_TESTS without test_, then its cleanup (lib/area.sh).
plan() {
	local a t
	for a in "$@"; do
		[ -f "$vm/$a.sh" ] || die "no area '$a' in tests/vm"
		for t in $(list_var "$vm/$a.sh" ALL_TESTS); do echo "${t#test_}"; done
		echo "${a}_cleanup"
	done
}

# closing GUEST: the closing checks' names in GUEST (check.sh).
closing() {
	local t
	for t in $(list_var "$vm/lib/area.sh" CLOSING_TESTS); do echo "${t#test_}_$1"; done
}

# split [--strict]: reads the table; prints each guest's areas.
split() {
	local strict=${1:-} area guest secs rc=0 known line longest=0
	declare -A where load
	known=" $(areas | xargs) "
	load=([a]=0 [b]=0)
	while read -r area guest secs; do
		[ -n "$area" ] && [ "${area:0:1}" != "#" ] || continue
		case "$guest" in a | b) ;; *) echo "mlx_ext: error: $table: area $area: guest '$guest' is not a or b" >&2; rc=1; continue ;; esac
		[[ "$secs" =~ ^[0-9]+$ ]] || { echo "mlx_ext: error: $table: area $area: '$secs' is not a number of seconds" >&2; rc=1; continue; }
		if [[ $known != *" $area "* ]]; then
			echo "mlx_ext: error: $table: no area '$area' in tests/vm" >&2; rc=1; continue
		fi
		if [ -n "${where[$area]:-}" ]; then
			echo "mlx_ext: error: $table: area $area in guest ${where[$area]} and again in $guest" >&2; rc=1; continue
		fi
		where[$area]=$guest
		load[$guest]=$((load[$guest] + secs))
		[ "$secs" -le "$longest" ] || longest=$secs
	done <"$table"
	for area in $known; do
		[ -z "${where[$area]:-}" ] || continue
		guest=a
		[ "${load[b]}" -ge "${load[a]}" ] || guest=b
		echo "mlx_ext: warning: area $area is not in $table: it runs in the lighter guest, $guest" >&2
		[ "$strict" != --strict ] || rc=1
		where[$area]=$guest
		# Its time unknown, it counts as the longest area's, so that the
		# next missing area may go to the other guest.
		load[$guest]=$((load[$guest] + longest))
	done
	for guest in "${guests[@]}"; do
		line=
		for area in $known; do [ "${where[$area]}" != "$guest" ] || line="$line $area"; done
		echo "$guest$line"
	done
	return $rc
}

# times LOG...: "AREA SECONDS" for each area of the console logs: the area's
# own "took" line (check.sh), else the sum of its tests' times.
times() {
	awk '/^# area [a-z_0-9]+: [0-9]+ tests/ { area = $3; sub(":", "", area) }
		/^# area [a-z_0-9]+ took [0-9.]+ s/ { whole[$3] = $5; next }
		area && /^# test_[a-z_0-9]+ took [0-9.]+ s/ { sum[area] += $4 }
		END { for (a in sum) if (!(a in whole)) whole[a] = sum[a]
			for (a in whole) printf "%s %.0f\n", a, whole[a] }' "$@" | sort
}

# table LOG...: the split table for the areas' times in LOGs, each area (the
# longest first) to the guest with less so far.
table() {
	local area secs load_a=0 load_b=0 guest
	cat <<-EOF
		# The VM suite's split between make check's two guests (scripts/vm-suite.sh).
		# Each area of tests/vm is in exactly one guest; an area missing here runs
		# in the lighter guest, with a warning, and fails the harness's test
		# (tests/harness/vm_split.sh). Refresh from the console logs of a run:
		#   scripts/vm-suite.sh table build/console-check-a.log build/console-check-b.log >tests/vm/split.txt
		# seconds: each area's time in the logs of $(date +%F) (the machine: see
		# Documentation/measurements.rst).
		#
		# area		guest	seconds
	EOF
	times "$@" | sort -k2,2nr | while read -r area secs; do
		if [ "$load_a" -le "$load_b" ]; then guest=a load_a=$((load_a + secs)); else guest=b load_b=$((load_b + secs)); fi
		printf '%s\t%s%s\t%s\n' "$area" "$([ ${#area} -ge 8 ] || printf '\t')" "$guest" "$secs"
	done
}

# merge GUEST FIRST PLAN CONSOLE RUNLOG RC: GUEST's results in CONSOLE,
# numbered from FIRST, against PLAN (a file: the names the host planned, in
# order); a planned result the guest did not print fails by name, and one
# beyond the plan is a comment; then the guest's verdict as a result of its
# own, from RUNLOG (vm-run.sh's output) and RC (its exit status): it fails
# on vm-run.sh's "vm: FAILED:", on results against the plan, and on a
# non-zero status that no failed result explains.
merge() {
	local guest=$1 first=$2 plan=$3 console=$4 runlog=$5 rc=$6 reason input=$4
	# vm-run.sh's verdict, or what it died of before it had one.
	reason=$(plain "$runlog" | sed -n 's/^==> vm: FAILED: //p' | head -n1)
	[ -n "$reason" ] || reason=$(plain "$runlog" | sed -n 's/^mlx_ext: error: //p' | head -n1)
	if [ ! -f "$console" ]; then
		reason=${reason:-no console log $console}
		input=/dev/null
	fi
	awk -v guest="$guest" -v first="$first" -v reason="$reason" -v console="$console" -v rc="$rc" '
		FNR == NR { want[++planned] = $0; next }
		!tap && /^TAP version/ { tap = 1; next }
		!tap { next }
		!plan && /^1\.\.[0-9]+/ { plan = 1; next }
		/^mlx_ext-vm: done/ { done = 1 }
		/^# Totals:/ || done { next }
		/^(not )?ok [0-9]+ / {
			got++
			line = $0
			sub(/^(not )?ok [0-9]+ /, "", line)
			name = line
			sub(/ # .*/, "", name)
			if (got > planned) {
				bad = bad "; result " got " (" name ") beyond the plan of " planned
				print "# beyond the plan: " $0
				next
			}
			if (name != want[got] && !mismatch)
				mismatch = "; result " got " is " name ", the host planned " want[got]
			if ($1 == "not") failed++
			print ($1 == "not" ? "not ok " : "ok ") (first + got - 1) " " line
			next
		}
		{ print }
		END {
			for (i = got + 1; i <= planned; i++) {
				print "# guest " guest " did not run " want[i]
				print "not ok " (first + i - 1) " " want[i]
			}
			if (got < planned) bad = bad "; " (planned - got) " of its " planned " results missing"
			why = reason mismatch bad
			if (why == "" && rc != 0 && !failed) why = "vm-run.sh exited " rc " with no failed result"
			sub(/^; /, "", why)
			print "# guest " guest ": console " console
			if (why == "") print "ok " (first + planned) " guest_" guest
			else { print "# guest " guest ": " why; print "not ok " (first + planned) " guest_" guest }
		}' "$plan" "$input"
}

# plain [LOG]: LOG (or the input, as it comes) without say()'s bold (lib.sh).
plain() { sed -u 's/\x1b\[[0-9;]*m//g' "$@" 2>/dev/null; }

# run KDIR EXTRA: both guests at once, then the one document, kept in
# build/suite/document.
run() {
	local kdir=$1 extra=$2 g areas total=0 first=1 pids=() tails=() rcs=() i
	case " ${MLX_EXT_VM_APPEND:-} " in
	*" mlx_ext_areas="* | *" mlx_ext_tests="*)
		die "MLX_EXT_VM_APPEND chooses areas or tests: run them in one guest (make vm-run SCRIPT=tests/vm/check.sh)" ;;
	esac
	local dir=$MLX_EXT_BUILD/suite doc=$MLX_EXT_BUILD/suite/document
	rm -rf "$dir"
	mkdir -p "$dir"
	split >"$dir/split" 2> >(sed 's/^/# /') || die "the split table $table is wrong (above)"
	declare -A areas_of
	while read -r g areas; do
		[ -n "$areas" ] || die "guest $g has no area in $table"
		areas_of[$g]=$(echo "$areas" | tr ' ' ',')
		{ plan $areas; closing "$g"; } >"$dir/plan-$g"
		total=$((total + $(wc -l <"$dir/plan-$g") + 1))
	done <"$dir/split"
	# From here on every guest's part is printed, whatever fails.
	set +e
	printf 'TAP version 13\n1..%s\n' "$total" | tee "$doc"
	for g in "${guests[@]}"; do
		echo "# guest $g: ${areas_of[$g]//,/ } ($(wc -l <"$dir/plan-$g") results)" | tee -a "$doc"
		# An earlier run's console must not stand in for this one's.
		rm -f "$MLX_EXT_BUILD/console-check-$g.log"
		# Each guest's QEMU is vm-run.sh's, with its areas and its logs'
		# names (console-check-GUEST.log).
		(
			export MLX_EXT_VM_NAME=check-$g
			export MLX_EXT_VM_APPEND="mlx_ext_areas=${areas_of[$g]} mlx_ext_guest=$g${MLX_EXT_VM_APPEND:+ $MLX_EXT_VM_APPEND}"
			exec "${MLX_EXT_VM_RUN:-$MLX_EXT_ROOT/scripts/vm-run.sh}" "$vm/check.sh" "$kdir" "$extra"
		) >"$dir/run-$g.log" 2>&1 &
		pids+=($!)
	done
	# Progress: each guest's areas and failures as they come, until its
	# vm-run.sh ends (tail --pid).
	for i in "${!guests[@]}"; do
		g=${guests[$i]}
		tail -n +1 -F --pid="${pids[$i]}" "$dir/run-$g.log" 2>/dev/null | plain |
			awk -v g="$g" '/^# area |^not ok |vm: (ran for|FAILED)|Kernel panic|^mlx_ext: error/ { print "# " g ": " $0; fflush() }' &
		tails+=($!)
	done
	for i in "${!guests[@]}"; do
		wait "${pids[$i]}"
		rcs[$i]=$?
	done
	wait "${tails[@]}"
	for i in "${!guests[@]}"; do
		g=${guests[$i]}
		plain "$dir/run-$g.log" | grep -E '^(==> )?vm: |^mlx_ext: error: ' | sed "s/^/# $g: /"
		merge "$g" "$first" "$dir/plan-$g" "$MLX_EXT_BUILD/console-check-$g.log" "$dir/run-$g.log" "${rcs[$i]}"
		first=$((first + $(wc -l <"$dir/plan-$g") + 1))
	done | tee -a "$doc"
	local p f s
	read -r p f s < <(ktap_counts "$doc")
	echo "# Totals: pass:$p fail:$f xfail:0 xpass:0 skip:$s error:0" | tee -a "$doc"
	[ "$f" = 0 ] && [ $((p + f + s)) = "$total" ]
}

cmd=${1:-}
shift || true
case "$cmd" in
run)
	[ $# = 2 ] || die "usage: vm-suite.sh run KERNEL_DIR EXTRA_DIR"
	run "$@" ;;
split) split "$@" ;;
plan) plan "$@" ;;
times) [ $# -gt 0 ] || die "usage: vm-suite.sh times LOG..."; times "$@" ;;
table) [ $# -gt 0 ] || die "usage: vm-suite.sh table LOG..."; table "$@" ;;
merge)
	[ $# = 6 ] || die "usage: vm-suite.sh merge GUEST FIRST PLAN CONSOLE RUNLOG RC"
	merge "$@" ;;
*) die "usage: vm-suite.sh run|split|plan|times|table|merge ... (see the script's head)" ;;
esac
