#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make shell`: rxe0 added and mlx_ext loaded, then a shell on the console.
# Leave it with `exit` (or Ctrl-D): the VM powers off.

. /tests/lib/common.sh

add_rxe0 || echo "could not add rxe0"
modprobe mlx_ext || echo "could not load mlx_ext"
echo
echo "mlx_ext test VM: rxe0 is up, mlx_ext is loaded (see /sys/class/infiniband/*/mlx_ext)."
echo "The tree's modules are in /lib/modules/$(uname -r)/extra; tests in /tests."
echo "exit or Ctrl-D powers the VM off."
export PS1='mlx_ext-vm# '
sh -i
