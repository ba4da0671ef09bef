# SPDX-License-Identifier: GPL-2.0
# Helpers of the tests of the atomic API (api.sh, attach.sh): the test
# ULP's API commands checked against the host's reference and the
# request pools' counters.

# api_run DEV POLL SEED COUNT KIND FLAGS MIN MAX: runs the API's random
# operations, checks them against the host's reference and checks that
# they took between MIN and MAX work requests.
api_run() {
	want=$(host_digest "$3" "$4" "$5")
	[ -n "$want" ] || { echo "no host digest for $3 $4 $5 in /extra"; return 1; }
	got=$(ulp "api $1 $2 $3 $4 $5 $6")
	case "$got" in
	"ok $want attempts "*) ;;
	*) echo "$1 $5 $6: expected 'ok $want ...', got '$got'"; return 1 ;;
	esac
	n=${got##* }
	[ "$n" -ge "$7" ] && [ "$n" -le "$8" ] ||
		{ echo "$1 $5: $n work requests for $4 operations, expected $7..$8"; return 1; }
	echo "$1 $5 $4: host reference matched, $n work requests"
}

# apistats_check [cancelled|inflight]: the API operations "hold" posted
# since the last check each reported exactly once (a second report or none
# counts as "other"), none with an unexpected error; with "cancelled", some
# were still in flight when their QP was destroyed and ended flushed or
# stopped; with "inflight", some were pending when the destroy or detach
# began (and had ended when it returned: "other" counts those that had not).
apistats_check() {
	want=$1
	s=$(ulp apistats)
	set -- $s
	posted=$2 done=$4 canceled=$8 shutdown=${10} other=${12} atend=${14} notbegun=${20}
	[ "$posted" -gt 0 ] || { echo "nothing posted: $s"; return 1; }
	expect_eq "$done" "$posted" "operations finished ($s)" || return 1
	expect_eq "$other" 0 "unexpected outcomes ($s)" || return 1
	if [ "$want" = cancelled ]; then
		[ $((canceled + shutdown + notbegun)) -gt 0 ] ||
			{ echo "no operation was in flight at destroy: $s"; return 1; }
	fi
	# Operations that waited behind a flushed compare-and-swap, flushed by
	# the ULP's own drain: known not begun (-ECONNABORTED), not "unknown".
	if [ "$want" = notbegun ]; then
		[ "$canceled" -gt 0 ] && [ "$notbegun" -gt 0 ] ||
			{ echo "expected flushed and not-begun operations: $s"; return 1; }
	fi
	if [ "$want" = inflight ]; then
		[ "$atend" -gt 0 ] || { echo "nothing was pending at the end: $s"; return 1; }
	fi
	echo "$s"
}

# contend_runs "DEV POLL OPS"...: the ULP's run_contend for each, which
# must report its 4 x OPS operations done right.
contend_runs() {
	for run in "$@"; do
		set -- $run
		got=$(ulp "contend $run")
		echo "$1: $got"
		case "$got" in "ok ops $((4 * $3)) "*) ;; *) return 1 ;; esac
	done
}

POOL=/sys/kernel/debug/mlx_ext/request_pool

# pool_stats: "MADE LIVE TAKEN POSTED" of the request pools' counters.
pool_stats() {
	awk '{ print $2, $4, $6, $8 }' $POOL
}

# pool_ulp CMD: the ULP's answer to CMD in $got, with the request pools'
# counters before (made0 live0 taken0 posted0) and after (made live taken
# posted).
pool_ulp() {
	read -r made0 live0 taken0 posted0 <<EOF_STATS
$(pool_stats)
EOF_STATS
	got=$(ulp "$1")
	read -r made live taken posted <<EOF_STATS
$(pool_stats)
EOF_STATS
}
