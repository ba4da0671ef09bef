#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the rust-project.json that `make rust-analyzer` wrote
(scripts/rust-analyzer.sh): it has the module's two crates, each with its
root file, the kernel's core and kernel crates as dependencies and the
kernel's cfgs, and the simulator's crate its mlx_ext_provider cfg.

Usage: rust_project.py RUST_PROJECT_JSON (exit 0 when it is right; what is
wrong, one line each, otherwise). make check runs it once the test kernel
is built (scripts/check.sh)."""
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
