#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# vm-extra.sh DIR: what the VM tests compare with, for /extra in the guest:
# the host's reference arithmetic's digests (core/examples/) and the
# header's API version. make check and make vm-run pass it to the guest.
source "$(dirname "$0")/lib.sh"
[ $# = 1 ] || die "usage: vm-extra.sh DIR"
extra=$1
cd "$MLX_EXT_ROOT"
mkdir -p "$extra"
timeout -k 10 "${MLX_EXT_CARGO_TIMEOUT:-1800}" cargo build -q --release -p mlx-ext-core \
	--example atomics_digest --example ulp_digest || exit 1
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
