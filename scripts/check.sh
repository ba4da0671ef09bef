#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: every test of mlx_ext. Host: cargo test, the harness's own
# tests, rustfmt, clippy; kernel: module build without warnings (the
# kernel's CLIPPY=1), checkpatch --strict on the C files; VM: the KTAP
# tests in QEMU on the debug kernel. Then, on the production-config kernel:
# install: `make modules`, `make modules_install`, `make headers_install`
# into a staging root and the sample ULP against them, as a user with their
# own kernel runs them; dkms: Debian's dkms add/build/install (staged,
# signed), booted in the VM with signatures enforced. The last line sums up
# all of them. Every step that could hang has a time limit
# (MLX_EXT_*_TIMEOUT).
# The behaviour tests run on the debug kernel whatever the environment
# says; the install tests below ask for the production one themselves.
export MLX_EXT_KERNEL=debug
source "$(dirname "$0")/lib.sh"
cd "$MLX_EXT_ROOT"

passed=0 failed=0 skipped=0
result() { # NAME STATUS(0 pass, else fail)
	if [ "$2" = 0 ]; then
		passed=$((passed + 1)); echo "ok: $1"
	else
		failed=$((failed + 1)); echo "FAILED: $1"
	fi
}
summary() {
	local rc=$?
	# A step that stopped the script (set -e) is a failure the tally must show.
	if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
		failed=1; echo "FAILED: make check stopped early (exit $rc), see above"
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
}
trap 'summary' EXIT

"$MLX_EXT_ROOT/scripts/setup.sh"

# ktap_tally NAME LOG: adds the KTAP results in LOG to the tally.
ktap_tally() {
	local p f s
	read -r p f s < <(ktap_counts "$2")
	passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + f))
	# NAME may be a path (tests/harness/x.sh): not in a sed expression.
	awk -v name="$1" '/^not ok / { print "FAILED: " name ": " $0 }' "$2"
}

# ktap_step NAME RC LOG: shows LOG (a step's KTAP output), adds its results
# to the tally, and counts one failure if the step failed (RC) with no KTAP
# failure to say so.
ktap_step() {
	cat "$3"
	ktap_tally "$1" "$3"
	if [ "$2" != 0 ] && ! grep -q '^not ok' "$3"; then result "$1 (exit $2)" 1; fi
}

# vm_tally NAME RC OUT: adds the "vm: N passed, N failed, N skipped" line
# scripts/vm-run.sh printed in OUT to the tally, and counts one failure if
# the run failed (RC: a splat, a timeout) with no test failure to say so.
vm_tally() {
	local p f s
	read -r p f s < <(sed -nE 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' "$3" | tail -n1)
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
	if [ "$2" != 0 ] && [ "${f:-0}" = 0 ]; then result "$1 (see the reason above)" 1; fi
}

mkdir -p "$MLX_EXT_BUILD"
cargo_timeout=${MLX_EXT_CARGO_TIMEOUT:-1800}
say "host: cargo test (timeout ${cargo_timeout}s)"
set +e
timeout -k 10 "$cargo_timeout" cargo test --workspace --color never 2>&1 | tee "$MLX_EXT_BUILD/cargo-test.log"
cargo_rc=${PIPESTATUS[0]}
[ "$cargo_rc" != 124 ] || echo "mlx_ext: error: cargo test did not finish in ${cargo_timeout}s (MLX_EXT_CARGO_TIMEOUT)"
set -e
# One "test result:" line per test binary.
read -r p f i < <(awk '/^test result:/ { for (k = 1; k <= NF; k++) {
	if ($(k+1) ~ /^passed/) p += $k; if ($(k+1) ~ /^failed/) f += $k; if ($(k+1) ~ /^ignored/) i += $k } }
	END { print p + 0, f + 0, i + 0 }' "$MLX_EXT_BUILD/cargo-test.log")
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + i))
rm -f "$MLX_EXT_BUILD/cargo-test.log"
if [ "$cargo_rc" != 0 ] && [ "$f" = 0 ]; then result "cargo test (did not build or run)" 1; fi

