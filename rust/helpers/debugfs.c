// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs directories whose files are served by Rust callbacks, for test
 * interfaces (no stable ABI, like netdevsim's).
 *
 * The file operations have .owner = THIS_MODULE: an open file pins the
 * module, so the module's open/write/show code cannot go away under it.
 * debugfs_remove() waits for operations in progress, and debugfs's file
 * proxy refuses new ones after it (-EIO), so the files' private data can be
 * freed as soon as it returns.
 */

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <mlx_ext/helpers.h>

struct mlx_ext_dfile {
	struct mlx_ext_ddir *dir;
	unsigned int id;
};

struct mlx_ext_ddir {
	struct dentry *dentry;
	const struct mlx_ext_file_ops *ops;
	void *priv;
	unsigned int nfiles;
	struct mlx_ext_dfile files[] __counted_by(nfiles);
};

static int dfile_show(struct seq_file *m, void *unused)
{
	struct mlx_ext_dfile *f = m->private;
	char *page;
	ssize_t len;

	page = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	len = f->dir->ops->show(f->dir->priv, f->id, page);
	if (len > 0)
		seq_write(m, page, min_t(ssize_t, len, PAGE_SIZE - 1));
	kfree(page);
	return len < 0 ? len : 0;
}

static int dfile_open(struct inode *inode, struct file *file)
{
	return single_open(file, dfile_show, inode->i_private);
}

static ssize_t dfile_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct mlx_ext_dfile *f = m->private;
	ssize_t ret;
	char *buf;

	if (len >= PAGE_SIZE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = f->dir->ops->store(f->dir->priv, f->id, buf, len);
	kfree(buf);
	return ret;
}

static const struct file_operations dfile_fops = {
	.owner = THIS_MODULE,
	.open = dfile_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = dfile_write,
	.release = single_release,
};

struct mlx_ext_ddir *mlx_ext_ddir_create(struct mlx_ext_ddir *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv,
					 const struct mlx_ext_file *files,
					 unsigned int nfiles)
{
	struct mlx_ext_ddir *dir;
	struct dentry *d;
	unsigned int i;
	long err;

	dir = kzalloc(struct_size(dir, files, nfiles), GFP_KERNEL);
	if (!dir)
		return ERR_PTR(-ENOMEM);
	dir->ops = ops;
	dir->priv = priv;
	dir->nfiles = nfiles;
	dir->dentry = debugfs_create_dir(name, parent ? parent->dentry : NULL);
	if (IS_ERR(dir->dentry)) {
		err = PTR_ERR(dir->dentry);
		goto free;
	}
	for (i = 0; i < nfiles; i++) {
		dir->files[i].dir = dir;
		dir->files[i].id = files[i].id;
		d = debugfs_create_file(files[i].name, files[i].mode,
					dir->dentry, &dir->files[i],
					&dfile_fops);
		if (IS_ERR(d)) {
			err = PTR_ERR(d);
			debugfs_remove(dir->dentry);
			goto free;
		}
	}
	return dir;
free:
	kfree(dir);
	return ERR_PTR(err);
}

void mlx_ext_ddir_destroy(struct mlx_ext_ddir *dir)
{
	/* Waits for file operations in progress (debugfs file proxy). */
	debugfs_remove(dir->dentry);
	kfree(dir);
}
