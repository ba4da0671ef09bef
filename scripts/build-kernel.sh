#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds a Rust-enabled kernel from Debian's kernel source (7.x for the
# debug kernel, linux-source-6.12 for the production one: kernel_source in
# lib.sh): tinyconfig with the fragments kernel/common.config and
# kernel/$MLX_EXT_KERNEL.config merged over it (MLX_EXT_KERNEL: debug, the
# default, is the test kernel; production is configured and built as
# distributions ship 6.12; lib.sh), unpacked into DIR/linux and
# cached outside the repository under a key made of all its inputs (see
# kernel_inputs in lib.sh). Prints the kernel directory on stdout; progress
# goes to stderr, the kernel's own output to the build log in the cache
# directory.
#
# MLX_EXT_KERNEL_BUILD=tree builds, instead of a bootable kernel, the tree an
# out-of-tree module build needs (make check's 6.12 leg): configured and
# prepared, with the Rust crates, and a Module.symvers of vmlinux and the
# RDMA core modules, so that modpost checks every symbol the tree's modules
# use. Documentation/building.rst, "The 6.12 tree", says why that much.
#
# Clones and CI share the cache; cached_build (lib.sh) locks it, so a second
# `make kernel` of the same key waits for the first and reuses its tree.
source "$(dirname "$0")/lib.sh"

build_kernel() { # DIR: builds the kernel in the empty directory DIR
	local dir=$1
	jobs=${JOBS:-$(($(nproc) + 1))}
	build_timeout=${MLX_EXT_KERNEL_TIMEOUT:-3600}
	say "kernel: no cached $MLX_EXT_KERNEL build for key $(kernel_key); building in $dir (how long: Documentation/measurements.rst)"
	# The time of the whole build, unpacking and configuring included.
	start=$SECONDS
	kernel_inputs | awk '/^fragment:/ { skip = 1 } !skip { print "    " $0 }' >&2
	log=$dir/build.log
	say "kernel: build log $log"
	read -r pkg _ file < <(kernel_source)
	if [[ $file == *.deb ]]; then
		# The source tarball inside Debian's linux-source-7.N package.
		dpkg-deb --fsys-tarfile "$file" | tar -xO "./usr/src/$pkg.tar.xz" | tar -xJ -C "$dir" ||
			die "cannot unpack $file"
	else
		tar -xf "$file" -C "$dir" || die "cannot unpack $file"
	fi
	mv "$dir/$pkg" "$(ksrc "$dir")"
	src=$(ksrc "$dir")
	mapfile -t vars < <(kmake_vars)
	km() { make -C "$src" "${vars[@]}" "$@" >>"$log" 2>&1; }
	# On failure: what failed, the end of the log, and where the rest is.
	failed() {
		echo "----- last 40 lines of $log -----" >&2
		tail -n 40 "$log" >&2
		die "$*"
	}

	km -s rustavailable || failed "the Rust toolchain does not satisfy the kernel (see 'make rustavailable' above); run scripts/setup.sh"
	mapfile -t fragments < <(kernel_fragments)
	say "kernel: configuring (tinyconfig + ${fragments[*]#"$MLX_EXT_ROOT"/})"
	km -s tinyconfig || failed "make tinyconfig failed"
	(cd "$src" && scripts/kconfig/merge_config.sh -m -O . .config \
		"${fragments[@]}" >>"$log" 2>&1) || failed "merge_config.sh failed"
	km -s olddefconfig || failed "make olddefconfig failed"

	# Every option the fragments set or unset must have survived olddefconfig.
	dropped=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) name=${line%%=*} ;;
		"# CONFIG_"*" is not set") name=${line#\# } name=${name%% *} ;;
		*) continue ;;
		esac
		grep -qx -- "$line" "$src/.config" && continue
		# An option that is unset and not even listed is unset too.
		[[ $line == "# "* ]] && ! grep -qE "^$name=" "$src/.config" && continue
		echo "mlx_ext: error: Kconfig dropped '$line' (now: $(grep -E "^(# )?$name[= ]" "$src/.config" || echo unset))" >&2
		dropped=1
	done < <(cat "${fragments[@]}")
	((dropped == 0)) || die "the kernel config lost options asked for by ${fragments[*]#"$MLX_EXT_ROOT"/} (a dependency is missing)"

	# What to build: a bootable kernel, bzImage and every module, or the
	# tree: modules_prepare (scripts, the generated headers and, with
	# CONFIG_RUST, rust/: Makefile's prepare target), vmlinux.o (the
	# phony vmlinux_o: vmlinux.o would be a single-target build), and the
	# modules whose exports the tree's modules use (modinfo -F depends:
	# ib_core, rdma_cm and what rdma_cm needs), whose single-target build
	# runs modpost over vmlinux.o and them and writes Module.symvers
	# (Makefile's single_modules, scripts/Makefile.modpost).
	local ib=drivers/infiniband/core
	if [ "$MLX_EXT_KERNEL_BUILD" = tree ]; then
		goals=("modules_prepare vmlinux_o" "$ib/ib_core.ko $ib/ib_cm.ko $ib/iw_cm.ko $ib/rdma_cm.ko")
	else
		goals=("bzImage modules")
	fi
	local g
	for g in "${goals[@]}"; do
		say "kernel: building $g with -j$jobs (timeout ${build_timeout}s; progress every minute)"
		# shellcheck disable=SC2086 # each goal list is words
		# One deadline for the whole build, whatever its goals.
		timeout -k 10 "$((build_timeout - (SECONDS - start)))" make -C "$src" "${vars[@]}" -j"$jobs" $g >>"$log" 2>&1 &
		make_pid=$!
		while kill -0 "$make_pid" 2>/dev/null; do
			for _ in $(seq 60); do
				sleep 1
				kill -0 "$make_pid" 2>/dev/null || break
			done
			kill -0 "$make_pid" 2>/dev/null || break
			say "kernel: $(((SECONDS - start) / 60)) min, $(grep -cE '^  (CC|RUSTC|AS|LD)' "$log") files built so far"
		done
		wait "$make_pid" || {
			rc=$?
			[ "$rc" = 124 ] && failed "kernel build timed out after ${build_timeout}s"
			failed "kernel build failed (exit $rc)"
		}
	done
	if [ "$MLX_EXT_KERNEL_BUILD" = tree ]; then
		[ -s "$src/Module.symvers" ] || failed "the tree has no Module.symvers"
	else
		say "kernel: installing modules"
		km -s INSTALL_MOD_PATH="$dir/modinst" modules_install || failed "modules_install failed"
	fi
	kernel_inputs >"$dir/inputs"
	echo "$((SECONDS - start))" >"$dir/build-seconds"
	say "kernel: built in $((SECONDS - start)) s"
}

kernel_source >/dev/null # resolved once, for every kernel_key below
key=$(kernel_key)
cached_build "$(kernel_dir)" "kernel $key" build_kernel
