#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# dkms-check.sh KERNEL_DIR HEADERS: mlx_ext through Debian's real dkms, as
# a user installs it, for the cached 7.x kernel KERNEL_DIR against its
# headers tree HEADERS (make check passes it packaged as Ubuntu's: the
# Rust build products in linux-lib-rust, behind the rust link;
# scripts/headers-layout.sh), with the toolchain found on PATH, all in a
# staging area (build/dkms: dkms's --sourcetree, --dkmstree and
# --installtree, DESTDIR; nothing outside the tree is written):
#   - the committed sources and dkms.conf as /usr/src/mlx_ext-<VERSION>;
#   - dkms add, build (--kernelsourcedir), install (--no-depmod: dkms's own
#     depmod ignores --installtree; depmod -b runs instead) into a copy of
#     the kernel's installed modules;
#   - what a ULP builds against installed for that kernel by dkms.conf's
#     POST_BUILD and POST_INSTALL, and taken away by its POST_REMOVE at dkms
#     remove (the guest boots a snapshot taken before);
#   - signed by dkms with the key a user names in /etc/dkms/framework.conf
#     (sign_file, mok_signing_key, mok_certificate; dkms 3.0.10 reads them
#     from its environment the same way, prepare_signing()). With Secure
#     Boot that key is a MOK enrolled with mokutil; QEMU here boots with no
#     shim, so the kernel's own build key stands for it, and the guest
#     enforces signatures (module.sig_enforce=1);
#   - a kernel without CONFIG_RUST is skipped (dkms exit 77), not failed;
#   - the sample ULP that install-check.sh built against the installed
#     headers and installed (signed) with Kbuild, beside it (updates/sample);
#   - the result booted in the VM (tests/install/dkms.sh, with only the staged
#     modules in the guest): modprobe mlx_ext from updates/dkms, modprobe of
#     the sample, which depmod's dependencies bring mlx_ext in for, an
#     unsigned module refused, and mlx_ext next to the real mlx4_ib and
#     mlx5_ib.
# Prints KTAP (the host part here, the guest's after it).
source "$(dirname "$0")/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

[ $# = 2 ] || { echo "usage: dkms-check.sh KERNEL_DIR HEADERS" >&2; exit 2; }
kdir=$1 hdrs=$2
ksrc=$(ksrc "$kdir")
st=$MLX_EXT_BUILD/dkms
version=$(cat "$MLX_EXT_ROOT/VERSION")
kver=$(ls "$kdir/modinst/lib/modules")
unset RUSTC BINDGEN
# Where POST_BUILD installs what a ULP builds against.
export DESTDIR=$st/root
ulpdir=$DESTDIR/usr/src/mlx_ext/$(uname -m)/$kver
# The kernel's build key stands for the user's MOK (below).
if grep -q '^CONFIG_MODULE_SIG=y' "$ksrc/.config"; then
	export sign_file=$ksrc/scripts/sign-file mok_signing_key=$ksrc/certs/signing_key.pem \
		mok_certificate=$ksrc/certs/signing_key.x509
fi
dk() { dkms "$@" --sourcetree "$st/src" --dkmstree "$st/tree"; }

test_dkms_conf_version() {
	expect_eq "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$MLX_EXT_ROOT/dkms.conf")" "$version" \
		"dkms.conf's PACKAGE_VERSION"
}

