#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Makes a copy of busybox that no longer knows some of its applets.

Usage: busybox-unapplet.py BUSYBOX NAME...

Debian's busybox-static is built with FEATURE_SH_STANDALONE: its shell runs
an applet of a command's name before it searches PATH (shell/ash.c,
find_command()), so a guest script's `modprobe` would be busybox's, whatever
/bin/modprobe is, and busybox's modprobe hands a compressed module to
finit_module() first, which the kernel refuses with "Invalid ELF header
magic" in its log. The guest's copy (scripts/mkinitramfs.sh) is told to
forget the module tools, so that every script and shell finds kmod's on
PATH, as on a distribution.

How: the applet names are one NUL-separated string in the binary, in
sorted order (busybox searches it by bisection, libbb/appletlib.c,
find_applet_by_name()). Each NAME's last character is raised by one, which
keeps the string's length and, as checked here, its order: the name is no
longer found, and every other name still is. BUSYBOX is changed in place;
the names come from `BUSYBOX --list`, which prints them in that order.
"""

import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    path, hide = sys.argv[1], sys.argv[2:]
    names = subprocess.run([path, "--list"], check=True, capture_output=True).stdout.split()
    blob = open(path, "rb").read()
    table = b"\0".join(names)
    at = blob.find(b"\0" + table + b"\0")
    if at < 0 or blob.find(b"\0" + table + b"\0", at + 1) >= 0:
        sys.exit(f"{path}: its applet name table is not found once")
    at += 1
    new = list(names)
    for name in hide:
        b = name.encode()
        if b not in names:
            continue
        i = names.index(b)
        new[i] = b[:-1] + bytes([b[-1] + 1])
    if sorted(new) != new or len(set(new)) != len(new):
        sys.exit(f"{path}: renaming {hide} would break the order of its applet names")
    patched = blob[:at] + b"\0".join(new) + blob[at + len(table):]
    assert len(patched) == len(blob)
    with open(path, "wb") as f:
        f.write(patched)


if __name__ == "__main__":
    main()
