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
 * kernel logs why). @ops and @priv must outlive it. @key, static, is the
 * lockdep class of the files' active references (kernfs): one per kind of
 * directory, as the driver core has one per static attribute.
 */
struct mlx_ext_kdir *mlx_ext_kdir_create(struct kobject *parent,
					 const char *name,
					 const struct mlx_ext_file_ops *ops,
					 void *priv,
					 const struct mlx_ext_file *files,
					 unsigned int nfiles,
					 struct lock_class_key *key);

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

/**
 * mlx_ext_kdir_notify - wake poll()ers of file @id of @dir (sysfs_notify)
 * Process context; a file of another id is ignored.
 */
void mlx_ext_kdir_notify(struct mlx_ext_kdir *dir, unsigned int id);

struct mlx_ext_dwork;

/**
 * mlx_ext_dwork_create - a delayed work item that calls @fn(@priv) on
 * system_unbound_wq each time it runs, in lockdep class @key named @name
 * (both static: one per kind of work). Returns it or NULL (no memory).
 */
struct mlx_ext_dwork *mlx_ext_dwork_create(void (*fn)(void *priv), void *priv,
					   const char *name,
					   struct lock_class_key *key);

/**
 * mlx_ext_dwork_schedule - run @w in @delay_ms milliseconds, or earlier if
 * it was due earlier (a pending run that is later is brought forward).
 * Any context.
 */
void mlx_ext_dwork_schedule(struct mlx_ext_dwork *w, unsigned long delay_ms);

/**
 * mlx_ext_dwork_destroy - cancel @w, wait for a run in progress (one that
 * re-arms itself included) and free it. Nothing may schedule it
 * concurrently or afterwards.
 */
void mlx_ext_dwork_destroy(struct mlx_ext_dwork *w);

struct mlx_ext_events;

/**
 * mlx_ext_events_register - call @fn(@priv, port, event) for every
 * asynchronous event of @dev that names a port (ib_register_event_handler;
 * ib_core calls handlers from a work item, in process context). Returns the
 * handler or an ERR_PTR.
 */
struct mlx_ext_events *mlx_ext_events_register(struct ib_device *dev,
					       void (*fn)(void *priv, u32 port,
							  u32 event),
					       void *priv);

/**
 * mlx_ext_events_unregister - stop @h and free it; returns once no call of
 * its function runs (ib_core's handlers run under a rwsem that
 * unregistering takes for writing).
 */
void mlx_ext_events_unregister(struct mlx_ext_events *h);

struct mlx_ext_vf_watch;

/**
 * mlx_ext_vf_watch_register - call @fn(@priv) when the VFs of @dev's parent
 * (a simulated adapter, or a PCI PF with an SR-IOV capability) changed: a
 * simulated adapter's number, or a PCI VF added to or removed from the bus.
 * Process context; @fn must not sleep long. Returns NULL if the parent has
 * no VFs to watch, an ERR_PTR on failure.
 */
struct mlx_ext_vf_watch *mlx_ext_vf_watch_register(struct ib_device *dev,
						   void (*fn)(void *priv),
						   void *priv);

/**
 * struct mlx_ext_pci_vfs - a PCI PF's VFs as a watch sees them
 * @present: VFs of the PF on the PCI bus
 * @first_absent: the lowest VF number (pci_iov_vf_id()) not on the bus
 * @num_vfs: the SR-IOV capability's NumVFs register
 * @initial: its InitialVFs register
 * @enabled: VF Enable is set in its control register
 */
struct mlx_ext_pci_vfs {
	u16 present;
	u16 first_absent;
	u16 num_vfs;
	u16 initial;
	bool enabled;
};

/**
 * mlx_ext_vf_watch_pci_vfs - what @w, a PCI PF's watch, saw of its VFs;
 * -ENODEV if @w watches a simulated adapter (or the PF lost its SR-IOV
 * capability).
 */
int mlx_ext_vf_watch_pci_vfs(struct mlx_ext_vf_watch *w,
			     struct mlx_ext_pci_vfs *out);

/**
 * mlx_ext_ib_pci_vf_name - the PCI name (pci_name()) of VF @vf_id of the
 * PCI PF that is @dev's parent, in @name (@len bytes with the NUL); -ENODEV
 * if there is no such VF on the bus; -ENAMETOOLONG if the name does not fit.
 */
