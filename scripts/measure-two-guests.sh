#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Measures the VM suite in two guests at once against one guest, on this
# machine, in one sitting (issue 48): rounds of
#   one:    tests/vm/check.sh in one guest, every area, multi-threaded TCG
#           (make check's VM step before it ran two guests);
#   multi:  two guests at once, areas split in A and B, QEMU's default
#           multi-threaded TCG (a host thread per vCPU: 4 on 2 cores);
#   single: the same with MLX_EXT_TCG_THREAD=single (one host thread per
#           guest round-robins its two vCPUs);
#   suite:  make check's VM step, scripts/vm-suite.sh run (its own split,
#           tests/vm/split.txt, and its TCG default; AREAS_* unused);
# in the order given (default: multi single multi single, ABAB), each
# QEMU's threads' CPU sampled once a second from /proc. Prints one line a
# run: setup, wall seconds of each guest and of the pair, QEMU's CPU-seconds
# and mean cores busy, and each guest's verdict; the samples go to
# build/measure/SETUP-N-GUEST.cpu (seconds, CPU-seconds so far per thread).
#
# Usage: measure-two-guests.sh KERNEL_DIR "AREAS_A" "AREAS_B" [SETUP...]
#   AREAS_*  comma-separated area names (tests/vm/<area>.sh)
# The modules at the top of the tree must be built for KERNEL_DIR.
source "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || die "usage: measure-two-guests.sh KERNEL_DIR AREAS_A AREAS_B [one|multi|single|suite...]"
kdir=$1 areas_a=$2 areas_b=$3
shift 3
setups=("$@")
[ ${#setups[@]} -gt 0 ] || setups=(multi single multi single)
out=$MLX_EXT_BUILD/measure
mkdir -p "$out"
extra=$MLX_EXT_BUILD/vm-extra
"$MLX_EXT_ROOT/scripts/vm-extra.sh" "$extra" >/dev/null 2>&1 || die "vm-extra.sh failed"

# sample PID FILE TAG: until PID ends, once a second, "SECONDS CPU-SECONDS..."
# of every thread of the QEMU whose command line has TAG (utime + stime,
# /proc/PID/task/TID/stat fields 14 and 15).
sample() {
	local pid=$1 file=$2 tag=$3 t0=$SECONDS p qpid hz
	hz=$(getconf CLK_TCK)
	: >"$file"
	while kill -0 "$pid" 2>/dev/null; do
		qpid=
		for p in $(pgrep -x qemu-system-x86); do
			grep -qa "$tag" /proc/"$p"/cmdline 2>/dev/null && qpid=$p
		done
		if [ -n "$qpid" ]; then
			echo "$((SECONDS - t0)) $(cat /proc/"$qpid"/task/*/stat 2>/dev/null |
				awk -v hz="$hz" '{ printf "%.2f ", ($14 + $15) / hz }')" >>"$file"
		fi
		sleep 1
	done
}

# guest NAME AREAS THREAD: one vm-run of the suite with AREAS (all if
# empty) in build/measure/NAME, in the background; sets pid_NAME.
guest() {
	local name=$1 areas=$2 thread=$3
	mkdir -p "$out/$name"
	(
		export MLX_EXT_BUILD=$out/$name MLX_EXT_VM_TIMEOUT=2700
		[ -n "$areas" ] && export MLX_EXT_VM_APPEND="mlx_ext_areas=$areas"
		[ -n "$thread" ] && export MLX_EXT_TCG_THREAD=$thread
		start=$SECONDS
		"$MLX_EXT_ROOT/scripts/vm-run.sh" tests/vm/check.sh "$kdir" "$extra" >"$out/$name/run.log" 2>&1
		echo "$? $((SECONDS - start))" >"$out/$name/result"
	) &
	eval "pid_$name=$!"
}

# verdict NAME: "rc=R Ns P/F/S" of a finished guest.
verdict() {
	local rc secs tally
	read -r rc secs <"$out/$1/result"
	tally=$(grep -m1 -oE '^vm: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out/$1/run.log" | tail -n1)
	echo "$1: rc=$rc ${secs}s ${tally#vm: }"
}

# cpu FILE: the last sample's CPU-seconds summed over threads.
cpu() { tail -n1 "$1" | awk '{ s = 0; for (i = 2; i <= NF; i++) s += $i; printf "%.0f", s }'; }

# cores CPU_SECONDS WALL_SECONDS: the mean cores busy.
cores() { awk -v c="$1" -v w="$2" 'BEGIN { printf "%.2f", c / w }'; }

n=0
for setup in "${setups[@]}"; do
	n=$((n + 1))
	start=$SECONDS
	case $setup in
	one)
		guest "one$n" "" multi
		sample "$(eval echo \$pid_one$n)" "$out/$setup-$n-one.cpu" "measure/one$n/" &
		wait
		wall=$((SECONDS - start))
		c=$(cpu "$out/$setup-$n-one.cpu")
		echo "run $n one: wall ${wall}s, QEMU ${c} CPU-s, $(cores "$c" "$wall") cores; $(verdict one$n)"
		;;
	multi | single)
		thread=$setup
		guest "a$n" "$areas_a" "$thread"
		guest "b$n" "$areas_b" "$thread"
		sample "$(eval echo \$pid_a$n)" "$out/$setup-$n-a.cpu" "measure/a$n/" &
		sample "$(eval echo \$pid_b$n)" "$out/$setup-$n-b.cpu" "measure/b$n/" &
		wait
		wall=$((SECONDS - start))
		ca=$(cpu "$out/$setup-$n-a.cpu") cb=$(cpu "$out/$setup-$n-b.cpu")
		echo "run $n $setup: wall ${wall}s, QEMU ${ca}+${cb} CPU-s, $(cores $((ca + cb)) "$wall") cores; $(verdict a$n); $(verdict b$n)"
		;;
	suite)
		mkdir -p "$out/suite$n"
		(
			export MLX_EXT_BUILD=$out/suite$n MLX_EXT_VM_TIMEOUT=2700
			start=$SECONDS
			"$MLX_EXT_ROOT/scripts/vm-suite.sh" run "$kdir" "$extra" >"$out/suite$n/run.log" 2>&1
			echo "$? $((SECONDS - start))" >"$out/suite$n/result"
		) &
		pid=$!
		sample "$pid" "$out/$setup-$n-a.cpu" "suite$n/initramfs-check-a" &
		sample "$pid" "$out/$setup-$n-b.cpu" "suite$n/initramfs-check-b" &
		wait
		wall=$((SECONDS - start))
		ca=$(cpu "$out/$setup-$n-a.cpu") cb=$(cpu "$out/$setup-$n-b.cpu")
		read -r rc _ <"$out/suite$n/result"
		echo "run $n suite: wall ${wall}s, QEMU ${ca}+${cb} CPU-s, $(cores $((ca + cb)) "$wall") cores; rc=$rc $(grep -m1 '^# Totals' "$out/suite$n/run.log")"
		;;
	*) die "unknown setup '$setup' (one, multi, single, suite)" ;;
	esac
done
