#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# install-check.sh KDIR STAGE [SIGNING_TREE]: what a user with their own
# kernel does, run against the kernel tree KDIR (make check passes the 7.x
# kernel, whose module options are a distribution's, packaged as Arch's
# linux-headers: scripts/headers-layout.sh) with the toolchain found on
# PATH, as a user runs it, into the staging root STAGE: `make
# modules KDIR=...` then `make modules_install KDIR=...
# INSTALL_MOD_PATH=STAGE`; checks that mlx_ext and
# mlx_ext_sim (and not the test ULP) are in lib/modules/<release>/updates/,
# compressed as the kernel's own modules are, signed with the kernel's key
# when it signs its own (CONFIG_MODULE_SIG_ALL), indexed by depmod, with
# the tree's VERSION in modinfo (a headers package has no signing key: the
# modules are left unsigned, as a user's are until DKMS signs them); then
# `make headers_install DESTDIR=STAGE`
# and the sample ULPs (samples/), copied out of the tree, built against the
# installed files only and installed by Kbuild's modules_install into
# updates/sample (scripts/dkms-check.sh boots them). On a kernel with
# CONFIG_MODVERSIONS (the 7.x one: gendwarfksyms, as Ubuntu 26.04), every
# export has a CRC, computed from the header's prototypes, and the samples
# carry those CRCs; a sample built against a wrong CRC is kept, signed, in
# STAGE/badcrc for the guest to refuse (tests/install/dkms.sh). The samples
# are signed with SIGNING_TREE's key where KDIR has none, as a ULP's DKMS
# package signs them with a MOK: the guest enforces signatures. On a kernel
# with modules' BTF, mlx_ext built against a tree with vmlinux carries its
# BTF, and is kept, signed, in STAGE/btf for the guest. Prints KTAP.
source "$(dirname "$0")/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