int mlx_ext_ib_pci_vf_name(struct ib_device *dev, u16 vf_id, char *name,
			   size_t len);

/**
 * mlx_ext_vf_watch_unregister - stop @w and free it; returns once no call
 * of its @fn runs.
 */
void mlx_ext_vf_watch_unregister(struct mlx_ext_vf_watch *w);

/**
 * mlx_ext_sm_guid_assign - the module parameter sm_guid_assign (mlx_ext.ko)
 */
bool mlx_ext_sm_guid_assign(void);

/**
 * mlx_ext_sa_register - register mlx_ext.ko's ib_sa client (module init);
 * -EBUSY if it is registered already (it is one static client)
 */
int mlx_ext_sa_register(void);

/**
 * mlx_ext_sa_unregister - unregister it (module exit, after every device's
 * VF GUID tables are gone): waits for the queries made through it
 */
void mlx_ext_sa_unregister(void);

/**
 * mlx_ext_sa_client - the client while it is registered, NULL otherwise
 */
struct ib_sa_client *mlx_ext_sa_client(void);

/**
 * mlx_ext_guid_notify - tell the notifiers of mlx_ext.h a GUID-change event
 * (rust/helpers/export.c); process context, may sleep
 */
void mlx_ext_guid_notify(struct ib_device *dev, u32 port, u16 function,
			 bool up, u32 count);

struct mlx_ext_ddir;

/**
 * mlx_ext_ddir_create - create debugfs directory @name in @parent (the
 * debugfs root if NULL) with @nfiles files
 *
 * Returns the directory or an ERR_PTR. @ops and @priv must outlive it, and
 * @parent must outlive it too (destroy children first).
 * Files are read through seq_file: @ops->show runs once per open-and-read,
 * however small the reader's reads; writes of a page or more are refused
 * with -EINVAL. An open file pins the module, as debugfs files must.
 */
