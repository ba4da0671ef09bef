#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The VM test suite, in one boot: every area of tests/vm (each file with an
# ALL_TESTS list, lib/area.sh) in turn, each with its own setup and
# cleanup, then the closing checks (no leak, a clean kernel log), as one
# KTAP document whose results are numbered across the areas.
#
# On the kernel command line (MLX_EXT_VM_APPEND):
#   mlx_ext_areas=a,b   runs only the areas a.sh and b.sh
#   mlx_ext_tests=a,b   runs only test_a and test_b, each in its area
#   mlx_ext_guest=g     this is guest g of two (scripts/vm-suite.sh): the
#                       closing checks are named for it (no_leaks_g)

. /tests/lib/area.sh

# The areas: every file here with a list of tests (not this one, nor the
# links to lib/ kept for older scripts), in name order: each stands alone.
areas=
for f in /tests/*.sh; do
	[ -f "$f" ] && [ ! -L "$f" ] && grep -q '^ALL_TESTS=' "$f" || continue
	areas="$areas $(basename "$f" .sh)"
done
only=$(cmdline_list mlx_ext_areas)
if [ -n "$only" ]; then
	for a in $only; do
		echo " $areas " | grep -q " $a " || { echo "mlx_ext_areas: no area '$a' (areas:$areas)"; exit 1; }
	done
	areas=$only
fi

# mlx_ext_tests= names tests of the areas, each of which must exist.
only=$(cmdline_list mlx_ext_tests)
if [ -n "$only" ]; then
	all=$(for a in $areas; do grep -o '^test_[a-z0-9_]*()' /tests/$a.sh; done | tr -d '()' | tr '\n' ' ')
	for t in $only; do
		echo " $all " | grep -q " test_$t " || { echo "mlx_ext_tests: no test_$t in the areas: $areas"; exit 1; }
	done
fi

# The plan: each area's tests (the list it would run; an area that cannot
# even list them, a syntax error say, is one failed result), then the
# closing ones.
total=0
for a in $areas; do
	sh /tests/$a.sh --list >/tmp/list.$a 2>&1 || touch /tmp/list.$a.broken
	if [ -e /tmp/list.$a.broken ]; then n_a=1; else n_a=$(wc -w </tmp/list.$a); fi
	total=$((total + n_a))
done
set -- $CLOSING_TESTS
echo "TAP version 13"
echo "1..$((total + $#))"
ktap_begin

n=1
for a in $areas; do
	want=$(cat /tmp/list.$a)
	if [ -e /tmp/list.$a.broken ]; then
		echo "$want" | sed 's/^/# /'
		ktap_n=$n
		ktap_result 1 "$a # the area does not run"
		n=$((n + 1))
		continue
	fi
	set -- $want
	[ $# -gt 0 ] || continue
	echo "# area $a: $# tests"
	area_t0=$(cut -d' ' -f1 /proc/uptime)
	# Shown as it comes (the console is the log) and kept to be counted.
	MLX_EXT_KTAP_FIRST=$n sh /tests/$a.sh 2>&1 | tee /tmp/area.out
	# What the area ran: its results add to the totals; a test it never
	# reached (the area's shell died) is a failure, with its name.
	got=$(grep -cE '^(not )?ok [0-9]+ ' /tmp/area.out)
	ktap_pass=$((ktap_pass + $(grep -cE '^ok [0-9]+ ' /tmp/area.out) - $(grep -cE '^ok [0-9]+ .* # SKIP' /tmp/area.out)))
	ktap_skip=$((ktap_skip + $(grep -cE '^ok [0-9]+ .* # SKIP' /tmp/area.out)))
	ktap_fail=$((ktap_fail + $(grep -cE '^not ok [0-9]+ ' /tmp/area.out)))
	ktap_n=$((n + got - 1))
	if [ "$got" -lt $# ]; then
		echo "# area $a stopped after $got of its $# tests"
		shift "$got"
		for t in "$@"; do
			ktap_n=$((ktap_n + 1))
			[ "$t" != cleanup ] || t=${a}_cleanup
			ktap_result 1 "${t#test_}"
		done
	fi
	n=$((ktap_n + 1))
	# The area's whole time, its setup included (scripts/vm-suite.sh times).
	echo "# area $a took $(awk -v a="$area_t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }') s"
	# Whatever an area that died or failed its cleanup left would fail
	# the next area's setup: removed here, and said.
	left=$(stack_left)
	if [ -n "$left" ]; then
		echo "# area $a left: $left"
		stack_down | sed 's/^/# /'
	fi
done
guest=$(cmdline_list mlx_ext_guest)
for t in $CLOSING_TESTS; do ktap_test "$t" "${t#test_}${guest:+_$guest}"; done
ktap_totals