[ $# = 2 ] || [ $# = 3 ] || { echo "usage: install-check.sh KDIR STAGE [SIGNING_TREE]" >&2; exit 2; }
# Absolute: Kbuild runs in KDIR, where a relative INSTALL_MOD_PATH would land.
kdir=$1 stage=$(realpath -m "$2") signer=${3:-$1}
release=$(cat "$kdir/include/config/kernel.release")
moddir=$stage/lib/modules/$release/updates
config=$kdir/.config
# The suffix Kbuild's modules_install gives modules (scripts/Makefile.modinst:
# suffix-$(CONFIG_MODULE_COMPRESS_XZ) := .xz, ...).
ko=.ko
if grep -q '^CONFIG_MODULE_COMPRESS_ALL=y' "$config"; then
	grep -q '^CONFIG_MODULE_COMPRESS_GZIP=y' "$config" && ko=.ko.gz
	grep -q '^CONFIG_MODULE_COMPRESS_XZ=y' "$config" && ko=.ko.xz
	grep -q '^CONFIG_MODULE_COMPRESS_ZSTD=y' "$config" && ko=.ko.zst
fi
# The toolchain is what scripts/kernel-checks.sh finds on PATH.
unset RUSTC BINDGEN

test_make_modules() {
	make -s -C "$MLX_EXT_ROOT" modules KDIR="$kdir" >"$stage.modules.log" 2>&1 ||
		{ tail -n 30 "$stage.modules.log"; return 1; }
	for m in mlx_ext mlx_ext_sim; do
		[ -f "$MLX_EXT_ROOT/$m.ko" ] || { echo "no $m.ko"; return 1; }
	done
}

test_modules_install_into_stage() {
	rm -rf "$stage"
	mkdir -p "$stage"
	make -s -C "$MLX_EXT_ROOT" modules_install KDIR="$kdir" INSTALL_MOD_PATH="$stage" \
		>"$stage.log" 2>&1 || { tail -n 30 "$stage.log"; return 1; }
	expect_eq "$(cd "$moddir" 2>/dev/null && ls)" "mlx_ext$ko
mlx_ext_sim$ko" "installed in updates/" || return 1
	grep -q "^updates/mlx_ext$ko:" "$stage/lib/modules/$release/modules.dep" ||
		{ echo "depmod did not index updates/mlx_ext$ko"; return 1; }
}

test_modinfo_version() {
	for m in mlx_ext mlx_ext_sim; do
		expect_eq "$(modinfo -F version "$moddir/$m$ko")" "$(cat "$MLX_EXT_ROOT/VERSION")" "$m version" ||
			return 1
	done
}

# A kernel that signs its modules (CONFIG_MODULE_SIG_ALL, as a self-built
# kernel and both of the harness's do) gets ours signed by the same key at
# modules_install: the signature names the kernel's certificate
# (certs/signing_key.x509, signer_id in lib.sh), and its hash is
# CONFIG_MODULE_SIG_HASH.
test_modules_signed_with_the_kernels_key() {
	if ! grep -q '^CONFIG_MODULE_SIG_ALL=y' "$config"; then
		echo "$kdir does not sign its modules (no CONFIG_MODULE_SIG_ALL)"
		return "$KSFT_SKIP"
	fi
	if [ ! -f "$kdir/certs/signing_key.x509" ]; then
		echo "$kdir has no signing key, as distributions' headers have none (DKMS signs: dkms-check.sh)"
		for m in mlx_ext mlx_ext_sim; do
			[ -z "$(modinfo -F sig_key "$moddir/$m$ko")" ] || { echo "$m signed"; return 1; }
		done
		return "$KSFT_SKIP"
	fi
	keyid=$(signer_id "$kdir/certs/signing_key.x509")
	hash=$(kconfig "$config" MODULE_SIG_HASH)
	[ -n "$keyid" ] && [ -n "$hash" ] || { echo "no key id ($keyid) or hash ($hash) in $kdir"; return 1; }
	for m in mlx_ext mlx_ext_sim; do
		expect_eq "$(modinfo -F sig_key "$moddir/$m$ko")" "$keyid" "$m's signing key" || return 1
		expect_eq "$(modinfo -F sig_hashalgo "$moddir/$m$ko")" "$hash" "$m's hash" || return 1
	done
}

# BTF (CONFIG_DEBUG_INFO_BTF_MODULES, as Debian and Arch have it): against
# a tree that has its vmlinux, as Arch's headers do, Kbuild gives each
# module a .BTF section made against vmlinux's with pahole and the tree's
# resolve_btfids (7.3 scripts/Makefile.modfinal:43-56); without one it
# says "Skipping BTF generation". The module with its BTF is kept, signed
# as a DKMS package signs it, in STAGE/btf for the guest to load
# (tests/install/dkms.sh).
test_module_btf() {
	rm -rf "$stage/btf"
	if [ "$(kconfig "$config" DEBUG_INFO_BTF_MODULES)" != y ]; then
		echo "$kdir has no CONFIG_DEBUG_INFO_BTF_MODULES"
		return "$KSFT_SKIP"
	fi
	[ -f "$kdir/vmlinux" ] || { echo "$kdir has no vmlinux: Kbuild makes no BTF"; return "$KSFT_SKIP"; }
	if grep 'Skipping BTF generation' "$stage.modules.log"; then return 1; fi
	for m in mlx_ext mlx_ext_sim; do
		readelf -S -W "$MLX_EXT_ROOT/$m.ko" | grep -q ' \.BTF ' || { echo "$m.ko has no .BTF section"; return 1; }
	done
	mkdir -p "$stage/btf" && cp "$MLX_EXT_ROOT/mlx_ext.ko" "$stage/btf/" || return 1
	if grep -q '^CONFIG_MODULE_SIG=y' "$config"; then
		sign_module "$signer" "$stage/btf/mlx_ext.ko" || return 1
	fi
}

test_headers_install() {
	dir=$(make -s -C "$MLX_EXT_ROOT" headers_install KDIR="$kdir" DESTDIR="$stage" 2>"$stage.log") ||
		{ cat "$stage.log"; return 1; }
	expect_eq "$dir" "$stage/usr/src/mlx_ext/$(uname -m)/$release" "where" || return 1
	expect_eq "$(cd "$dir" && find . -type f | sort | tr '\n' ' ')" \
		"./Module.symvers ./include/mlx_ext/mlx_ext.h ./include/mlx_ext/version.h " "files" || return 1
	grep -q "^#define MLX_EXT_RELEASE \"$(cat "$MLX_EXT_ROOT/VERSION")\"$" "$dir/include/mlx_ext/version.h" ||
		{ echo "version.h: $(cat "$dir/include/mlx_ext/version.h")"; return 1; }
	# Every export of mlx_ext.ko, nothing else.
	expect_eq "$(cut -f2 "$dir/Module.symvers" | sort | tr '\n' ' ')" \
		"$(grep -o 'EXPORT_SYMBOL_GPL([a-z0-9_]*)' "$MLX_EXT_ROOT/rust/helpers/export.c" |
			sed 's/.*(\(.*\))/\1/' | sort | tr '\n' ' ')" "symbols" || return 1
}