struct mlx_ext_ddir *mlx_ext_ddir_create(struct mlx_ext_ddir *parent,
					 const char *name,
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

/**
 * mlx_ext_ib_device_set_parent - make @parent the parent of @dev's struct
 * device, before ib_register_device()
 */
void mlx_ext_ib_device_set_parent(struct ib_device *dev, struct device *parent);

/**
 * mlx_ext_ah_attr_dlid - the destination LID of an InfiniBand address
 * (rdma_ah_get_dlid)
 */
u32 mlx_ext_ah_attr_dlid(const struct rdma_ah_attr *attr);

/**
 * struct mlx_ext_ah - what a driver of rust/ib/provider/driver keeps of an InfiniBand
 * address handle (no GRH: the simulated fabric routes by LID)
 * @dlid: destination LID
 * @sl: service level
 * @port: the local port it leaves from
 * @grh: whether the address asked for a GRH
 */
struct mlx_ext_ah {
	u32 dlid;
	u32 port;
	u8 sl;
	bool grh;
};

/**
 * mlx_ext_ah_init_read - the address @init asks an address handle for
 * Returns -EINVAL unless it is an InfiniBand address.
 */
int mlx_ext_ah_init_read(const struct rdma_ah_init_attr *init,
			 struct mlx_ext_ah *out);

/**
 * mlx_ext_ah_attr_write - fill @attr (zeroed by rdma_query_ah) with @ah
 */
void mlx_ext_ah_attr_write(struct rdma_ah_attr *attr,
			   const struct mlx_ext_ah *ah);

/**
 * mlx_ext_ah_device - the device of address handle @ah
 */
struct ib_device *mlx_ext_ah_device(const struct ib_ah *ah);

/**
 * mlx_ext_spin_lock_irq_nested - spin_lock(@lock) with interrupts off; they
 * come back on when the last lock taken this way on the CPU is released,
 * in any order (rust/ib/sync.rs, IrqSpinLock)
 */
void mlx_ext_spin_lock_irq_nested(spinlock_t *lock);

/**
 * mlx_ext_spin_unlock_irq_nested - release @lock, taken by
 * mlx_ext_spin_lock_irq_nested()
 */
void mlx_ext_spin_unlock_irq_nested(spinlock_t *lock);

/**
 * mlx_ext_spin_trylock_irq_nested - mlx_ext_spin_lock_irq_nested() if @lock
 * is free: true if it was taken, false (and interrupts as they were) if not
 */
bool mlx_ext_spin_trylock_irq_nested(spinlock_t *lock);

/** mlx_ext_spin_assert_held - lockdep_assert_held(@lock) */
void mlx_ext_spin_assert_held(spinlock_t *lock);

/** mlx_ext_irqs_disabled - irqs_disabled() */
bool mlx_ext_irqs_disabled(void);

/** mlx_ext_ktime_get_ns - ktime_get_ns(): CLOCK_MONOTONIC in nanoseconds */
u64 mlx_ext_ktime_get_ns(void);

struct workqueue_struct;

/**
 * mlx_ext_alloc_unbound_workqueue - alloc_workqueue("%s", WQ_UNBOUND, 0,
 * @name): a function in 6.12, a macro over alloc_workqueue_noprof() since
 * memory allocation profiling reached it (7.3 workqueue.h:518-519)
 */
struct workqueue_struct *mlx_ext_alloc_unbound_workqueue(const char *name);

struct ib_device;

/**
 * mlx_ext_ib_alloc_device - _ib_alloc_device(@size) in the initial network
 * namespace, as ib_alloc_device() does: 7.x added the namespace argument
 * ("RDMA/core: Extend RDMA device registration to be net namespace aware")
 */
struct ib_device *mlx_ext_ib_alloc_device(size_t size);

struct completion;

/** mlx_ext_init_completion - init_completion() */
void mlx_ext_init_completion(struct completion *c);

/**
 * mlx_ext_wait_for_completion_ms - wait_for_completion_timeout() for @ms
 * milliseconds; whether @c was completed. Process context; sleeps.
 */
bool mlx_ext_wait_for_completion_ms(struct completion *c, unsigned int ms);

/*
 * The client side of verbs, for mlx_ext's ULP API (rust/ib/qp.rs, rust/ib/export.rs): the
 * static inline wrappers of include/rdma/ib_verbs.h.
 */

/**
 * mlx_ext_rs_post_atomic - mlx_ext_post_atomic() once rust/helpers/export.c
 * checked the caller's header (Rust, rust/ib/export.rs); @gfp is the caller's,
 * unchanged
 */
struct mlx_ext_qp;
struct mlx_ext_atomic;
struct mlx_ext_caps;
int mlx_ext_rs_post_atomic(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			   gfp_t gfp);

/**
 * mlx_ext_sync_pool_create - make the slab cache and the mempool of the
 * waiters of mlx_ext_atomic() (rust/helpers/export.c), when the module
 * loads; 0, -ENOMEM, or -EBUSY if they exist already
 */
int mlx_ext_sync_pool_create(void);

/**
 * mlx_ext_sync_pool_destroy - destroy them, at the module's exit, once no
 * operation is left
 */
void mlx_ext_sync_pool_destroy(void);

/**
 * mlx_ext_rs_query_caps - mlx_ext_query_caps() once rust/helpers/export.c
 * checked the caller's header (rust/ib/export.rs).
 */
int mlx_ext_rs_query_caps(struct ib_device *dev, struct mlx_ext_caps *caps);

/*
 * The unversioned calls of API 1.2 and earlier, which ULPs built against
 * those headers call (rust/helpers/export.c); the public header's macros of
 * the same names are kept out by the parentheses.
 */
int (mlx_ext_query_caps)(struct ib_device *dev, struct mlx_ext_caps *caps);
int (mlx_ext_post_atomic)(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op,
			  gfp_t gfp);
int (mlx_ext_atomic)(struct mlx_ext_qp *qp, struct mlx_ext_atomic *op);

/**
 * mlx_ext_rs_abi_check - 0 if a ULP's call built with MLX_EXT_API_VERSION
 * @version and sizeof @size of a structure that is @ours bytes here may go
 * on, else why not (1 another major version, 2 a newer minor one, 3 another
 * size): core/src/api.rs, abi_check.
 */
int mlx_ext_rs_abi_check(u32 version, size_t size, size_t ours);

/**
 * mlx_ext_rs_detach_qp - mlx_ext_detach_qp() once rust/helpers/export.c
 * checked its context (Rust, rust/ib/export.rs)
 */
void mlx_ext_rs_detach_qp(struct mlx_ext_qp *qp);

/**
 * mlx_ext_rs_destroy_qp - mlx_ext_destroy_qp() once rust/helpers/export.c
 * checked its context (Rust, rust/ib/export.rs)
 */
void mlx_ext_rs_destroy_qp(struct mlx_ext_qp *qp);

/**
 * mlx_ext_rs_qp_owned - whether mlx_ext made @qp (mlx_ext_create_qp()), so
 * that mlx_ext_destroy_qp() destroys and drains it rather than detach it
 * (rust/ib/export.rs)
 */
bool mlx_ext_rs_qp_owned(struct mlx_ext_qp *qp);

/** mlx_ext_rcu_read_lock - rcu_read_lock() */
void mlx_ext_rcu_read_lock(void);

/** mlx_ext_rcu_read_unlock - rcu_read_unlock() */
void mlx_ext_rcu_read_unlock(void);

/**
 * mlx_ext_ib_device_get - another registration reference to @dev, on which
 * the caller holds one (ib_device_try_get(), which cannot fail then)
 */
void mlx_ext_ib_device_get(struct ib_device *dev);

/** mlx_ext_ib_get_client_data - ib_get_client_data() */
void *mlx_ext_ib_get_client_data(struct ib_device *dev, struct ib_client *client);

/** mlx_ext_ib_create_qp - ib_create_qp(), named for this module */
struct ib_qp *mlx_ext_ib_create_qp(struct ib_pd *pd,
				   struct ib_qp_init_attr *attr);

/** mlx_ext_ib_destroy_qp - ib_destroy_qp() */
int mlx_ext_ib_destroy_qp(struct ib_qp *qp);

/** mlx_ext_ib_post_send - ib_post_send() of the one work request @wr */
int mlx_ext_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr);

