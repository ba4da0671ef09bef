#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench` (its GUID half): how fast a port's VF GUID table converges
# with an accepting SA, for a simulated ConnectX-3 with 126 VFs: SA requests
# and wall time from the device's creation to a converged table, and the
# same for 1000 admin writes spread over every entry. The floor is one
# request per record that has work (16 here). Then the requests a port sends
# in ten minutes to an SA that fails every one (the port's SA backoff). A
# benchmark, not a test: it prints figures and fails only if something could
# not run.

. /tests/lib/common.sh

SIM=/sys/bus/mlx_ext_sim
WRITES=${MLX_EXT_BENCH_WRITES:-1000}
modprobe mlx_ext_sim && modprobe mlx_ext || exit 1
T=$IB/mlxsim0/iov/ports/1
SA=/sys/kernel/debug/mlx_ext_sim/mlxsim0/sa1

now_ms() {
	awk '{ printf "%d", $1 * 1000 }' /proc/uptime
}

requests() {
	sed -n 3p $SA | awk '{ print $2 }'
}

# The entries whose operational GUID is not the admin value (entry 1, the
# PF's second, holds none in either).
unconverged() {
	cat $T/admin_guids/* >/tmp/admin
	cat $T/gids/* | cut -d: -f5- | tr -d : >/tmp/gids
	paste /tmp/admin /tmp/gids | awk '
		{ a = $1; if (a == "ffffffffffffffff") a = "0"; sub(/^0+/, "", a); if (a == "") a = "0"
		  g = $2; sub(/^0+/, "", g); if (g == "") g = "0" }
		a != g { n++ } END { print n + 0 }'
}

# wait_converged: polls until every entry is operational; fails after 300 s.
wait_converged() {
	i=0
	while [ "$(unconverged)" != 0 ]; do
		i=$((i + 1))
		[ $i -lt 6000 ] || { echo "not converged after 300 s: $(unconverged) entries"; return 1; }
		sleep 0.05
	done
}

echo "# VF GUID tables benchmark: cx3, 126 VFs, accepting SA, kernel $(uname -r), $(nproc) CPUs (QEMU)"
t0=$(now_ms)
echo "0 cx3 1 126" >$SIM/new_device || exit 1
wait_converged || exit 1
t1=$(now_ms)
r1=$(requests)
echo "start: $r1 SA requests, $((t1 - t0)) ms from creation to a converged table (floor: 16 requests)"

t2=$(now_ms)
i=0
while [ $i -lt $WRITES ]; do
	e=$((1 + i % 127))
	printf '%x\n' $((0x100000 + i)) >$T/admin_guids/$e || exit 1
	i=$((i + 1))
done
t3=$(now_ms)
wait_converged || exit 1
t4=$(now_ms)
r2=$(($(requests) - r1))
echo "$WRITES admin writes over entries 1 to 127: written in $((t3 - t2)) ms, converged $((t4 - t2)) ms after the first; $r2 SA requests (floor: 16; $(awk -v r=$r2 -v w=$WRITES 'BEGIN { printf "%.2f", r / w }') per write)"
echo 0 >$SIM/del_device

# An SA that fails every request (status 0x000c) for ERROR_SECS (600, ten
# minutes, by default: MLX_EXT_BENCH_ERROR_SECS): the requests the port
# sends, with 5 VFs whose base GUIDs it asks for at the start. The port's
# SA backoff (1, 2, 4, ... 60 s) bounds them; the target is 20 at most.
ERROR_SECS=${MLX_EXT_BENCH_ERROR_SECS:-600}
echo "1 cx3 1 5" >$SIM/new_device || exit 1
SA=/sys/kernel/debug/mlx_ext_sim/mlxsim1/sa1
echo "status 12" >$SA || exit 1
# The first request may have gone out before the SA was set to fail: the
# count starts from an admin write, which sends at once.
T=$IB/mlxsim1/iov/ports/1
r0=$(requests)
printf '%x\n' 0x777 >$T/admin_guids/9 || exit 1
sleep "$ERROR_SECS"
r3=$(($(requests) - r0))
echo "SA failing every request for $ERROR_SECS s: $r3 SA requests (target: at most 20 in 600 s)"
echo 1 >$SIM/del_device