# With MODVERSIONS, each export of mlx_ext has a non-zero CRC in
# Module.symvers, and modpost said nothing of a version it could not make.
# The CRCs of functions defined in Rust and exported from C (rust/helpers/
# export.c) come from the C side: Kbuild runs gendwarfksyms over export.o
# (7.3 scripts/Makefile.build:204-207 and 236-241, cmd_gensymtypes_c
# through gen_symversions), whose DWARF holds
# each prototype of include/mlx_ext/mlx_ext.h through the
# __gendwarfksyms_ptr_<symbol> that EXPORT_SYMBOL adds (7.3 include/linux/
# export.h:65-70), and writes "#SYMVER symbol crc" into .export.o.cmd, where
# modpost reads it; the Rust object exports nothing.
test_export_crcs() {
	if [ "$(kconfig "$config" MODVERSIONS)" != y ]; then
		echo "$kdir has no CONFIG_MODVERSIONS"
		return "$KSFT_SKIP"
	fi
	expect_eq "$(kconfig "$config" GENDWARFKSYMS)" y "versions from DWARF" || return 1
	symvers=$MLX_EXT_ROOT/Module.symvers cmd=$MLX_EXT_ROOT/rust/helpers/.export.o.cmd
	[ -s "$symvers" ] && [ -f "$cmd" ] || { echo "no $symvers or $cmd"; return 1; }
	if grep -E 'version generation failed|has no CRC' "$stage.modules.log"; then return 1; fi
	n=0
	while IFS=$'\t' read -r crc sym mod _; do
		[ "${mod##*/}" = mlx_ext ] || continue
		n=$((n + 1))
		[ "$crc" != 0x00000000 ] || { echo "$sym: CRC 0"; return 1; }
		expect_eq "$(sed -n "s/^#SYMVER $sym //p" "$cmd")" "$crc" "$sym's CRC in Module.symvers and from gendwarfksyms over export.o" ||
			return 1
	done <"$symvers"
	expect_eq "$n" "$(grep -c 'EXPORT_SYMBOL_GPL(' "$MLX_EXT_ROOT/rust/helpers/export.c")" "exports with a CRC" || return 1
	if grep -l '^#SYMVER mlx_ext_' "$MLX_EXT_ROOT"/rust/.*.o.cmd 2>/dev/null; then
		echo "a Rust object exports mlx_ext's API"
		return 1
	fi
}

# sample_versions KO: "symbol crc" of each mlx_ext_ import KO's __versions
# records (kmod's --dump-modversions), sorted.
sample_versions() {
	modprobe --dump-modversions "$1" | while read -r crc sym; do
		[[ $sym == mlx_ext_* ]] && printf '%s 0x%08x\n' "$sym" "$((crc))"
	done | sort -u
}
# symvers_versions SYMVERS SYMBOL...: "symbol crc" of each SYMBOL there, sorted.
symvers_versions() {
	local f=$1
	shift
	for sym in "$@"; do awk -F'\t' -v s="$sym" '$2 == s { print s, $1 }' "$f"; done | sort
}

# sample_install NAME DEP...: the sample ULP samples/NAME, its sources
# copied where nothing of mlx_ext's tree is near (the tree's own build
# leaves objects beside them), built with the two Kbuild lines a ULP needs
# against the installed files only, its modinfo depending on each DEP, then
# installed as a ULP package installs its modules: Kbuild's modules_install
# signs and compresses it like the kernel's own, into updates/sample.
# sample_build SRC MLX_EXT_DIR: the sample whose sources are in SRC, built
# with Kbuild against the mlx_ext files in MLX_EXT_DIR, with no warning.
# Sets vars, the make variables of the build.
sample_build() {
	vars=(M="$1" MLX_EXT_DIR="$2")
	if grep -q '^CONFIG_CC_IS_CLANG=y' "$config"; then
		# The clang of the kernel's major version, as scripts/modules.sh.
		major=$(($(kconfig "$config" CLANG_VERSION) / 10000))
		if command -v "clang-$major" >/dev/null; then vars+=("LLVM=-$major"); else vars+=(LLVM=1); fi
	fi
	make -C "$kdir" "${vars[@]}" modules >"$stage.log" 2>&1 || { tail -n 30 "$stage.log"; return 1; }
	if grep -E 'WARNING|undefined' "$stage.log"; then return 1; fi
}