/**
 * mlx_ext_ib_cq_usable - whether @cq delivers completions to ib_cqe done
 * callbacks by itself: made by ib_alloc_cq() or the CQ pool, and not
 * IB_POLL_DIRECT
 */
bool mlx_ext_ib_cq_usable(const struct ib_cq *cq);

/**
 * mlx_ext_ib_cq_cqe_model - whether @cq is in the ib_cqe model: from
 * ib_alloc_cq() or the CQ pool, in any polling context (IB_POLL_DIRECT
 * included: completions reach the ib_cqe when its owner polls)
 */
bool mlx_ext_ib_cq_cqe_model(const struct ib_cq *cq);

/**
 * mlx_ext_ib_cq_quiesce - waits until no ib_core poll handler of @cq still
 * runs, before its driver destroys it (a race of ib_poll_handler() with
 * ib_free_cq(); the helper says why). Sleeps.
 */
void mlx_ext_ib_cq_quiesce(struct ib_cq *cq);

/**
 * mlx_ext_ib_alloc_chunk - kmalloc(@size, @gfp), for a request pool's chunk:
 * with the flags a ULP passed to mlx_ext_post_atomic() but its zone and
 * page modifiers (__GFP_DMA included), which the kernel crate's allocation
 * flags cannot carry (they have no constructor from a gfp_t). kmalloc aligns it to @align, a power
 * of two dividing @size; this is checked (a warning and NULL if not). NULL
 * if it fails
 */
void *mlx_ext_ib_alloc_chunk(size_t size, size_t align, gfp_t gfp);

/** mlx_ext_ib_free_chunk - kfree() what mlx_ext_ib_alloc_chunk() gave */
void mlx_ext_ib_free_chunk(void *chunk);

/** mlx_ext_ib_gfp_can_sleep - gfpflags_allow_blocking(@gfp) */
bool mlx_ext_ib_gfp_can_sleep(gfp_t gfp);

/**
 * mlx_ext_ib_dma_map_replies - map the @len bytes of reply buffers at @buf
 * for @dev to write (DMA_FROM_DEVICE) at *@addr, once for all their uses;
 * 0 or -ENOMEM
 */
int mlx_ext_ib_dma_map_replies(struct ib_device *dev, void *buf, size_t len,
			       u64 *addr);

/** mlx_ext_ib_dma_unmap_replies - undo mlx_ext_ib_dma_map_replies() */
void mlx_ext_ib_dma_unmap_replies(struct ib_device *dev, u64 addr, size_t len);