test_dkms_add_build_install() {
	rm -rf "$st"
	mkdir -p "$st/src/mlx_ext-$version" "$st/tree" "$st/lib/modules"
	# What a user's source tree holds: the committed files, nothing built.
	git -C "$MLX_EXT_ROOT" ls-files -z | (cd "$MLX_EXT_ROOT" && xargs -0 tar -c) |
		tar -x -C "$st/src/mlx_ext-$version" || return 1
	cp -a "$kdir/modinst/lib/modules/$kver" "$st/lib/modules/"
	rm -f "$st/lib/modules/$kver/build" "$st/lib/modules/$kver/source"
	dk add -m mlx_ext -v "$version" >"$st/log" 2>&1 || { cat "$st/log"; return 1; }
	dk build -m mlx_ext -v "$version" -k "$kver" --kernelsourcedir "$hdrs" >"$st/log" 2>&1 ||
		{ tail -n 30 "$st/log"; cat "$st/tree/mlx_ext/$version/build/make.log" 2>/dev/null | tail -n 30; return 1; }
	# Built with the kernel's rustc, found by itself under its versioned
	# name (no RUSTC is set; PATH's rustc is another: check.sh's
	# step_layouts). dkms keeps the build's log with the built modules.
	want=$(kconfig "$hdrs/.config" RUSTC_VERSION_TEXT)
	used=$(sed -n 's/.* RUSTC=\([^ ]*\) .*/\1/p' "$st/tree/mlx_ext/$version/$kver/$(uname -m)/log/make.log" | head -n1)
	expect_eq "${used##*/}" "rustc-$(echo "$want" | sed -n 's/^rustc \([0-9]*\.[0-9]*\)\..*/\1/p')" \
		"the rustc dkms built with" || return 1
	expect_eq "$("$used" --version 2>&1)" "$want" "its version" || return 1
	dk install --no-depmod -m mlx_ext -v "$version" -k "$kver" --kernelsourcedir "$hdrs" \
		--installtree "$st/lib/modules" >"$st/log" 2>&1 || { tail -n 30 "$st/log"; return 1; }
	# A ULP package's module beside it: the sample, as install-check.sh
	# built it against the installed headers (when it ran first).
	sample=$MLX_EXT_BUILD/stage/lib/modules/$kver/updates/sample
	if [ -d "$sample" ]; then
		mkdir -p "$st/lib/modules/$kver/updates/sample"
		cp "$sample"/*.ko* "$st/lib/modules/$kver/updates/sample/"
	fi
	depmod -b "$st" "$kver" || return 1
	expect_eq "$(cd "$st/lib/modules/$kver/updates/dkms" && ls)" "mlx_ext.ko
mlx_ext_sim.ko" "installed" || return 1
	grep -q '^updates/dkms/mlx_ext.ko:' "$st/lib/modules/$kver/modules.dep" ||
		{ echo "not in modules.dep"; return 1; }
	expect_eq "$(dk status -m mlx_ext --installtree "$st/lib/modules" 2>&1)" \
		"mlx_ext/$version, $kver, $(uname -m): installed" "dkms status"
}

# What dkms installed is signed with the key it was given (the guest, which
# enforces signatures, loads it: tests/install/dkms.sh).
test_dkms_signed() {
	if [ -z "${mok_signing_key:-}" ]; then
		echo "$kdir does not check module signatures (no CONFIG_MODULE_SIG)"
		return "$KSFT_SKIP"
	fi
	# dkms reads /etc/dkms/framework.conf after its environment: a key
	# named there would be the one it signs with.
	if grep -qsE '^[[:space:]]*(sign_file|mok_signing_key|mok_certificate)=' \
		/etc/dkms/framework.conf /etc/dkms/framework.conf.d/*.conf; then
		echo "this host's /etc/dkms/framework.conf names its own signing key, which dkms uses instead of the test's"
		return 1
	fi
	keyid=$(signer_id "$mok_certificate")
	[ -n "$keyid" ] || { echo "no serial number in $mok_certificate"; return 1; }
	for m in mlx_ext mlx_ext_sim; do
		expect_eq "$(modinfo -F sig_key "$st/lib/modules/$kver/updates/dkms/$m.ko")" "$keyid" \
			"$m's signing key" || return 1
	done
}

test_dkms_skips_a_kernel_without_rust() {
	fake=$st/no-rust
	mkdir -p "$fake"
	touch "$fake/Makefile"
	echo CONFIG_INFINIBAND=m >"$fake/.config"
	dk build -m mlx_ext -v "$version" -k 0.0.0-norust --kernelsourcedir "$fake" >"$st/log" 2>&1
	rc=$?
	expect_eq "$rc" 77 "dkms build's exit (77: skipped)" || { cat "$st/log"; return 1; }
	grep -q "BUILD_EXCLUSIVE" "$st/log" || { cat "$st/log"; return 1; }
}

# Installing installed, for this kernel, what `make headers_install` does
# (dkms.conf's POST_BUILD and POST_INSTALL): the header and the exports of
# the mlx_ext.ko dkms built, with their CRCs.
test_dkms_headers_for_ulps() {
	built=$st/tree/mlx_ext/$version/$kver/$(uname -m)/module/mlx_ext.ko
	expect_eq "$(cd "$ulpdir" 2>/dev/null && find . -type f | sort | tr '\n' ' ')" \
		"./Module.symvers ./include/mlx_ext/mlx_ext.h ./include/mlx_ext/version.h " "files" || return 1
	cmp "$MLX_EXT_ROOT/include/mlx_ext/mlx_ext.h" "$ulpdir/include/mlx_ext/mlx_ext.h" || return 1
	expect_eq "$(cut -f2 "$ulpdir/Module.symvers" | sort | tr '\n' ' ')" \
		"$(nm "$built" 2>/dev/null |
			sed -n 's/.* __ksymtab_\(mlx_ext_.*\)/\1/p' | sort | tr '\n' ' ')" \
		"the exports of the mlx_ext.ko dkms built" || return 1
	if [ "$(kconfig "$ksrc/.config" MODVERSIONS)" = y ]; then
		awk -F'\t' '$1 == "0x00000000" { print "no CRC: " $2; bad = 1 } END { exit bad }' \
			"$ulpdir/Module.symvers" || return 1
	fi
}

# dkms remove takes them away again (POST_REMOVE); the guest boots what
# was installed before (a snapshot of hard links).
test_dkms_remove() {
	[ -f "$ulpdir/Module.symvers" ] || { echo "no $ulpdir to remove"; return 1; }
	rm -rf "$st/boot" && mkdir -p "$st/boot" && cp -al "$st/lib" "$st/boot/" || return 1
	dk remove -m mlx_ext -v "$version" -k "$kver" --installtree "$st/lib/modules" >"$st/log" 2>&1 ||
		{ tail -n 30 "$st/log"; return 1; }
	[ ! -e "$ulpdir" ] || { echo "$ulpdir left after dkms remove"; return 1; }
	[ ! -e "$st/lib/modules/$kver/updates/dkms/mlx_ext.ko" ] || { echo "mlx_ext.ko left"; return 1; }
	[ -f "$st/boot/lib/modules/$kver/updates/dkms/mlx_ext.ko" ]
}

ktap_run test_dkms_conf_version test_dkms_add_build_install test_dkms_signed \
	test_dkms_headers_for_ulps test_dkms_skips_a_kernel_without_rust test_dkms_remove
