# SPDX-License-Identifier: GPL-2.0
# The runner of scripts/check.sh's table of steps. Sourced after lib.sh
# (ktap_counts, say), by check.sh and by its host test
# (tests/harness/check_steps.sh). Each step is a shell function that
# prints KTAP; MLX_EXT_BUILD holds its log.

# ktap_cmd NAME CMD...: a KTAP document of one test, CMD, whose output
# becomes diagnostic lines.
ktap_cmd() {
	echo "TAP version 13"
	echo "1..1"
	ktap_cmd_result 1 "$@"
}

# ktap_cmd_result N NAME CMD...: result N of a document, CMD, whose output
# becomes diagnostic lines before it.
ktap_cmd_result() {
	local n=$1 name=$2 rc
	shift 2
	"$@" >"$MLX_EXT_BUILD/step-cmd.log" 2>&1
	rc=$?
	sed 's/^/# /' "$MLX_EXT_BUILD/step-cmd.log"
	if [ $rc = 0 ]; then echo "ok $n $name"; else echo "not ok $n $name"; fi
	return $rc
}

# cargo's libtest lines ("test NAME ... ok|FAILED|ignored") as KTAP, and a
# failure if they do not add up to its "test result:" lines (one per test
# binary), which would mean this parser missed some.
cargo_ktap() {
	awk '
	/^test .* \.\.\. (ok|FAILED|ignored)/ {
		name = $0; sub(/^test /, "", name)
		st = name; sub(/.* \.\.\. /, "", st)
		sub(/ \.\.\. [^.]*$/, "", name)
		n++
		if (st == "ok") print "ok " n " " name
		else if (st ~ /^ignored/) print "ok " n " " name " # SKIP ignored"
		else print "not ok " n " " name
	}
	/^test result:/ {
		for (k = 1; k <= NF; k++) {
			if ($(k + 1) ~ /^passed/) p += $k
			if ($(k + 1) ~ /^failed/) f += $k
			if ($(k + 1) ~ /^ignored/) i += $k
		}
	}
	END {
		if (n != p + f + i) {
			n++
			print "not ok " n " cargo test: " n - 1 " results read, " p + f + i " reported"
		}
		print "1.." n
	}' "$1"
}

# The tally: every step's results, read by one parser.
passed=0 failed=0 skipped=0
summary() { echo "$passed passed, $failed failed, $skipped skipped"; }
trap summary EXIT

# run_step NAME FN: runs FN with its output shown and kept, and adds its
# KTAP results to the tally. A step whose tests are files of KTAP of their
# own (the harness's) shows each indented under one line of its own: then
# the files' results are counted, not those lines.
run_step() {
	local name=$1 fn=$2 log rc p f s fd tee_pid planned missing t0=$SECONDS
	log=$MLX_EXT_BUILD/step-$fn.log
	say "$name"
	# tee through a descriptor of its own, waited for by its pid: $! after
	# the step would be that of the step's last process substitution.
	exec {fd}> >(tee "$log")
	tee_pid=$!
	"$fn" >&"$fd" 2>&1
	rc=$?
	exec {fd}>&-
	wait "$tee_pid" 2>/dev/null
	# Results at the start of a line; a harness file's own results are
	# indented under it, and counted in place of its one line.
	if grep -q '^    \(not \)\?ok ' "$log"; then
		sed -n 's/^    //p' "$log" >"$log.leaves"
	else
		cp "$log" "$log.leaves"
	fi
	read -r p f s < <(ktap_counts "$log.leaves")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	awk -v name="$name" '/^ *not ok / { print "FAILED: " name ": " $0 }' "$log"
	# What the documents planned and did not print (a test that never ran:
	# a guest that died, a loop cut short) fails, each one; so does a
	# result beyond the plans, once.
	planned=$(awk '/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); n += $0 + 0; any = 1 }
		END { print any ? n : -1 }' "$log.leaves")
	missing=0
	if [ "$planned" -gt $((p + f + s)) ]; then
		missing=$((planned - p - f - s))
		echo "FAILED: $name: $missing of its $planned planned results missing"
	elif [ "$planned" -ge 0 ] && [ "$planned" -lt $((p + f + s)) ]; then
		missing=1
		echo "FAILED: $name: $((p + f + s)) results for $planned planned"
	fi
	failed=$((failed + missing)) f=$((f + missing))
	# Each step's time, for the budget (Documentation/measurements.rst).
	say "step took $((SECONDS - t0)) s: $name"
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		failed=$((failed + 1)); echo "FAILED: $name (exit $rc, no failed result to say why: see above)"
	elif [ $((p + f + s)) = 0 ]; then
		failed=$((failed + 1)); echo "FAILED: $name printed no result"
	fi
	return $rc
}

# run_steps: every step of STEPS ("NAME | FUNCTION") in turn; the last
# line is the tally. Fails if any result failed.
run_steps() {
	local step
	for step in "${STEPS[@]}"; do
		run_step "${step% | *}" "${step##* | }"
	done
	[ "$failed" = 0 ]
}