/**
 * mlx_ext_ib_dma_sync_reply - hand the 8-byte reply at @addr (inside a
 * mapping of mlx_ext_ib_dma_map_replies()) to the device before a work
 * request that writes it is posted (@for_cpu false), or back to the CPU
 * after its completion (@for_cpu true)
 */
void mlx_ext_ib_dma_sync_reply(struct ib_device *dev, u64 addr, bool for_cpu);

/*
 * The simulator's bus (mlx_ext_sim.ko only): /sys/bus/mlx_ext_sim/ with the
 * control files new_device and del_device, and one struct device on it per
 * simulated adapter, the parent of its ib_device.
 */

/**
 * struct mlx_ext_simbus_ops - the bus's control files
 * @new_device: takes a write of @len bytes of @buf (NUL-terminated) to
 *              new_device; returns @len or a negative errno.
 * @del_device: the same for del_device.
 * @parent_removed: the PCI function @parent is being unbound from the
 *                  simulator's PCI driver (or removed): remove every adapter
 *                  whose parent it is before returning.
 *
 * None is called once mlx_ext_simbus_unregister() has returned.
 */
struct mlx_ext_simbus_ops {
	ssize_t (*new_device)(void *priv, const char *buf, size_t len);
	ssize_t (*del_device)(void *priv, const char *buf, size_t len);
	void (*parent_removed)(void *priv, struct device *parent);
};

/**
 * mlx_ext_simbus_register - register the bus "mlx_ext_sim"; @ops are called
 * with @priv, which must outlive the registration. -EBUSY if the bus is
 * registered already (it is one static bus_type).
 */
int mlx_ext_simbus_register(const struct mlx_ext_simbus_ops *ops, void *priv);

/**
 * mlx_ext_simbus_unregister - unregister the bus, after waiting for running
 * control writes and for the release of every device made on it
 *
 * Delete the devices first: this waits for their last reference to go.
 */
void mlx_ext_simbus_unregister(void);

/**
 * mlx_ext_simdev_add - register device "mlxsim<@id>" on the bus, with
 * @num_vfs VFs in its struct mlx_ext_sim_info (include/mlx_ext/sim.h)
 *
 * Returns it or an ERR_PTR. Its memory is freed by its release, which runs
 * when the last reference is dropped after mlx_ext_simdev_del().
 */
struct device *mlx_ext_simdev_add(unsigned int id, u16 num_vfs);

/**
 * mlx_ext_simpci_get - the PCI function named @name (pci_name()), with a
 * reference, if it is bound to the simulator's PCI driver and not being
 * unbound: -ENOENT if there is none of that name, -ENODEV if it is not
 * bound to the simulator. Call it under the lock parent_removed takes, and
 * keep that lock until the adapter is made. Release it with
 * mlx_ext_simpci_put().
 */
struct device *mlx_ext_simpci_get(const char *name);

/**
 * mlx_ext_simpci_put - drop the reference mlx_ext_simpci_get() took
 */
void mlx_ext_simpci_put(struct device *dev);

/**
 * mlx_ext_simnet_add - register an IPoIB netdev, "<device>ib<port>", on port
 * @port of the registered device @ca whose parent is a PCI PF
 * (rust/helpers/simnet.c): its VF operations call ib_set_vf_guid() and
 * ib_get_vf_guid() on @ca, as ib_ipoib's do. Returns it or an ERR_PTR
 * (-EINVAL if the parent is not a PCI function). Process context; takes
 * RTNL. Delete it with mlx_ext_simnet_del() before @ca is unregistered.
 */
void *mlx_ext_simnet_add(struct ib_device *ca, u32 port);

/**
 * mlx_ext_simnet_rtnl_held - whether the calling task holds RTNL, as the
 * callers of a driver's set_vf_guid and get_vf_guid guarantee (lockdep's
 * answer; without lockdep, whether any task does); warns once if not
 * (rust/helpers/simnet.c)
 */
bool mlx_ext_simnet_rtnl_held(void);

/** mlx_ext_simnet_del - unregister and free what mlx_ext_simnet_add() made */
void mlx_ext_simnet_del(void *netdev);

