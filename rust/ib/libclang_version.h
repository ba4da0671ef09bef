/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run through bindgen, prints the version of the libclang it loads, as the
 * kernel's scripts/rust_is_available_bindgen_libclang.h does (carried here:
 * a headers package need not have the kernel's copy). Kbuild and
 * scripts/kernel-checks.sh read it.
 */
#pragma message("clang version " __clang_version__)