sample_install() {
	name=$1
	shift
	src=$stage/$name
	rm -rf "$src" && mkdir -p "$src"
	cp "$MLX_EXT_ROOT/samples/$name"/{Kbuild,*.c} "$src/"
	sample_build "$src" "$stage/usr/src/mlx_ext/$(uname -m)/$release" || return 1
	if [ "$(kconfig "$config" MODVERSIONS)" = y ]; then
		# The CRCs the sample carries are mlx_ext's, one per import.
		mapfile -t imports < <(modprobe --dump-modversions "$src/$name.ko" | awk '$2 ~ /^mlx_ext_/ { print $2 }' | sort -u)
		((${#imports[@]})) || { echo "$name.ko records no version of an mlx_ext symbol"; return 1; }
		expect_eq "$(sample_versions "$src/$name.ko")" \
			"$(symvers_versions "$stage/usr/src/mlx_ext/$(uname -m)/$release/Module.symvers" "${imports[@]}")" \
			"$name's CRCs of ${imports[*]}" || return 1
	fi
	deps=$(modinfo -F depends "$src/$name.ko")
	echo "$name depends: $deps"
	for dep in "$@"; do
		case ",$deps," in *,"$dep",*) ;; *) echo "no $dep"; return 1 ;; esac
	done
	# As built, unsigned, for the guest to refuse (check.sh's step_dkms).
	mkdir -p "$src/unsigned" && cp "$src/$name.ko" "$src/unsigned/"
	# A headers package has no key: the ULP's package signs it (a MOK).
	if grep -q '^CONFIG_MODULE_SIG=y' "$config" && [ ! -f "$kdir/certs/signing_key.x509" ]; then
		sign_module "$signer" "$src/$name.ko" || return 1
	fi
	make -C "$kdir" "${vars[@]}" INSTALL_MOD_PATH="$stage" INSTALL_MOD_DIR=updates/sample \
		modules_install >"$stage.log" 2>&1 || { tail -n 30 "$stage.log"; return 1; }
	[ -f "$stage/lib/modules/$release/updates/sample/$name$ko" ] ||
		{ echo "no updates/sample/$name$ko"; return 1; }
}

# The sample ULPs against the installed files only: mlx_ext_caps and
# mlx_ext_counters (the rdma_cm one), both installed into updates/sample
# for the DKMS boot.
test_sample_builds_against_installed_files() {
	sample_install mlx_ext_caps mlx_ext && sample_install mlx_ext_counters mlx_ext rdma_cm
}

# A ULP built against a Module.symvers whose CRC of mlx_ext_api_version is
# not mlx_ext's, signed with the kernel's key so that only its version can
# be refused: the guest must refuse to load it (tests/install/dkms.sh).
test_sample_with_a_wrong_crc() {
	inst=$stage/usr/src/mlx_ext/$(uname -m)/$release bad=$stage/badcrc
	# Nothing of an earlier run's is left for the guest.
	rm -rf "$bad"
	if [ "$(kconfig "$config" MODVERSIONS)" != y ]; then
		echo "$kdir has no CONFIG_MODVERSIONS"
		return "$KSFT_SKIP"
	fi
	mkdir -p "$bad/src" "$bad/include"
	cp -r "$inst/include/." "$bad/include/"
	crc=$(awk -F'\t' '$2 == "mlx_ext_api_version" { print $1 }' "$inst/Module.symvers")
	[ -n "$crc" ] || { echo "no mlx_ext_api_version in $inst/Module.symvers"; return 1; }
	printf -v wrong '0x%08x' $((crc ^ 1))
	sed "s/^$crc\t\(mlx_ext_api_version\t\)/$wrong\t\1/" "$inst/Module.symvers" >"$bad/Module.symvers"
	cmp -s "$inst/Module.symvers" "$bad/Module.symvers" && { echo "no mlx_ext_api_version to change"; return 1; }
	cp "$MLX_EXT_ROOT/samples/mlx_ext_caps"/{Kbuild,*.c} "$bad/src/"
	sample_build "$bad/src" "$bad" || return 1
	badko=$bad/src/mlx_ext_caps.ko
	expect_eq "$(sample_versions "$badko" | grep '^mlx_ext_api_version ')" \
		"$(symvers_versions "$bad/Module.symvers" mlx_ext_api_version)" "the wrong CRC, recorded" || return 1
	if grep -q '^CONFIG_MODULE_SIG=y' "$config"; then
		sign_module "$signer" "$badko" || return 1
	fi
	cp "$badko" "$bad/"
}

ktap_run test_make_modules test_modules_install_into_stage test_modinfo_version \
	test_modules_signed_with_the_kernels_key test_module_btf test_export_crcs test_headers_install \
	test_sample_builds_against_installed_files test_sample_with_a_wrong_crc
