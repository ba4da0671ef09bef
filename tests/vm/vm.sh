#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# VM tests of the test VM itself: what the other areas take for granted of
# the machine and the debug kernel.

. /tests/lib/area.sh

ALL_TESTS="test_vm_smp test_kasan_active"

setup() {
	true
}

cleanup() {
	true
}

# The VM runs the tests on both of its CPUs (-smp 2), so that a race
# between a work item and the thread that queued it can happen. Without
# ACPI the kernel found one CPU in QEMU's MP table, and every test ran on
# it: the simulator's SA then answered only once new_device had returned,
# which hid a lost GID-change event (rust/simulator/sa.rs, set_events).
test_vm_smp() {
	expect_eq "$(cat /sys/devices/system/cpu/online)" 0-1 "online CPUs"
}

# The behaviour tests rely on KASAN to see bad accesses.
test_kasan_active() {
	if kernel_lacks KASAN; then
		echo "the kernel has no KASAN (the production-config kernel)"
		return $KSFT_SKIP
	fi
	dmesg | grep -m1 "KernelAddressSanitizer initialized" || { echo "KASAN is not active"; return 1; }
}

ktap_main "$@"
