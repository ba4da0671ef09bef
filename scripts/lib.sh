# SPDX-License-Identifier: GPL-2.0
# Common settings of the mlx_ext scripts. Sourced, not run.

set -euo pipefail

MLX_EXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where the kernel build is cached: outside the repository, shared by clones.
MLX_EXT_CACHE=${MLX_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlx_ext}
# Per-clone build products (initramfs, console logs).
MLX_EXT_BUILD=${MLX_EXT_BUILD:-$MLX_EXT_ROOT/build}

# The kernel's Rust must be built by Debian's rustc, which ships rust-src;
# the rustup toolchain first on PATH has none.
KRUSTC=${KRUSTC:-/usr/bin/rustc}
KCLIPPY=${KCLIPPY:-/usr/bin/clippy-driver}
KRUSTFMT=${KRUSTFMT:-/usr/bin/rustfmt}
# bindgen: the pinned bindgen-cli that setup.sh installs with cargo (Debian's
# bindgen is too old), unless KBINDGEN names another.
if [ -n "${KBINDGEN:-}" ]; then MLX_EXT_KBINDGEN_SET=1; else KBINDGEN=$HOME/.cargo/bin/bindgen; fi
# The 7.x kernel source: Debian's linux-source-7.N from trixie-backports,
# named here and nowhere else. scripts/kernel-source.sh fetches it and keeps
# the .deb in the cache, so this pin outlives its removal from the archive
# on a machine that fetched it once; where it is gone and not cached, the
# newest linux-source-7.* is taken instead, and `make check` says "kernel
# moved" (../shared/KERNELS.md 3: backports keeps only a few versions).
# MLX_EXT_KERNEL7_PACKAGE and MLX_EXT_KERNEL7_VERSION try another.
KERNEL7_PACKAGE=${MLX_EXT_KERNEL7_PACKAGE:-linux-source-7.3}
KERNEL7_VERSION=${MLX_EXT_KERNEL7_VERSION:-7.3.4-1~bpo13+1}
KERNEL7_SUITE=trixie-backports
# 6.12: Debian's linux-source-6.12, installed by setup.sh.
KERNEL612_TAR=/usr/src/linux-source-6.12.tar.xz
# bindgen for 7.x needs libclang >= 17.0.1 (7.3 scripts/min-tool-version.sh,
# rust_is_available.sh): bookworm's default clang 14 makes CONFIG_RUST drop
# silently, so 7.x is built with clang 22 (the LLVM of rustc-web 1.96) and
# bindgen is pointed at its libclang. 6.12's bindgen keeps bookworm's
# default libclang, 14. Both are named for the harness's kernel and module
# builds (kmake_vars): left to itself, bindgen (clang-sys) loads the newest
# libclang installed.
KERNEL7_LLVM=-22
KERNEL7_LIBCLANG=/usr/lib/llvm-22/lib
KERNEL612_LIBCLANG=/usr/lib/llvm-14/lib

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'mlx_ext: error: %s\n' "$*" >&2; exit 1; }

# Which of the cached kernels a script builds or uses (Documentation/
# building.rst, "The kernels"): debug, the test kernel the behaviour and
# install tests run on (7.x, clang 22, KASAN, lockdep, kmemleak, fault
# injection, and a distribution's module options); production, 6.12
# configured and built as distributions ship it (GCC, module signing; the
# 6.12 module build of make check, make check-6.12); or bench, the debug
# kernel without its debug options (kernel/bench.config), which `make
# bench-vm` and `make bench-guid` build when asked: KASAN and lockdep would
# be what they measure.
MLX_EXT_KERNEL=${MLX_EXT_KERNEL:-debug}
case "$MLX_EXT_KERNEL" in
debug | production | bench) ;;
*) die "MLX_EXT_KERNEL=$MLX_EXT_KERNEL: it is debug, production or bench" ;;
esac

# What of the kernel build-kernel.sh builds: image, a bootable kernel and
# its modules, or tree, what an out-of-tree module build needs.
MLX_EXT_KERNEL_BUILD=${MLX_EXT_KERNEL_BUILD:-image}
case "$MLX_EXT_KERNEL_BUILD" in
image | tree) ;;
*) die "MLX_EXT_KERNEL_BUILD=$MLX_EXT_KERNEL_BUILD: it is image or tree" ;;
esac

# The kernel series of the flavour: debug is 7.x, production 6.12.
kernel_series() {
	if [ "$MLX_EXT_KERNEL" = production ]; then echo 6.12; else echo 7; fi
}

# The directory of the libclang the flavour's bindgen loads.
kernel_libclang() {
	if [ "$MLX_EXT_KERNEL" = production ]; then echo "$KERNEL612_LIBCLANG"; else echo "$KERNEL7_LIBCLANG"; fi
}

