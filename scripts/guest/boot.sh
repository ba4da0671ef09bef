#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One boot of scripts/boot-loop.sh: the kernel up, rxe0 and the tree's
# modules loaded and unloaded. /init then prints the kernel's splats and
# "mlx_ext-vm: done rc=N", which the loop reads.

. /tests/lib/common.sh

add_rxe0 && modprobe mlx_ext && modprobe mlx_ext_sim &&
	echo "0 cx3" >/sys/bus/mlx_ext_sim/new_device &&
	modprobe -r mlx_ext_sim && modprobe -r mlx_ext