say "host: the harness's own tests (tests/harness/)"
set +e
for t in tests/harness/*.sh; do
	timeout -k 5 300 "$t" >"$MLX_EXT_BUILD/harness.log" 2>&1
	ktap_step "$t" $? "$MLX_EXT_BUILD/harness.log"
done

say "host: rustfmt and clippy"
# Failures show the diff to apply (or run: cargo fmt --all).
cargo fmt --all --check 2>&1 | head -n 60; result "cargo fmt --check" "${PIPESTATUS[0]}"
# Module code is formatted like the kernel's (its .rustfmt.toml is the default).
"$KRUSTFMT" --edition 2021 --check rust/mlx_ext.rs rust/mlx_ext_sim.rs 2>&1 | head -n 60; result "rustfmt --check rust/" "${PIPESTATUS[0]}"
timeout -k 10 "$cargo_timeout" cargo clippy --workspace --all-targets --color never -- -D warnings 2>&1 | tail -n 20
result "cargo clippy -D warnings" "${PIPESTATUS[0]}"

say "kernel: build mlx_ext.ko (CLIPPY=1, no warnings allowed)"
kdir=$("$MLX_EXT_ROOT/scripts/build-module.sh" --no-warnings)
rc=$?
result "module build without warnings" $rc
set -e
[ $rc = 0 ] || exit 1

say "host: make rust-analyzer (rust-project.json) describes the module's crates"
set +e
"$MLX_EXT_ROOT/scripts/rust-analyzer.sh" >/dev/null && python3 - "$MLX_EXT_ROOT/rust-project.json" <<'PY'
import json, os, sys
crates = json.load(open(sys.argv[1]))["crates"]
names = [c["display_name"] for c in crates]
ok = True
for name, cfg in (("mlx_ext", None), ("mlx_ext_sim", "mlx_ext_provider")):
    if name not in names:
        print(f"rust-project.json: no crate {name}"); ok = False; continue
    c = crates[names.index(name)]
    deps = {d["name"]: names[d["crate"]] for d in c["deps"]}
    if not os.path.isfile(c["root_module"]):
        print(f"{name}: root {c['root_module']} missing"); ok = False
    if deps.get("kernel") != "kernel" or deps.get("core") != "core":
        print(f"{name}: deps {deps}"); ok = False
    if cfg and cfg not in c["cfg"]:
        print(f"{name}: no cfg {cfg}"); ok = False
    if not any(x.startswith("CONFIG_RUST") for x in c["cfg"]):
        print(f"{name}: not the kernel's cfgs"); ok = False
sys.exit(0 if ok else 1)
PY
result "make rust-analyzer" $?
set -e

# checkpatch ARGS...: the test kernel's checkpatch.pl --strict --terse on
# ARGS, printing its findings only (nothing for a clean file).
checkpatch() {
	perl "$kdir/linux-source-6.12/scripts/checkpatch.pl" --no-tree --strict --terse "$@" 2>&1 |
		grep -v '^total: 0 errors, 0 warnings, 0 checks'
}

say "host: checkpatch.pl --strict on the C files (the test kernel's)"
# EXPORT_SYMBOL is ignored: rust/helpers/export.c exports functions that
# are defined in Rust, as the kernel's own rust/exports.c does.
set +e
mapfile -t cfiles < <(git ls-files '*.c' '*.h')
cp_out=$(for f in "${cfiles[@]}"; do
	checkpatch --show-types --ignore EXPORT_SYMBOL -f "$f"
done)
set -e
[ -z "$cp_out" ] || echo "$cp_out"
result "checkpatch --strict (${#cfiles[@]} C files)" "$([ -z "$cp_out" ] && echo 0 || echo 1)"

say "host: the fixes for the kernel in patches/upstream/ apply to 6.12 and pass checkpatch"
# UNKNOWN_COMMIT_ID: the Fixes: tags name upstream commits, which the unpacked
# source (no git history) cannot look up.
set +e
for p in patches/upstream/*.patch; do
	out=$(patch -p1 --dry-run -s -d "$kdir/linux-source-6.12" <"$p" 2>&1 &&
		checkpatch --ignore UNKNOWN_COMMIT_ID "$p")
	[ -z "$out" ] || echo "$out"
	result "upstream patch $(basename "$p")" "$([ -z "$out" ] && echo 0 || echo 1)"
done
set -e

say "host: expected in-kernel self-test digests"
extra=$MLX_EXT_BUILD/vm-extra
mkdir -p "$extra"
timeout -k 10 "$cargo_timeout" cargo build -q --release -p mlx-ext-core \
	--example atomics_digest --example ulp_digest
for seed in 1 2 3; do
	echo "$seed 100000 $(target/release/examples/atomics_digest "$seed" 100000)"
done >"$extra/atomics_digests"
# What the test ULP's atomics must leave on every device (tests/vm/sim.sh).
# And through mlx_ext's ULP API: 10,000 per device class.
for kind in std masked narrow; do
	echo "11 2000 $kind $(target/release/examples/ulp_digest 11 2000 $kind)"
	echo "13 300 $kind $(target/release/examples/ulp_digest 13 300 $kind)"
	echo "12 10000 $kind $(target/release/examples/ulp_digest 12 10000 $kind)"
done >"$extra/ulp_digests"
# The header's API version, which modinfo mlx_ext must show (tests/vm/api.sh).
h=$MLX_EXT_ROOT/include/mlx_ext/mlx_ext.h
echo "$(sed -n 's/^#define MLX_EXT_API_VERSION_MAJOR //p' "$h").$(sed -n 's/^#define MLX_EXT_API_VERSION_MINOR //p' "$h")" \
	>"$extra/api_version"

say "vm: tests in QEMU"
set +e
# The suite takes 10 to 21 min on 2 idle cores, by the machine (TCG): its
# limit leaves room for a busy machine (a hang is still caught).
MLX_EXT_VM_TIMEOUT=${MLX_EXT_VM_TIMEOUT:-2700} \
	"$MLX_EXT_ROOT/scripts/vm-run.sh" tests/vm/check.sh "$kdir" "$extra" | tee "$MLX_EXT_BUILD/vm-check.out"
vm_tally "vm run" "${PIPESTATUS[0]}" "$MLX_EXT_BUILD/vm-check.out"
set -e

# After the VM tests: the rest rebuilds the modules in the tree as a user
# would, against the production-config kernel (built or reused here).
say "kernel: the production-config kernel (GCC, module signing; kernel/production.config)"
set +e
pkdir=$(MLX_EXT_KERNEL=production "$MLX_EXT_ROOT/scripts/build-kernel.sh")
rc=$?
result "production-config kernel build" $rc
set -e
[ $rc = 0 ] || exit 1

say "install: make modules, modules_install and headers_install KDIR=<production kernel> into a staging root"
set +e
timeout -k 10 "${MLX_EXT_MODULE_TIMEOUT:-900}" "$MLX_EXT_ROOT/scripts/install-check.sh" \
	"$pkdir/linux-source-6.12" "$MLX_EXT_BUILD/stage" >"$MLX_EXT_BUILD/install.log" 2>&1
ktap_step install-check $? "$MLX_EXT_BUILD/install.log"
set -e

say "dkms: add, build, install (Debian's dkms, staged, signed) on the production kernel, then modprobe in the VM"
set +e
timeout -k 10 "${MLX_EXT_MODULE_TIMEOUT:-900}" "$MLX_EXT_ROOT/scripts/dkms-check.sh" "$pkdir" \
	>"$MLX_EXT_BUILD/dkms.log" 2>&1
ktap_step dkms-check $? "$MLX_EXT_BUILD/dkms.log"
dkms_extra=$MLX_EXT_BUILD/dkms-extra
rm -rf "$dkms_extra"
mkdir -p "$dkms_extra/unsigned" && cp VERSION "$dkms_extra/"
# The sample as built, before modules_install signed its installed copy.
cp "$MLX_EXT_BUILD/stage/mlx_ext_caps/mlx_ext_caps.ko" "$dkms_extra/unsigned/" 2>/dev/null
if [ -d "$MLX_EXT_BUILD/dkms/lib/modules" ]; then
	# Signatures enforced, as lockdown enforces them under Secure Boot.
	MLX_EXT_GUEST_MODULES=$MLX_EXT_BUILD/dkms/lib/modules \
		MLX_EXT_VM_APPEND="module.sig_enforce=1${MLX_EXT_VM_APPEND:+ $MLX_EXT_VM_APPEND}" \
		"$MLX_EXT_ROOT/scripts/vm-run.sh" tests/install/dkms.sh "$pkdir" "$dkms_extra" | tee "$MLX_EXT_BUILD/vm-dkms.out"
	vm_tally "dkms vm run" "${PIPESTATUS[0]}" "$MLX_EXT_BUILD/vm-dkms.out"
fi
set -e
[ "$failed" = 0 ]