# The make variables every kernel or module build needs: the debug kernel
# is built with clang 22 and lld, the production one with GCC and
# binutils. LIBCLANG_PATH, a command-line variable, reaches bindgen through
# make's environment.
kmake_vars() {
	[ "$MLX_EXT_KERNEL" = production ] || echo "LLVM=$KERNEL7_LLVM"
	printf '%s\n' "LIBCLANG_PATH=$(kernel_libclang)" "RUSTC=$KRUSTC" "BINDGEN=$KBINDGEN" \
		"CLIPPY_DRIVER=$KCLIPPY" "RUSTFMT=$KRUSTFMT"
}

# The libclang bindgen loads at run time, as the kernel's
# scripts/rust_is_available.sh finds it: by asking it to compile a pragma.
bindgen_libclang() {
	local h
	h=$(mktemp --suffix=.h)
	echo '#pragma message("clang version " __clang_version__)' >"$h"
	LIBCLANG_PATH=$(kernel_libclang) "$KBINDGEN" "$h" 2>&1 |
		grep -m1 -oE 'clang version [0-9.]+' || echo missing
	rm -f "$h"
}

# kernel_source: "PACKAGE VERSION FILE" of the flavour's kernel source,
# FILE being a .deb (7.x, scripts/kernel-source.sh) or a tarball (6.12).
# Resolved once per process tree (MLX_EXT_KSOURCE_<flavour>).
kernel_source() {
	local var=MLX_EXT_KSOURCE_$MLX_EXT_KERNEL
	if [ -z "${!var:-}" ]; then
		if [ "$(kernel_series)" = 6.12 ]; then
			printf -v "$var" '%s' "linux-source-6.12 $(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || echo missing) $KERNEL612_TAR"
		else
			local out
			out=$("$MLX_EXT_ROOT/scripts/kernel-source.sh") && [ -n "$out" ] ||
				die "no 7.x kernel source (scripts/kernel-source.sh)"
			printf -v "$var" '%s' "$out"
		fi
		export "${var?}"
	fi
	echo "${!var}"
}

# The inputs of the kernel build, one per line; their hash is the cache key.
# The build script and the functions here that decide how it builds are
# hashed themselves, so that any change to them rebuilds.
kernel_inputs() {
	echo "build-kernel.sh $(sha256sum <"$MLX_EXT_ROOT/scripts/build-kernel.sh" | cut -c1-16)"
	echo "recipe $(declare -f kmake_vars kernel_libclang kernel_series kernel_source kernel_inputs kernel_fragments bindgen_libclang ksrc | sha256sum | cut -c1-16)"
	echo "make variables: $(kmake_vars | tr '\n' ' ')"
	local src
	src=$(kernel_source)
	echo "source ${src% *}"
	echo "rustc $("$KRUSTC" --version 2>/dev/null || echo missing)"
	echo "bindgen $("$KBINDGEN" --version 2>/dev/null || echo missing)"
	echo "bindgen's libclang: $(bindgen_libclang)"
	echo "kernel: $MLX_EXT_KERNEL"
	echo "build: $MLX_EXT_KERNEL_BUILD"
	if [ "$MLX_EXT_KERNEL" = production ]; then
		echo "gcc $(gcc --version 2>/dev/null | head -n1 || echo missing)"
		echo "ld $(ld --version 2>/dev/null | head -n1 || echo missing)"
		echo "openssl $(openssl version 2>/dev/null || echo missing)"
	else
		echo "clang $(clang$KERNEL7_LLVM --version 2>/dev/null | head -n1 || echo missing)"
		echo "lld $(ld.lld$KERNEL7_LLVM --version 2>/dev/null | head -n1 || echo missing)"
	fi
	local f
	while IFS= read -r f; do
		echo "fragment: ${f#"$MLX_EXT_ROOT"/}"
		cat "$f"
	done < <(kernel_fragments)
}
# The Kconfig fragments merged over tinyconfig, in order, one per line:
# the 7.x kernel carries the distribution's module options
# (kernel/distro.config) under its debug options.
kernel_fragments() {
	printf '%s\n' "$MLX_EXT_ROOT/kernel/common.config"
	[ "$MLX_EXT_KERNEL" = production ] || echo "$MLX_EXT_ROOT/kernel/distro.config"
	echo "$MLX_EXT_ROOT/kernel/$MLX_EXT_KERNEL.config"
}
# cached_build DIR WHAT BUILD_FN: makes DIR with `BUILD_FN DIR` unless a
# finished build is there, and prints DIR. Clones, CI and developers share
# the cache: a build holds an exclusive flock on DIR.lock from start to end,
# so a second build of the same DIR waits for the first and reuses its work
# instead of deleting it. DIR/.complete, written last, marks a finished
# build; an unfinished DIR is from an interrupted build and is started over,
# by the lock holder only. BUILD_FN prints progress on stderr only.
cached_build() {
	local dir=$1 what=$2 fn=$3 lockfd wait=${MLX_EXT_LOCK_TIMEOUT:-3600}
	if [ -f "$dir/.complete" ]; then
		say "$what: reusing cached build $dir"
		echo "$dir"
		return 0
	fi
	mkdir -p "$(dirname "$dir")"
	exec {lockfd}>"$dir.lock"
	if ! flock -n "$lockfd"; then
		say "$what: another build holds $dir.lock; waiting for it (at most ${wait}s)"
		flock -w "$wait" "$lockfd" || die "$what: $dir.lock still held after ${wait}s (a build hung?)"
	fi
	if [ -f "$dir/.complete" ]; then
		say "$what: reusing the build that just finished in $dir"
	else
		rm -rf "$dir"
		mkdir -p "$dir"
		"$fn" "$dir"
		touch "$dir/.complete"
	fi
	exec {lockfd}>&-
	echo "$dir"
}

