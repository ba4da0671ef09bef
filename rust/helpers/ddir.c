// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs directories whose files are served by Rust callbacks, for test
 * interfaces (no stable ABI, like netdevsim's).
 */

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <mlx_ext/helpers.h>

struct mlx_ext_dfile {
	struct mlx_ext_ddir *dir;
	unsigned int id;
	struct list_head node;
};

struct mlx_ext_ddir {
	struct dentry *dentry;
	const struct mlx_ext_file_ops *ops;
	void *priv;
	struct list_head files;
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
		seq_write(m, page, len);
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

	if (!f->dir->ops->store)
		return -EPERM;
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

struct mlx_ext_ddir *mlx_ext_ddir_create(const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv)
{
	struct mlx_ext_ddir *dir;

	dir = kzalloc(sizeof(*dir), GFP_KERNEL);
	if (!dir)
		return ERR_PTR(-ENOMEM);
	dir->ops = ops;
	dir->priv = priv;
	INIT_LIST_HEAD(&dir->files);
	dir->dentry = debugfs_create_dir(name, NULL);
	if (IS_ERR(dir->dentry)) {
		long err = PTR_ERR(dir->dentry);

		kfree(dir);
		return ERR_PTR(err);
	}
	return dir;
}

int mlx_ext_ddir_add_file(struct mlx_ext_ddir *dir, const char *name,
			  umode_t mode, unsigned int id)
{
	struct mlx_ext_dfile *f;
	struct dentry *d;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->dir = dir;
	f->id = id;
	d = debugfs_create_file(name, mode, dir->dentry, f, &dfile_fops);
	if (IS_ERR(d)) {
		kfree(f);
		return PTR_ERR(d);
	}
	list_add_tail(&f->node, &dir->files);
	return 0;
}

void mlx_ext_ddir_destroy(struct mlx_ext_ddir *dir)
{
	struct mlx_ext_dfile *f, *tmp;

	/* Waits for file operations in progress (debugfs file proxy). */
	debugfs_remove(dir->dentry);
	list_for_each_entry_safe(f, tmp, &dir->files, node)
		kfree(f);
	kfree(dir);
}
