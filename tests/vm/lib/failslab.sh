# SPDX-License-Identifier: GPL-2.0
# Fault injection with failslab on the allocations made with mlx_ext's code
# on the stack (Documentation/fault-injection/fault-injection.rst).

FAILSLAB=/sys/kernel/debug/failslab

# Prints "START END" of the kernel function NAME, END being the address of
# the next symbol; nothing if there is no such function.
kernel_function_range() {
	sort /proc/kallsyms | grep -A1 " [tT] $1\$" | head -n 2 | awk '{ printf "0x%s ", $1 }'
}

# Prints "START END" of mlx_ext's .text: from its address to the next
# section's (the stack-trace filter of fault injection wants a range).
module_text_range() {
	start=$(cat /sys/module/mlx_ext/sections/.text)
	# Addresses are 0x and 16 hex digits: sorted as text, they sort as numbers.
	end=$(cat /sys/module/mlx_ext/sections/.[!.]* | sort -u | grep -x -A1 "$start" | tail -n +2)
	echo "$start ${end:-0xffffffffffffffff}"
}

# Sets failslab up to fail, when asked with fail-nth, only allocations made
# with mlx_ext's code on the stack.
failslab_on_mlx_ext() {
	read -r start end <<EOF_RANGE
$(module_text_range)
EOF_RANGE
	echo "mlx_ext .text: $start..$end"
	echo N >$FAILSLAB/ignore-gfp-wait
	echo 0 >$FAILSLAB/verbose
	echo 32 >$FAILSLAB/stacktrace-depth
	echo "$start" >$FAILSLAB/require-start
	echo "$end" >$FAILSLAB/require-end
	# kmemleak's allocation of its own record of each object (in
	# __alloc_object) falls back to a pool when it fails: leave it out, so
	# that only mlx_ext's allocations count.
	read -r rstart rend <<EOF_RANGE
$(kernel_function_range __alloc_object)
EOF_RANGE
	if [ -n "$rend" ]; then
		echo "$rstart" >$FAILSLAB/reject-start
		echo "$rend" >$FAILSLAB/reject-end
	fi
	echo 0 >$FAILSLAB/probability
}

# Runs the shell command CMD in a task whose Nth allocation made with
# mlx_ext's code on the stack fails (failslab_on_mlx_ext's filter, and
# /proc/self/fail-nth, which counts the allocations of this one task; exec
# keeps the task). Returns CMD's status, and sets INJECTED to 1 when the
# failure was injected, 0 when CMD made fewer than N such allocations
# (failslab's `times`, set to 1 here, drops to 0 when it fails one).
fail_nth() {
	echo 1 >$FAILSLAB/times
	sh -c "echo $1 >/proc/self/fail-nth && exec $2"
	fail_nth_rc=$?
	INJECTED=$(( $(cat $FAILSLAB/times) == 0 ))
	return $fail_nth_rc
}

failslab_off() {
	echo 0 >$FAILSLAB/times
	echo 0 >$FAILSLAB/require-start
	echo 0xffffffffffffffff >$FAILSLAB/require-end
	echo 0 >$FAILSLAB/reject-start
	echo 0 >$FAILSLAB/reject-end
}
