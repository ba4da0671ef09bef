// SPDX-License-Identifier: GPL-2.0
/*
 * mlx_ext_test_ulp: GUIDs. GuidInfoRecord queries through ib_sa
 * ("guidinfo") and the GUID-change notifications mlx_ext gives the ULP's
 * notifier ("guidevents").
 */

#include <linux/spinlock.h>
#include <linux/string.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/mlx_ext.h>

#include "test_ulp.h"

struct ib_sa_client tu_sa_client;

/* The GUID-change notifications seen, per device, port and function. */
#define NGUIDEVS 128

static struct guidev guidevs[NGUIDEVS];
DEFINE_SPINLOCK(guidev_lock);

struct guidev *guidev_find(const char *dev, u32 port, u16 function, bool add)
{
	int i;

	for (i = 0; i < NGUIDEVS; i++) {
		struct guidev *g = &guidevs[i];

		if (g->dev[0] && !strcmp(g->dev, dev) && g->port == port &&
		    g->function == function)
			return g;
		if (!g->dev[0] && add) {
			strscpy(g->dev, dev, sizeof(g->dev));
			g->port = port;
			g->function = function;
			return g;
		}
	}
	return NULL;
}

static int guid_event(struct notifier_block *nb, unsigned long action, void *data)
{
	struct mlx_ext_guid_event *e = data;
	struct guidev *g;

	if (action != MLX_EXT_GUID_CHANGE)
		return NOTIFY_DONE;
	spin_lock(&guidev_lock);
	g = guidev_find(dev_name(&e->device->dev), e->port, e->function, true);
	if (g) {
		g->calls++;
		g->up = e->up;
		g->count = e->count;
	}
	spin_unlock(&guidev_lock);
	return NOTIFY_OK;
}

struct notifier_block guid_nb = { .notifier_call = guid_event };

struct guidinfo {
	struct completion done;
	int status;
	struct ib_sa_guidinfo_rec rec;
};

static void guidinfo_done(int status, struct ib_sa_guidinfo_rec *resp, void *context)
{
	struct guidinfo *g = context;

	g->status = status;
	if (!status && resp)
		g->rec = *resp;
	complete(&g->done);
}

int run_guidinfo(struct ib_device *dev, const char *args)
{
	unsigned long long guids[8] = {};
	struct ib_sa_guidinfo_rec rec = {};
	struct ib_port_attr attr;
	struct ib_sa_query *query;
	struct guidinfo g = {};
	unsigned int port, block, mask, i;
	char method_s[16];
	ib_sa_comp_mask comp;
	u8 method;
	ktime_t start;
	size_t n;
	int id, ret;

	ret = sscanf(args, "%u %15s %u %x %llx %llx %llx %llx %llx %llx %llx %llx", &port,
		     method_s, &block, &mask, &guids[0], &guids[1], &guids[2], &guids[3],
		     &guids[4], &guids[5], &guids[6], &guids[7]);
	if (ret < 4 || block > 15 || mask > 0xff || !rdma_is_port_valid(dev, port))
		return -EINVAL;
	if (!strcmp(method_s, "set"))
		method = IB_MGMT_METHOD_SET;
	else if (!strcmp(method_s, "delete"))
		method = IB_SA_METHOD_DELETE;
	else
		return -EINVAL;
	ret = ib_query_port(dev, port, &attr);
	if (ret)
		return ret;
	rec.lid = cpu_to_be16(attr.lid);
	rec.block_num = block;
	comp = IB_SA_GUIDINFO_REC_LID | IB_SA_GUIDINFO_REC_BLOCK_NUM;
	for (i = 0; i < 8; i++) {
		__be64 v = cpu_to_be64(guids[i]);

		memcpy(&rec.guid_info_list[8 * i], &v, 8);
		if (mask & (1 << i))
			comp |= IB_SA_COMP_MASK(4 + i);	/* IB_SA_GUIDINFO_REC_GID0 + i */
	}
	init_completion(&g.done);
	start = ktime_get();
	id = ib_sa_guid_info_rec_query(&tu_sa_client, dev, port, &rec, comp, method, 1000,
				       GFP_KERNEL, guidinfo_done, &g, &query);
	if (id < 0) {
		snprintf(tu_result, RESULT_MAX, "err %d ms 0\n", id);
		return 0;
	}
	/* ib_sa calls back exactly once: answered, timed out or cancelled. */
	if (!wait_for_completion_timeout(&g.done, msecs_to_jiffies(TIMEOUT_MS))) {
		ib_sa_cancel_query(id, query);
		wait_for_completion(&g.done);
	}
	if (g.status) {
		snprintf(tu_result, RESULT_MAX, "err %d ms %lld\n", g.status,
			 ktime_ms_delta(ktime_get(), start));
		return 0;
	}
	n = snprintf(tu_result, RESULT_MAX, "ok %x %u", be16_to_cpu(g.rec.lid), g.rec.block_num);
	for (i = 0; i < 8; i++) {
		__be64 v;

		memcpy(&v, &g.rec.guid_info_list[8 * i], 8);
		n += snprintf(tu_result + n, RESULT_MAX - n, " %llx", be64_to_cpu(v));
	}
	snprintf(tu_result + n, RESULT_MAX - n, " ms %lld\n", ktime_ms_delta(ktime_get(), start));
	return 0;
}
