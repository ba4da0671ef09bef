# SPDX-License-Identifier: GPL-2.0
#
# mlx_ext: the targets a developer uses. Kbuild (the module's build rules) is
# in ./Kbuild; the scripts each target runs are in scripts/.
#
#   make run     build everything, boot QEMU, load mlx_ext next to rxe0, show its report
#   make check   every test: host cargo test, rustfmt, clippy, module build, VM tests
#   make check-6.12   the VM tests on the 6.12 (production-config) kernel
#   make shell   boot the VM with the tree's modules, rxe0 and mlx_ext: a shell
#   make vm-run SCRIPT=FILE   run guest script FILE in the VM, as the tests run
#   make bench   the benchmarks: host (masked atomics arithmetic, ns/op) and VM on the
#                7.x bench kernel, the test kernel without its debug options, built
#                when first asked (the ULP API's costs and ratios; the VF GUID
#                tables' SA requests and convergence time)
#   make module  build mlx_ext.ko against the cached test kernel
#   make kernel  build (or reuse) the cached test (debug) kernel; with
#                MLX_EXT_KERNEL=production, the production-config one (6.12),
#                with MLX_EXT_KERNEL=bench, the benchmarks' one
#   make setup   install the Debian packages and bindgen-cli the rest needs
#   make clean   remove build products of this tree (not the kernel cache)
#   make rust-analyzer   rust-project.json for the module's crates against the test kernel
#
# On your own kernel (Documentation/building.rst, "Your own kernel"):
#   make modules [KDIR=/path/to/kernel/build]   (default: the running kernel's)
#   make modules_install [KDIR=...] [INSTALL_MOD_PATH=...] [INSTALL_MOD_DIR=updates]
#   make headers_install [KDIR=...] [DESTDIR=...]   mlx_ext.h and Module.symvers for ULPs

SHELL := /bin/bash
KDIR ?= /lib/modules/$(shell uname -r)/build
.PHONY: run check check-6.12 shell vm-run bench bench-host bench-vm bench-guid module kernel setup clean \
	modules modules_install headers_install rust-analyzer

run: setup
	@kdir=$$(scripts/build-module.sh) && \
		scripts/vm-run.sh scripts/guest/demo.sh "$$kdir"

shell: setup
	@kdir=$$(scripts/build-module.sh) && \
		scripts/vm-run.sh --shell scripts/guest/shell.sh "$$kdir"

# The guest's /extra: EXTRA if given, else what make check gives the VM
# tests (the host's reference digests, scripts/vm-extra.sh).
vm-run: setup
	@if [ -z "$(SCRIPT)" ]; then echo "usage: make vm-run SCRIPT=path/to/guest-script.sh" >&2; exit 2; fi
	@kdir=$$(scripts/build-module.sh) && \
		extra="$(EXTRA)" && \
		if [ -z "$$extra" ]; then extra=$${MLX_EXT_BUILD:-build}/vm-extra && scripts/vm-extra.sh "$$extra"; fi && \
		scripts/vm-run.sh "$(SCRIPT)" "$$kdir" "$$extra"

check:
	@scripts/check.sh

# The VM suite on 6.12, the production-config kernel: 6.12 keeps working.
# Not part of make check, which builds for 6.12 but boots 7.x (its time:
# Documentation/measurements.rst). The tests that need the debug kernel's
# fault injection or lockdep skip there.
check-6.12: setup
	@kdir=$$(MLX_EXT_KERNEL=production scripts/build-module.sh) && \
		extra=$${MLX_EXT_BUILD:-build}/vm-extra && scripts/vm-extra.sh "$$extra" && \
		MLX_EXT_VM_TIMEOUT=$${MLX_EXT_VM_TIMEOUT:-2700} \
		scripts/vm-run.sh tests/vm/check.sh "$$kdir" "$$extra"

bench: bench-host bench-vm bench-guid

bench-host:
	cargo bench -p mlx-ext-core --bench atomics

# The VM benchmarks run on the bench kernel, 7.x with the distribution's
# options and without the debug kernel's KASAN and lockdep, which would be
# what they measure (kernel/bench.config; built on first use); each vCPU on
# a host thread of its own (multi-threaded TCG), as they were measured (the
# tests run thread=single).
bench-vm: setup
	@kdir=$$(MLX_EXT_KERNEL=bench scripts/build-module.sh) && \
		MLX_EXT_TCG_THREAD=$${MLX_EXT_TCG_THREAD:-multi} \
		scripts/vm-run.sh tests/bench/bench.sh "$$kdir"

# Its last figure runs for ten minutes (MLX_EXT_BENCH_ERROR_SECS in the
# guest, through MLX_EXT_VM_APPEND, shortens it).
bench-guid: setup
	@kdir=$$(MLX_EXT_KERNEL=bench scripts/build-module.sh) && \
		MLX_EXT_VM_TIMEOUT=$${MLX_EXT_VM_TIMEOUT:-1800} MLX_EXT_TCG_THREAD=$${MLX_EXT_TCG_THREAD:-multi} \
		scripts/vm-run.sh tests/bench/bench_guid.sh "$$kdir"

module: setup
	@scripts/build-module.sh >/dev/null

kernel: setup
	@scripts/build-kernel.sh >/dev/null

setup:
	@scripts/setup.sh

modules:
	@scripts/modules.sh modules "$(KDIR)"

modules_install:
	@scripts/modules.sh modules_install "$(KDIR)"

headers_install:
	@scripts/headers-install.sh "$(KDIR)"

rust-analyzer: setup
	@scripts/rust-analyzer.sh

clean:
	@if [ "$(origin KDIR)" = "command line" ]; then scripts/modules.sh clean "$(KDIR)"; \
	else source scripts/lib.sh && kdir=$$(kernel_dir) && \
		if [ -d "$$kdir/linux" ]; then \
			make -C "$$kdir/linux" M=$(CURDIR) $$(kmake_vars) clean; fi; fi
	rm -rf build target