# What in a guest's console is a kernel splat: the guest's own report of
# its kernel log (scripts/guest/init), or a BUG or Oops on the console
# (scripts/vm-run.sh, scripts/boot-loop.sh).
CONSOLE_SPLAT_RE='^mlx_ext-vm: splat: |(^|\] )(BUG:|Oops|kernel BUG)'

# ktap_counts LOG: prints "PASSED FAILED SKIPPED" for the KTAP results in
# LOG (an "ok ... # SKIP" is skipped, not passed).
ktap_counts() {
	local ok skip notok
	ok=$(grep -cE '^ok [0-9]+ ' "$1" || true)
	skip=$(grep -cE '^ok [0-9]+ .* # SKIP' "$1" || true)
	notok=$(grep -cE '^not ok [0-9]+ ' "$1" || true)
	echo "$((ok - skip)) $notok $skip"
}

# kconfig CONFIG NAME: the value of CONFIG_NAME in the .config file CONFIG,
# quotes taken off, or nothing (as scripts/kernel-checks.sh's config, which
# stands alone for users' trees).
kconfig() {
	sed -n "s/^CONFIG_$2=//p" "$1" | tail -n1 | sed 's/^"\(.*\)"$/\1/'
}

# signer_id CERT: how modinfo names the key of a module signed with the DER
# certificate CERT (its sig_key): sign-file writes PKCS#7, which names the
# signer by issuer and serial number, and kmod prints the serial.
signer_id() {
	openssl x509 -inform DER -in "$1" -noout -serial | sed 's/^serial=//; s/../&:/g; s/:$//'
}

# debian_config_deb PACKAGE VERSION: where scripts/kernel-source.sh keeps
# Debian's linux-config-7.N package of linux-source-7.N VERSION.
debian_config_deb() {
	echo "$MLX_EXT_CACHE/sources/linux-config-${1#linux-source-}_${2}_amd64.deb"
}
# debian_config PACKAGE VERSION: Debian's amd64 configuration of that
# kernel (config.amd64_none_amd64 in linux-config-7.N), on stdout, fetched
# into the cache first where it is not there.
debian_config() {
	local deb
	deb=$("$MLX_EXT_ROOT/scripts/kernel-source.sh" config "$1" "$2") && [ -f "$deb" ] ||
		die "no Debian configuration of $1 $2 (scripts/kernel-source.sh config)"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/linux-config-${1#linux-source-}/config.amd64_none_amd64.xz" |
		xz -dc
}

# sign_module KSRC KO...: signs each KO with the key kernel tree KSRC signs
# its own modules with, as Kbuild's modules_install does (scripts/
# Makefile.modinst: sign-file with CONFIG_MODULE_SIG_HASH and
# CONFIG_MODULE_SIG_KEY, a PKCS#11 URI or an absolute path as it is, else
# relative to the tree).
sign_module() {
	local ksrc=$1 hash key ko
	shift
	hash=$(kconfig "$ksrc/.config" MODULE_SIG_HASH)
	key=$(kconfig "$ksrc/.config" MODULE_SIG_KEY)
	case "$key" in pkcs11:* | /*) ;; *) key=$ksrc/$key ;; esac
	for ko in "$@"; do
		"$ksrc/scripts/sign-file" "$hash" "$key" "$ksrc/certs/signing_key.x509" "$ko" ||
			{ echo "mlx_ext: cannot sign $ko with $key" >&2; return 1; }
	done
}

kernel_key() { kernel_inputs | sha256sum | cut -c1-16; }
kernel_dir() {
	local part=
	[ "$MLX_EXT_KERNEL_BUILD" = image ] || part=-$MLX_EXT_KERNEL_BUILD
	echo "$MLX_EXT_CACHE/kernel-$MLX_EXT_KERNEL$part-$(kernel_key)"
}
# The kernel tree inside a cached kernel directory, whatever its series.
ksrc() { echo "$1/linux"; }
