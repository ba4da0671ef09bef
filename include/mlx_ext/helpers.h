/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between mlx_ext's Rust code and its C helpers.
 *
 * The 6.12 kernel crate has no sysfs abstraction and bindgen cannot call
 * static inline functions, so this small C layer provides both. Only the
 * Rust `ib` abstraction layer (rust/ib/) calls these functions.
 */
#ifndef _MLX_EXT_HELPERS_H
#define _MLX_EXT_HELPERS_H

#include <linux/types.h>
#include <linux/kobject.h>
#include <rdma/ib_verbs.h>

/**
 * struct mlx_ext_file_ops - callbacks of the files of one directory (sysfs
 * or debugfs)
 * @show: formats file @id of @priv into @buf (PAGE_SIZE bytes); returns the
 *        length written or a negative errno.
 * @store: parses @len bytes of @buf into file @id of @priv; returns @len or
 *         a negative errno. May be NULL when no file is writable.
 *
 * Neither is called once mlx_ext_kdir_destroy() has returned.
 */
struct mlx_ext_file_ops {
	ssize_t (*show)(void *priv, unsigned int id, char *buf);
	ssize_t (*store)(void *priv, unsigned int id, const char *buf,
			 size_t len);
};

struct mlx_ext_kdir;

/**
 * mlx_ext_kdir_create - create the sysfs directory @name below @parent
 *
 * Returns the directory or an ERR_PTR. @ops and @priv must outlive it.
 */
struct mlx_ext_kdir *mlx_ext_kdir_create(struct kobject *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv);

/**
 * mlx_ext_kdir_add_file - add file @name with @mode (0444, 0644...) to @dir
 *
 * Reads and writes of the file call @dir's ops with @id. Returns 0 or a
 * negative errno; on error @dir is unchanged.
 */
int mlx_ext_kdir_add_file(struct mlx_ext_kdir *dir, const char *name,
			  umode_t mode, unsigned int id);

/**
 * mlx_ext_kdir_kobj - the kobject of @dir, to nest another directory in it
 */
struct kobject *mlx_ext_kdir_kobj(struct mlx_ext_kdir *dir);

/**
 * mlx_ext_kdir_destroy - remove @dir, its files, and free it
 *
 * Waits for running callbacks; none starts afterwards. Subdirectories must be
 * destroyed first.
 */
void mlx_ext_kdir_destroy(struct mlx_ext_kdir *dir);

struct mlx_ext_ddir;

/**
 * mlx_ext_ddir_create - create debugfs directory @name at the debugfs root
 *
 * Returns the directory or an ERR_PTR. @ops and @priv must outlive it.
 * Files are read through seq_file: @ops->show runs once per open-and-read,
 * however small the reader's reads.
 */
struct mlx_ext_ddir *mlx_ext_ddir_create(const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv);

/**
 * mlx_ext_ddir_add_file - add file @name with @mode to @dir, served as @id
 *
 * Writes longer than a page are refused with -EINVAL.
 */
int mlx_ext_ddir_add_file(struct mlx_ext_ddir *dir, const char *name,
			  umode_t mode, unsigned int id);

/**
 * mlx_ext_ddir_destroy - remove @dir and its files, and free it
 *
 * Waits for running callbacks; none starts afterwards.
 */
void mlx_ext_ddir_destroy(struct mlx_ext_ddir *dir);

/* Wrappers of static inline functions. */
const char *mlx_ext_ib_device_name(struct ib_device *dev);
struct kobject *mlx_ext_ib_device_kobj(struct ib_device *dev);

#endif /* _MLX_EXT_HELPERS_H */
