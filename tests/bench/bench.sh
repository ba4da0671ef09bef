#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make bench` (its VM half): the atomic API's costs on the bench kernel
# (7.x without the debug options), in one run, with the ratios of issue 11's and 22's targets: the
# sequential and 4-way figures (each kind in turn, in alternating order,
# over rounds: mean, lowest and highest round), asynchronous throughput with
# 1, 16 and 64 operations in flight (the same, over 3 rounds), and beside
# them perftest's ib_atomic_lat and ib_atomic_bw on the same rxe0 in the
# same boot, the anchor. A benchmark, not a test: it prints figures; it
# fails only if something could not run.

. /tests/lib/common.sh

ULPCTL=/sys/kernel/debug/mlx_ext_test_ulp/ctl
OPS=${MLX_EXT_BENCH_OPS:-4000}

add_rxe0 || { echo "could not add rxe0"; exit 1; }
ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
modprobe mlx_ext_sim || exit 1
echo "0 cx3" >/sys/bus/mlx_ext_sim/new_device || exit 1
echo "2 cx4" >/sys/bus/mlx_ext_sim/new_device || exit 1
modprobe mlx_ext_test_ulp || exit 1

# bench DEV ARGS: the ULP's bench lines, "DEV NAME VALUE UNIT (...)".
bench() {
	dev=$1
	shift
	echo "bench $dev $*" >$ULPCTL || return 1
	sed "s/^/$dev /" $ULPCTL
}

# value DEV NAME: the figure of one line of $out.
value() {
	echo "$out" | awk -v d="$1" -v n="$2" '$1 == d && $2 == n { print $3 }'
}

# ratio A B: A / B with two decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'
}

echo "# mlx_ext atomics benchmark: $OPS operations per figure, kernel $(uname -r), $(nproc) CPUs (QEMU)"
out=$( (bench rxe0 softirq "$OPS"; bench mlxsim0 softirq "$OPS" short;
	bench mlxsim2 softirq "$OPS" short) 2>&1) || { echo "$out"; exit 1; }
echo "$out"
if echo "$out" | grep -q error; then
	echo "# some figures could not be taken"
	exit 1
fi
cas=$(value rxe0 cas)
# pratio NAME/BASE: the ratio paired by round, "MEDIANx (rounds MIN..MAX)".
pratio() {
	echo "$out" | awk -v n="$1" '$1 == "rxe0" && $2 == "ratio" && $3 == n {
		printf "%.2fx (rounds %.2f..%.2f)", $4, $6, $8 }'
}
echo
echo "# ratios, each the median of the rounds' own (targets from issues 11 and 22)"
echo "rxe0 emulated masked CAS warm / native CAS: $(pratio masked_cas_warm/cas) (target <= 1.1x)"
echo "rxe0 emulated masked FA warm / native CAS:  $(pratio masked_fa_warm/cas) (target <= 1.1x)"
echo "rxe0 emulated masked CAS cold / native CAS: $(pratio masked_cas_cold/cas) (target <= 2.1x)"
echo "rxe0 emulated masked FA cold / native CAS:  $(pratio masked_fa_cold/cas) (target <= 2.1x)"
echo "rxe0 4-way emulated masked FA / native FA throughput, a QP per thread: $(pratio masked_fa_4way/fa_4way) (target >= 0.5x)"
echo "rxe0 4-way emulated masked FA / native FA throughput, one QP (combining): $(pratio masked_fa_4way_1qp/fa_4way_1qp) (target >= 0.5x)"
echo "rxe0 4-way emulated masked FA / native FA throughput, a QP per thread in one group (combining): $(pratio masked_fa_4way_group/fa_4way) (target >= 0.5x)"
echo "plain verbs CAS (no mlx_ext) / CAS through mlx_ext on rxe0: $(pratio verbs_cas/cas)"
echo "sim masked FA: emulated cx4 / native cx3: $(ratio "$(value mlxsim2 masked_fa_warm)" "$(value mlxsim0 masked_fa_warm)")x"
echo "sim masked CAS: emulated cx4 / native cx3: $(ratio "$(value mlxsim2 masked_cas_warm)" "$(value mlxsim0 masked_cas_warm)")x"

