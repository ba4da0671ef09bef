// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs directories whose files are served by Rust callbacks.
 *
 * A directory is a kobject made by kobject_create_and_add(), so its release
 * is built-in kernel code: nothing of the module runs when its last
 * reference goes, however late. Its files are kobj_attributes owned by the
 * module, carrying the id the Rust side tells its files apart by; they are
 * freed by mlx_ext_kdir_destroy() once kobject_del() has removed them, which
 * waits for callbacks in progress (kernfs drains active references).
 */

#include <linux/err.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <mlx_ext/helpers.h>

struct mlx_ext_kattr {
	struct kobj_attribute kattr;
	struct mlx_ext_kdir *dir;
	unsigned int id;
};

struct mlx_ext_kdir {
	struct kobject *kobj;
	const struct mlx_ext_file_ops *ops;
	void *priv;
	unsigned int nattrs;
	struct mlx_ext_kattr attrs[] __counted_by(nattrs);
};

static struct mlx_ext_kattr *to_kattr(struct kobj_attribute *attr)
{
	return container_of(attr, struct mlx_ext_kattr, kattr);
}

static ssize_t kattr_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct mlx_ext_kattr *a = to_kattr(attr);

	return a->dir->ops->show(a->dir->priv, a->id, buf);
}

static ssize_t kattr_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t len)
{
	struct mlx_ext_kattr *a = to_kattr(attr);

	return a->dir->ops->store(a->dir->priv, a->id, buf, len);
}

static void kdir_free(struct mlx_ext_kdir *dir)
{
	unsigned int i;

	for (i = 0; i < dir->nattrs; i++)
		kfree_const(dir->attrs[i].kattr.attr.name);
	kfree(dir);
}

struct mlx_ext_kdir *mlx_ext_kdir_create(struct kobject *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv,
					 const struct mlx_ext_file *files,
					 unsigned int nfiles,
					 struct lock_class_key *key)
{
	struct mlx_ext_kdir *dir;
	unsigned int i;
	int ret;

	dir = kzalloc(struct_size(dir, attrs, nfiles), GFP_KERNEL);
	if (!dir)
		return ERR_PTR(-ENOMEM);
	dir->ops = ops;
	dir->priv = priv;
	dir->nattrs = nfiles;
	for (i = 0; i < nfiles; i++) {
		struct mlx_ext_kattr *a = &dir->attrs[i];

		a->kattr.attr.name = kstrdup_const(files[i].name, GFP_KERNEL);
		if (!a->kattr.attr.name) {
			kdir_free(dir);
			return ERR_PTR(-ENOMEM);
		}
		/*
		 * A dynamically allocated attribute needs a static lockdep key:
		 * the caller's, one per kind of directory. (sysfs_attr_init()
		 * here would give every file of the module one class, and a
		 * store removing other files would read as recursion.)
		 */
#ifdef CONFIG_DEBUG_LOCK_ALLOC
		a->kattr.attr.key = key;
#endif
		a->kattr.attr.mode = files[i].mode;
		a->kattr.show = kattr_show;
		a->kattr.store = kattr_store;
		a->dir = dir;
		a->id = files[i].id;
	}
	dir->kobj = kobject_create_and_add(name, parent);
	if (!dir->kobj) {
		kdir_free(dir);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < nfiles; i++) {
		ret = sysfs_create_file(dir->kobj, &dir->attrs[i].kattr.attr);
		if (ret) {
			/* Removes the files made so far with the directory. */
			kobject_del(dir->kobj);
			kobject_put(dir->kobj);
			kdir_free(dir);
			return ERR_PTR(ret);
		}
	}
	return dir;
}

struct kobject *mlx_ext_kdir_kobj(struct mlx_ext_kdir *dir)
{
	return dir->kobj;
}

void mlx_ext_kdir_destroy(struct mlx_ext_kdir *dir)
{
	/* Removing the files waits for callbacks in progress (kernfs drain). */
	kobject_del(dir->kobj);
	/* The release, whenever it runs, is dynamic_kobj_release (lib/kobject.c). */
	kobject_put(dir->kobj);
	kdir_free(dir);
}

void mlx_ext_kdir_notify(struct mlx_ext_kdir *dir, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < dir->nattrs; i++) {
		if (dir->attrs[i].id == id) {
			sysfs_notify(dir->kobj, NULL, dir->attrs[i].kattr.attr.name);
			return;
		}
	}
}
