#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# `make rust-analyzer`: writes rust-project.json at the top of the tree, for
# rust-analyzer to see the module's two crates against the cached test
# kernel: the kernel's own crates (core, kernel, macros... as the kernel's
# `make rust-analyzer` describes them, generated with M= an empty directory)
# and mlx_ext (rust/mlx_ext.rs) and mlx_ext_sim (rust/mlx_ext_sim.rs, with
# `--cfg mlx_ext_provider`), with the kernel's cfgs and the probes' (the
# module build's rust/ib/kernel_cfgs, where it has run), depending on core
# and kernel. (The kernel's generator finds an external module's crate roots
# only next to the Kbuild naming them; ours are in rust/, named by the
# top-level Kbuild.) Prints the file's path.
source "$(dirname "$0")/lib.sh"

kdir=$("$MLX_EXT_ROOT/scripts/build-kernel.sh")
mapfile -t vars < <(kmake_vars)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$(ksrc "$kdir")" "${vars[@]}" M="$tmp" rust-analyzer >&2 ||
	die "the kernel's make rust-analyzer failed"
out=$MLX_EXT_ROOT/rust-project.json
python3 - "$tmp/rust-project.json" "$MLX_EXT_ROOT" >"$out" <<'PY' || die "cannot write $out"
import json, os, sys
project = json.load(open(sys.argv[1]))
root = sys.argv[2]
# The probes' cfgs (Kbuild, "Kernel differences"), one --cfg=NAME per line.
probed = []
if os.path.exists(f"{root}/rust/ib/kernel_cfgs"):
    probed = [l.strip().removeprefix("--cfg=") for l in open(f"{root}/rust/ib/kernel_cfgs") if l.strip()]
crates = project["crates"]
index = {c["display_name"]: i for i, c in enumerate(crates)}
kernel = crates[index["kernel"]]
for name, extra_cfg in (("mlx_ext", []), ("mlx_ext_sim", ["mlx_ext_provider"])):
    crates.append({
        "display_name": name,
        "root_module": f"{root}/rust/{name}.rs",
        "is_workspace_member": True,
        "is_proc_macro": False,
        "deps": [{"crate": index[d], "name": d} for d in ("core", "kernel")],
        "cfg": kernel["cfg"] + probed + extra_cfg,
        "edition": "2021",
        "env": {"RUST_MODFILE": "This is only for rust-analyzer"},
    })
json.dump(project, sys.stdout, sort_keys=True, indent=4)
PY
echo "$out"