# Asynchronous throughput on rxe0: DEPTH operations kept in flight on one
# QP (the test ULP's "flight": each reposted from its done), fetch-and-add
# (native) and masked fetch-and-add (emulated, combining), in 3 rounds of
# the six in alternating order. "KIND DEPTH NS_PER_OP WRS" per run, WRS
# the work requests the driver took (debugfs mlx_ext/request_pool): fewer
# than the operations where emulated ones combine.
FLIGHT_OPS=${MLX_EXT_BENCH_FLIGHT_OPS:-2000}
posted() {
	awk '{ print $8 }' /sys/kernel/debug/mlx_ext/request_pool
}
configs="std:1 masked:1 std:16 masked:16 std:64 masked:64"
runs=""
for round in 1 2 3; do
	order=$configs
	[ $((round % 2)) = 0 ] && order=$(echo "$configs" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	for c in $order; do
		kind=${c%%:*} depth=${c##*:}
		before=$(posted)
		echo "flight rxe0 softirq $depth $FLIGHT_OPS $kind" >$ULPCTL || { echo "flight $c: refused"; exit 1; }
		got=$(cat $ULPCTL)
		wrs=$(($(posted) - before))
		case "$got" in
		"ok ops $FLIGHT_OPS "*) set -- $got; runs="$runs$kind $depth $5 $wrs
" ;;
		*) echo "flight $c: $got"; exit 1 ;;
		esac
	done
done
echo
echo "# asynchronous throughput on rxe0, $FLIGHT_OPS operations per run, 3 runs each"
flights=$(printf '%s' "$runs" | awk -v ops="$FLIGHT_OPS" '
	{ k = $1 " " $2; v = 1e9 / $3; n[k]++; s[k] += v; w[k] += $4
	  if (!(k in lo) || v < lo[k]) lo[k] = v; if (v > hi[k]) hi[k] = v }
	END { for (k in n) printf "%s %d %.2f %d %d\n", k, s[k] / n[k], w[k] / (n[k] * ops), lo[k], hi[k] }' | sort -k2,2n -k1,1r)
echo "$flights" | awk '{ printf "rxe0 flight_%s_%s %d ops/s (%.2f WR/op) min %d max %d\n", $1, $2, $3, $4, $5, $6 }'
for depth in 1 16 64; do
	std=$(echo "$flights" | awk -v d=$depth '$1 == "std" && $2 == d { print $3 }')
	masked=$(echo "$flights" | awk -v d=$depth '$1 == "masked" && $2 == d { print $3 }')
	echo "rxe0 emulated masked FA / native FA throughput, $depth in flight: $(ratio "$masked" "$std")x"
done

# The anchor: perftest on the same rxe0 (user-space verbs through ib_uverbs,
# RC loopback over the guest's own address): ib_atomic_lat with
# compare-and-swap, ib_atomic_bw with fetch-and-add.
echo
echo "# anchor: perftest on rxe0 in this boot"
if ! command -v ib_atomic_lat >/dev/null; then
	echo "perftest is not in the image (Debian package perftest on the host): no anchor"
	exit 0
fi
modprobe ib_uverbs || { echo "no ib_uverbs"; exit 1; }
# A RoCE v2 GID of the guest's IPv4 address (::ffff:10.0.2.15).
gid=
for f in /sys/class/infiniband/rxe0/ports/1/gids/*; do
	n=${f##*/}
	case "$(cat "$f")" in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
	[ "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$n 2>/dev/null)" = "RoCE v2" ] || continue
	gid=$n
	break
done
[ -n "$gid" ] || { echo "no RoCE v2 IPv4 GID on rxe0"; exit 1; }
PERF_ITERS=${MLX_EXT_BENCH_PERF_ITERS:-2000}
# perftest TOOL ARGS: server in the background, client against it; the
# client's output.
perftest() {
	tool=$1
	shift
	$tool -d rxe0 -x "$gid" -F "$@" >/tmp/perf-server.log 2>&1 &
	server=$!
	sleep 2
	out=$($tool -d rxe0 -x "$gid" -F "$@" 10.0.2.15 2>&1)
	rc=$?
	wait $server
	[ $rc = 0 ] || { echo "$tool $*: failed ($rc)"; echo "$out" | tail -5; cat /tmp/perf-server.log | tail -5; return 1; }
	echo "$out"
}
lat=$(perftest ib_atomic_lat -A CMP_AND_SWAP -n "$PERF_ITERS") || exit 1
# The result row: "#bytes #iterations t_min t_max t_typical t_avg ...".
echo "$lat" | awk '$1 == 8 && NF >= 6 { printf "perftest ib_atomic_lat CMP_AND_SWAP: typical %s us, avg %s us, min %s us, max %s us\n", $5, $6, $3, $4 }'
bw=$(perftest ib_atomic_bw -A FETCH_AND_ADD -n "$PERF_ITERS") || exit 1
# "#bytes #iterations BW_peak BW_average MsgRate[Mpps]".
echo "$bw" | awk '$1 == 8 && NF >= 5 { printf "perftest ib_atomic_bw FETCH_AND_ADD: %d ops/s (BW average %s MB/s)\n", $5 * 1e6, $4 }'
echo "mlx_ext native CAS on rxe0 (sequential, above): $(awk -v ns="$cas" 'BEGIN { printf "%.1f", ns / 1000 }') us/op"
