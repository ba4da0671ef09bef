/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What mlx_ext_sim.ko tells mlx_ext.ko about a simulated adapter, with no
 * symbol dependency between the two modules in either direction (each
 * loads and unloads on its own): a versioned structure the simulator hangs
 * on the platform_data of its bus device, the parent of the adapter's
 * ib_device, as a PCI PF's facts hang on its struct pci_dev.
 *
 * A reader checks the parent's bus name, then the magic and the version
 * (it needs at least the version whose fields it reads). Fields are only
 * added at the end, with a new version; none changes meaning.
 */
#ifndef _MLX_EXT_SIM_H
#define _MLX_EXT_SIM_H

#include <linux/notifier.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define MLX_EXT_SIM_BUS_NAME "mlx_ext_sim"
#define MLX_EXT_SIM_INFO_MAGIC 0x4d4c5853U	/* "MLXS" */
#define MLX_EXT_SIM_INFO_VERSION 2
/*
 * The most VFs a simulated adapter can have, its sriov_totalvfs: MAX_NUM_VFS
 * of core/src/sim/model.rs, which new_device takes.
 */
#define MLX_EXT_SIM_TOTAL_VFS 255

/**
 * struct mlx_ext_sim_info - a simulated adapter's SR-IOV facts
 * @magic: MLX_EXT_SIM_INFO_MAGIC
 * @version: MLX_EXT_SIM_INFO_VERSION of the simulator that wrote it
 * @num_vfs: the adapter's virtual functions (new_device's NUM_VFS, then
 *	     what was last written to the bus device's sriov_numvfs); read it
 *	     with READ_ONCE()
 * @pci_name: the PCI-style name of its PF, "DDDD:00:00.0" with the
 *	      adapter's ID as the domain in hex: its VFs' function names are
 *	      made from it as mlx4 makes them
 * @vfs_changed: (version 2) called, in process context, after @num_vfs
 *		 changed, with the new number as the action and this
 *		 structure as the data; as a PCI PF's VFs come and go. A
 *		 reader registers on it while it holds the adapter's ib_device
 *		 (from its client's add to its remove), and unregisters before
 *		 it lets go.
 */
struct mlx_ext_sim_info {
	u32 magic;
	u32 version;
	u16 num_vfs;
	u16 reserved;
	char pci_name[16];
	struct blocking_notifier_head vfs_changed;
};

/*
 * mlx_ext_reg_user_mr_unsupported - the simulator's reg_user_mr op, of the
 * type this tree's struct ib_device_ops gives it (rust/helpers/simbus.c)
 */
extern typeof_member(const struct ib_device_ops, reg_user_mr) mlx_ext_reg_user_mr_unsupported;

#endif /* _MLX_EXT_SIM_H */
