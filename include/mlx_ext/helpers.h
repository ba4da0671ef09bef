/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between mlx_ext's Rust abstraction layer (rust/ib/) and its C
 * helpers (rust/helpers/).
 *
 * What belongs in a C helper, and nothing else:
 *  - what the 6.12 kernel crate has no abstraction for: sysfs, debugfs,
 *    buses, work items, module parameters;
 *  - static inline functions and macros, which bindgen cannot call.
 * The helpers are called only from rust/ib/, never from feature code, and
 * each has a narrow interface documented here. Everything else, ib_core's
 * exported functions included, is called from Rust through the generated
 * bindings (rust/ib/bindgen_parameters).
 *
 * Lifetimes: no kobject, attribute or file made here has a release function
 * in module code. sysfs directories are kobject_create_and_add() kobjects,
 * whose release is built-in kernel code, so a release delayed past rmmod
 * (CONFIG_DEBUG_KOBJECT_RELEASE, or a reference still held) runs no module
 * code. The memory the module owns (attributes, names, private data) is
 * freed only after the files are removed, which waits for running
 * callbacks.
 */
#ifndef _MLX_EXT_HELPERS_H
#define _MLX_EXT_HELPERS_H

#include <linux/types.h>
#include <linux/kobject.h>
#include <rdma/ib_verbs.h>

/**
 * struct mlx_ext_file_ops - callbacks of the files of one directory (sysfs
 * or debugfs)
 * @show: formats file @id of @priv into @buf, a page of which at most
 *        PAGE_SIZE - 1 bytes may be used (sysfs counts a full page as an
 *        overflow); returns the length written or a negative errno.
 * @store: parses @len bytes of @buf (NUL-terminated) into file @id of @priv;
 *         returns @len or a negative errno. sysfs passes at most a page
 *         (@len may be PAGE_SIZE: a longer write arrives in page-sized
 *         pieces, each its own store); debugfs refuses writes of a page or
 *         more with -EINVAL.
 *
 * Neither is called once the directory's destroy function has returned.
 */
struct mlx_ext_file_ops {
	ssize_t (*show)(void *priv, unsigned int id, char *buf);
	ssize_t (*store)(void *priv, unsigned int id, const char *buf,
			 size_t len);
};

/**
 * struct mlx_ext_file - one file of a directory
 * @name: its name, copied
 * @mode: its permissions (0444, 0644, 0600...), permission bits only
 * @id: passed to the directory's ops to say which file is read or written
 */
struct mlx_ext_file {
	const char *name;
	umode_t mode;
	unsigned int id;
};

struct mlx_ext_kdir;

/**
 * mlx_ext_kdir_create - create sysfs directory @name below @parent with
 * @nfiles files
 *
 * All files are made here: a directory never changes after it is created,
 * so it needs no lock. Returns the directory or an ERR_PTR (-ENOMEM also
 * when the kobject cannot be added, for instance because @name exists: the
 * kernel logs why). @ops and @priv must outlive it.
 */
struct mlx_ext_kdir *mlx_ext_kdir_create(struct kobject *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv,
					 const struct mlx_ext_file *files,
					 unsigned int nfiles);

/**
 * mlx_ext_kdir_kobj - the kobject of @dir, to nest another directory in it
 */
struct kobject *mlx_ext_kdir_kobj(struct mlx_ext_kdir *dir);

/**
 * mlx_ext_kdir_destroy - remove @dir and its files, and free what the module
 * owns of it
 *
 * Waits for running callbacks; none starts afterwards, and no module code
 * runs for @dir afterwards either. Destroy subdirectories first.
 */
void mlx_ext_kdir_destroy(struct mlx_ext_kdir *dir);

struct mlx_ext_ddir;

/**
 * mlx_ext_ddir_create - create debugfs directory @name at the debugfs root
 * with @nfiles files
 *
 * Returns the directory or an ERR_PTR. @ops and @priv must outlive it.
 * Files are read through seq_file: @ops->show runs once per open-and-read,
 * however small the reader's reads; writes of a page or more are refused
 * with -EINVAL. An open file pins the module, as debugfs files must.
 */
struct mlx_ext_ddir *mlx_ext_ddir_create(const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv,
					 const struct mlx_ext_file *files,
					 unsigned int nfiles);

/**
 * mlx_ext_ddir_destroy - remove @dir and its files, and free it
 *
 * Waits for running callbacks; none starts afterwards.
 */
void mlx_ext_ddir_destroy(struct mlx_ext_ddir *dir);

/* Wrappers of static inline functions and struct device fields. */

/**
 * mlx_ext_ib_device_kobj - the kobject of @dev's struct device: the directory
 * /sys/class/infiniband/<name>/ itself
 */
struct kobject *mlx_ext_ib_device_kobj(struct ib_device *dev);

#endif /* _MLX_EXT_HELPERS_H */
