// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs directories whose files are served by Rust callbacks.
 *
 * Each directory is a kobject; each file an attribute carrying the id that
 * the Rust side uses to tell its files apart. The kobject's release frees
 * everything, so a directory is gone when its last reference is.
 */

#include <linux/err.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <mlx_ext/helpers.h>

struct mlx_ext_kattr {
	struct attribute attr;
	unsigned int id;
	struct list_head node;
};

struct mlx_ext_kdir {
	struct kobject kobj;
	const struct mlx_ext_file_ops *ops;
	void *priv;
	struct list_head attrs;
};

static struct mlx_ext_kdir *to_kdir(struct kobject *kobj)
{
	return container_of(kobj, struct mlx_ext_kdir, kobj);
}

static ssize_t kdir_show(struct kobject *kobj, struct attribute *attr,
			 char *buf)
{
	struct mlx_ext_kdir *dir = to_kdir(kobj);
	struct mlx_ext_kattr *a = container_of(attr, struct mlx_ext_kattr, attr);

	return dir->ops->show(dir->priv, a->id, buf);
}

static ssize_t kdir_store(struct kobject *kobj, struct attribute *attr,
			  const char *buf, size_t len)
{
	struct mlx_ext_kdir *dir = to_kdir(kobj);
	struct mlx_ext_kattr *a = container_of(attr, struct mlx_ext_kattr, attr);

	if (!dir->ops->store)
		return -EPERM;
	return dir->ops->store(dir->priv, a->id, buf, len);
}

static const struct sysfs_ops kdir_sysfs_ops = {
	.show = kdir_show,
	.store = kdir_store,
};

static void kdir_release(struct kobject *kobj)
{
	struct mlx_ext_kdir *dir = to_kdir(kobj);
	struct mlx_ext_kattr *a, *tmp;

	list_for_each_entry_safe(a, tmp, &dir->attrs, node) {
		kfree_const(a->attr.name);
		kfree(a);
	}
	kfree(dir);
}

static const struct kobj_type kdir_ktype = {
	.release = kdir_release,
	.sysfs_ops = &kdir_sysfs_ops,
};

struct mlx_ext_kdir *mlx_ext_kdir_create(struct kobject *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv)
{
	struct mlx_ext_kdir *dir;
	int ret;

	dir = kzalloc(sizeof(*dir), GFP_KERNEL);
	if (!dir)
		return ERR_PTR(-ENOMEM);
	dir->ops = ops;
	dir->priv = priv;
	INIT_LIST_HEAD(&dir->attrs);
	ret = kobject_init_and_add(&dir->kobj, &kdir_ktype, parent, "%s", name);
	if (ret) {
		/* The release callback frees dir. */
		kobject_put(&dir->kobj);
		return ERR_PTR(ret);
	}
	return dir;
}

int mlx_ext_kdir_add_file(struct mlx_ext_kdir *dir, const char *name,
			  umode_t mode, unsigned int id)
{
	struct mlx_ext_kattr *a;
	int ret;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->attr.name = kstrdup_const(name, GFP_KERNEL);
	if (!a->attr.name) {
		kfree(a);
		return -ENOMEM;
	}
	/* A dynamically allocated attribute needs its lockdep key set up. */
	sysfs_attr_init(&a->attr);
	a->attr.mode = mode;
	a->id = id;
	ret = sysfs_create_file(&dir->kobj, &a->attr);
	if (ret) {
		kfree_const(a->attr.name);
		kfree(a);
		return ret;
	}
	list_add_tail(&a->node, &dir->attrs);
	return 0;
}

struct kobject *mlx_ext_kdir_kobj(struct mlx_ext_kdir *dir)
{
	return &dir->kobj;
}

void mlx_ext_kdir_destroy(struct mlx_ext_kdir *dir)
{
	/* Removing the files waits for callbacks in progress (kernfs drain). */
	kobject_del(&dir->kobj);
	kobject_put(&dir->kobj);
}
