// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_caps: the smallest ULP of mlx_ext, built the way a ULP outside
 * this tree builds, against the headers and Module.symvers that `make
 * headers_install` installed (samples/mlx_ext_caps/Kbuild). It is an
 * ib_client and logs, for each RDMA device, what mlx_ext says of its
 * atomics, and the mlx_ext release it was built against.
 */

#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>
#include <mlx_ext/version.h>

static const char *const modes[] = { "native", "emulated", "unavailable" };

static int caps_add(struct ib_device *dev)
{
	struct mlx_ext_caps caps = {};
	int ret;

	ret = mlx_ext_query_caps(dev, &caps);
	if (ret) {
		dev_info(&dev->dev, "mlx_ext_caps: no record (%d)\n", ret);
		return 0;
	}
	dev_info(&dev->dev,
		 "mlx_ext_caps: atomic_cap %u masked_atomic_cap %u masked atomics %s\n",
		 caps.atomic_cap, caps.masked_atomic_cap,
		 caps.masked_mode < ARRAY_SIZE(modes) ? modes[caps.masked_mode] : "?");
	return 0;
}

static void caps_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client caps_client = {
	.name = "mlx_ext_caps",
	.add = caps_add,
	.remove = caps_remove,
};

static int __init caps_init(void)
{
	u32 v = mlx_ext_api_version();

	pr_info("mlx_ext_caps: built against mlx_ext %s (API %u.%u), loaded %u.%u\n",
		MLX_EXT_RELEASE, MLX_EXT_API_VERSION_MAJOR, MLX_EXT_API_VERSION_MINOR,
		v >> 16, v & 0xffff);
	if (v >> 16 != MLX_EXT_API_VERSION_MAJOR)
		return -EINVAL;
	return ib_register_client(&caps_client);
}

static void __exit caps_exit(void)
{
	ib_unregister_client(&caps_client);
}

module_init(caps_init);
module_exit(caps_exit);
MODULE_DESCRIPTION("mlx_ext sample ULP: each device's atomics as mlx_ext reports them");
MODULE_LICENSE("GPL");