/**
 * mlx_ext_ib_sim_info - the SR-IOV facts of @dev if its parent is a
 * simulated adapter: its number of VFs in *@num_vfs and its PF's PCI-style
 * name in @name (@len bytes with the NUL); -ENODEV if the parent is not on
 * the simulator's bus, -EPROTO if it carries no valid struct
 * mlx_ext_sim_info. Call while @dev is registered (its parent, and so the
 * simulator, are then alive).
 */
int mlx_ext_ib_sim_info(struct ib_device *dev, u16 *num_vfs, char *name,
			size_t len);

/**
 * mlx_ext_vf_guid_kind - 0 for IFLA_VF_IB_NODE_GUID, 1 for
 * IFLA_VF_IB_PORT_GUID (the types of ib_set_vf_guid), -1 for any other
 */
int mlx_ext_vf_guid_kind(int type);

/**
 * mlx_ext_ifla_vf_guid_set - sets the GUID of @g (what a driver's
 * get_vf_guid answers; bindgen sees the uapi struct as opaque)
 */
void mlx_ext_ifla_vf_guid_set(struct ifla_vf_guid *g, u64 guid);

/**
 * mlx_ext_ib_set_vf_guid - ib_set_vf_guid(@dev, @vf, @port, @guid,
 * IFLA_VF_IB_PORT_GUID if @port_guid, else IFLA_VF_IB_NODE_GUID):
 * -EOPNOTSUPP if the driver has no set_vf_guid
 */
int mlx_ext_ib_set_vf_guid(struct ib_device *dev, int vf, u32 port, u64 guid,
			   bool port_guid);

/**
 * mlx_ext_ib_get_vf_guid - ib_get_vf_guid(): VF @vf's node and port GUIDs
 * on @port into @node_guid and @port_guid; -EOPNOTSUPP if the driver has no
 * get_vf_guid
 */
int mlx_ext_ib_get_vf_guid(struct ib_device *dev, int vf, u32 port,
			   u64 *node_guid, u64 *port_guid);

/**
 * mlx_ext_ib_port_gid - GID @index of @port of @dev, as gids/<n> of the
 * VF GUID tree shows it, into @gid (16 bytes): ib_core's cached copy of
 * the port's table (rdma_query_gid), or for an entry it has not (no GUID,
 * or for a moment while ib_core refreshes the table) the port's subnet
 * prefix and zeros; -EINVAL past the port's table only
 */
int mlx_ext_ib_port_gid(struct ib_device *dev, u32 port, u32 index, u8 *gid);

/**
 * mlx_ext_ib_port_guid - the GUID of InfiniBand @port of @dev, the lower
 * half of its GID 0 in ib_core's cache, into @guid (host order); waits out
 * ib_core's refresh of the table (up to about 20 ms). Sleeps.
 */
int mlx_ext_ib_port_guid(struct ib_device *dev, u32 port, u64 *guid);

/**
 * mlx_ext_ib_pci_vfs - the number of VFs of @dev's parent if it is a PCI
 * physical function with an SR-IOV capability and a TotalVFs above 0, its
 * pci_name() copied into @name (@len bytes at most, NUL included); -ENODEV
 * if it is not PCI, is a VF or can have no VFs; -ENAMETOOLONG if the name
 * does not fit
 */
int mlx_ext_ib_pci_vfs(struct ib_device *dev, char *name, size_t len);

/**
 * mlx_ext_ib_port_count - the last port number of @dev (rdma_end_port())
 */
u32 mlx_ext_ib_port_count(struct ib_device *dev);

/**
 * mlx_ext_ib_port_is_ib - whether @port of @dev is InfiniBand (not RoCE or
 * iWARP)
 */
bool mlx_ext_ib_port_is_ib(struct ib_device *dev, u32 port);

/**
 * mlx_ext_ib_port_gid_tbl_len - the GID table length of @port of @dev, as
 * its driver reported it at registration (for an InfiniBand port, the
 * PortInfo GUIDCap: mlx4's and mlx5's get_port_immutable take it from
 * their query_port)
 */
u32 mlx_ext_ib_port_gid_tbl_len(struct ib_device *dev, u32 port);

/**
 * mlx_ext_simdev_del - unregister a device made by mlx_ext_simdev_add()
 */
void mlx_ext_simdev_del(struct device *dev);

#endif /* _MLX_EXT_HELPERS_H */
