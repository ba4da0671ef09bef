/* SPDX-License-Identifier: GPL-2.0 */
/* What bindgen turns into rust/ib/bindings_generated.rs. */
#include <linux/kobject.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_cache.h>
#include <mlx_ext/helpers.h>
#include <mlx_ext/mlx_ext.h>
#include <mlx_ext/sim.h>
#include <linux/delay.h>
#include <linux/workqueue.h>
