#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# headers-layout.sh arch|ubuntu|debian KSRC DEST: the kernel built in KSRC
# (in tree, as the harness builds it) packaged as a distribution packages
# its headers, under the root DEST; prints the KDIR a user of that
# distribution builds against (/lib/modules/<release>/build there). The
# install and DKMS tests build mlx_ext and the sample ULPs against these
# trees, not against the full build tree, which users do not have.
#
#  arch    linux-headers, from Arch's PKGBUILD, _package-headers (the
#          "Installing build files" to "Stripping vmlinux" steps; read in
#          the 7.0.7.arch1 PKGBUILD that AUR lyric-kernel carries
#          unchanged, and in linux-bsb's 7.2.4.arch1, where the Rust step
#          is wrapped in `if CONFIG_RUST`): .config, Makefile,
#          Module.symvers, System.map and vmlinux; kernel/Makefile,
#          arch/x86/Makefile; all of scripts/ and include/,
#          arch/x86/include, asm-offsets.s; objtool; resolve_btfids
#          ("required when DEBUG_INFO_BTF_MODULES is enabled": pahole
#          and it make a module's BTF against vmlinux); every Kconfig*; of
#          rust/, only *.rmeta and *.so ("Installing Rust files"); then no
#          *.o, no broken link, build tools and vmlinux stripped. No signing
#          key: Arch's modules are signed with a key the build throws away.
#  ubuntu  linux-headers-<release> and linux-lib-rust-<release>, from
#          Ubuntu 26.04's debian/rules.d/2-binary-arch.mk: the headers
#          tree is `make O=<hdrdir> syncconfig prepare scripts` (:266),
#          with Module.symvers and scripts/module.lds (:302-311), *.cmd
#          deleted (:466); its rust/ moved to
#          /usr/src/linux-lib-rust-<release>/rust (:470-476) and replaced by
#          the link rust -> ../linux-lib-rust-<release>/rust
#          (debian/scripts/link-lib-rust:12-15); /lib/modules/<release>/
#          build links to /usr/src/linux-headers-<release> (:306-308).
#          Ubuntu's flavour tree links its source files into the common
#          linux-headers-<abi> (debian/scripts/link-headers); here they are
#          copies, which Kbuild reads the same way. No signing key.
#  debian  linux-headers as Debian 7.x ships it: Rust on, and no Rust
#          build products (Debian's rules.real copies .config,
#          Module.symvers, include/ and arch/<arch>/include; nothing of
#          rust/). mlx_ext must refuse it in one line.
set -euo pipefail

[ $# = 3 ] || { echo "usage: headers-layout.sh arch|ubuntu|debian KSRC DEST" >&2; exit 2; }
layout=$1 ksrc=$(realpath "$2") dest=$3
release=$(cat "$ksrc/include/config/kernel.release")
rm -rf "$dest"
mkdir -p "$dest"
dest=$(realpath "$dest")

# common_files DIR: what both Arch's and Ubuntu's headers hold of a built
# tree (Arch's list; Ubuntu's prepare makes the same generated files),
# copied with their times (Kbuild compares .config's with auto.conf's).
common_files() {
	local d=$1 f
	mkdir -p "$d"
	(cd "$ksrc" && cp -a --parents .config Makefile Module.symvers System.map \
		kernel/Makefile arch/x86/Makefile scripts include arch/x86/include \
		arch/x86/kernel/asm-offsets.s tools/objtool/objtool "$d/")
	(cd "$ksrc" && find . -path ./Documentation -prune -o -name 'Kconfig*' -print0 |
		xargs -0 cp -a --parents -t "$d/")
	# No key leaves the build: users sign with their own (DKMS, a MOK).
	find "$d" \( -name '*.o' -o -name '*.cmd' \) -delete
	find -L "$d" -type l -delete
	rm -f "$d/certs/signing_key.pem"
}

# rust_products DIR: the crates' metadata and procedural macros, the files
# an out-of-tree Rust module's build reads from rust/.
rust_products() {
	mkdir -p "$1"
	cp -a "$ksrc"/rust/*.rmeta "$ksrc"/rust/*.so "$1/"
}

case "$layout" in
arch)
	kdir=$dest/usr/lib/modules/$release/build
	common_files "$kdir"
	cp -a "$ksrc/vmlinux" "$kdir/"
	if [ -f "$ksrc/tools/bpf/resolve_btfids/resolve_btfids" ]; then
		(cd "$ksrc" && cp -a --parents tools/bpf/resolve_btfids/resolve_btfids "$kdir/")
		strip --strip-unneeded "$kdir/tools/bpf/resolve_btfids/resolve_btfids"
	fi
	rust_products "$kdir/rust"
	# "Stripping build tools...", "Stripping vmlinux..."
	strip --strip-unneeded "$kdir"/rust/*.so "$kdir/tools/objtool/objtool"
	strip --strip-debug "$kdir/vmlinux"
	mkdir -p "$dest/lib/modules/$release"
	;;
ubuntu)
	hdr=$dest/usr/src/linux-headers-$release lib=$dest/usr/src/linux-lib-rust-$release
	common_files "$hdr"
	mkdir -p "$lib"
	[ ! -d "$hdr/rust" ] || mv "$hdr/rust" "$lib/rust"
	rust_products "$lib/rust"
	ln -s "../linux-lib-rust-$release/rust" "$hdr/rust"
	mkdir -p "$dest/lib/modules/$release"
	ln -s "/usr/src/linux-headers-$release" "$dest/lib/modules/$release/build"
	kdir=$hdr
	;;
debian)
	kdir=$dest/usr/src/linux-headers-$release
	common_files "$kdir"
	;;
*)
	echo "usage: headers-layout.sh arch|ubuntu|debian KSRC DEST" >&2
	exit 2
	;;
esac
echo "$kdir"
