#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boots the test kernel N times (scripts/guest/boot.sh: rxe0, mlx_ext and
# the simulator loaded and unloaded), G guests at once, and counts the boots
# that panicked, splatted, timed out or did not finish, each kind apart.
# The console of every boot that did not end cleanly is kept as
# build/boot-loop/fail-K.log. The last line: "N boots: P panics, S splats,
# T timeouts, U unfinished". Exits non-zero if any boot did not end cleanly.
#
# Usage: boot-loop.sh KERNEL_DIR N [G]
# Environment: as scripts/vm-run.sh (MLX_EXT_TCG_THREAD=single|multi,
# MLX_EXT_VM_TIMEOUT, default 300 here).
source "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: boot-loop.sh KERNEL_DIR N [GUESTS_AT_ONCE]"
kdir=$1 n=$2 g=${3:-1}
out=$MLX_EXT_BUILD/boot-loop
rm -rf "$out"
mkdir -p "$out"
export MLX_EXT_VM_TIMEOUT=${MLX_EXT_VM_TIMEOUT:-300}

# one K: boot K in a build directory of its own; its console is kept there.
one() {
	MLX_EXT_BUILD=$out/$1 "$MLX_EXT_ROOT/scripts/vm-run.sh" \
		"$MLX_EXT_ROOT/scripts/guest/boot.sh" "$kdir" >"$out/$1.run" 2>&1
}

# classify K: panic, splat, timeout, unfinished or ok, from boot K's
# console (a panic first: it also ends without "done").
classify() {
	local log=$out/$1/console-boot.log
	if grep -q 'Kernel panic' "$log"; then echo panic
	elif grep -qE "$CONSOLE_SPLAT_RE" "$log"; then echo splat
	elif grep -q 'FAILED: timed out' "$out/$1.run"; then echo timeout
	elif ! grep -q '^mlx_ext-vm: done rc=0' "$log"; then echo unfinished
	else echo ok
	fi
}

declare -A count=([panic]=0 [splat]=0 [timeout]=0 [unfinished]=0 [ok]=0)
k=0
start=$SECONDS
while [ $k -lt "$n" ]; do
	batch=()
	for _ in $(seq "$g"); do
		[ $k -lt "$n" ] || break
		k=$((k + 1))
		batch+=("$k")
		one "$k" &
	done
	wait
	for b in "${batch[@]}"; do
		v=$(classify "$b")
		count[$v]=$((count[$v] + 1))
		if [ "$v" != ok ]; then
			cp "$out/$b/console-boot.log" "$out/fail-$b.log"
			say "boot $b: $v ($(grep -m1 -E 'Kernel panic|splat:|BUG:|Oops' "$out/$b/console-boot.log"))"
		fi
		rm -rf "${out:?}/$b"
	done
	say "boot-loop: $k of $n after $((SECONDS - start)) s"
done
echo "$n boots: ${count[panic]} panics, ${count[splat]} splats, ${count[timeout]} timeouts, ${count[unfinished]} unfinished"
[ "${count[ok]}" = "$n" ]
