// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's IPoIB netdev (mlx_ext_sim.ko only): the netdev through
 * which "ip link set <pf> vf N node_guid|port_guid" and the orchestrators'
 * netlink reach a simulated mlx5-family PF's VF GUIDs, as they reach a real
 * one's through ib_ipoib's.
 *
 * It carries no traffic (what it is given to send is dropped): it has
 * the VF operations of drivers/infiniband/ulp/ipoib/ipoib_main.c, which
 * call ib_core's ib_set_vf_guid() and ib_get_vf_guid(), and so the
 * simulated driver's set_vf_guid and get_vf_guid, as ipoib's do mlx5_ib's.
 * rtnetlink lists a VF only when ndo_get_vf_config() succeeds
 * (rtnl_fill_vfinfo(), net/core/rtnetlink.c), and takes VF GUIDs only on
 * an ARPHRD_INFINIBAND netdev (handle_vf_guid()), whose parent is a PCI
 * function with VFs (dev_num_vf()): the netdev is made only on an adapter
 * whose parent is a PCI PF. ib_ipoib itself cannot run on the simulator,
 * whose data path has no UD QP but the GSI's (rust/ib/provider/driver/mod.rs).
 *
 * A VF is one of the PF's PCI VFs (pci_num_vf()): rtnetlink lists those
 * only (rtnl_fill_vf(): dev_num_vf() of the parent), and a VF beyond them
 * has no vport for mlx5's firmware command to modify
 * (mlx5_core_modify_hca_vport_context(), ib_virt.c), which fails it; the
 * simulator's own bound on VFs is not the PF's.
 *
 * Locks: register_netdev() and unregister_netdev() take RTNL, under the
 * simulator's device mutex (new_device, del_device) or the PF's device lock
 * (its unbind); the VF operations, called under RTNL, take only the
 * simulator's VF table lock, and mlx_ext's vport files take RTNL with
 * rtnl_trylock(): nothing takes those locks in the other order.
 */

#include <linux/if_arp.h>
#include <linux/if_infiniband.h>
#include <linux/if_link.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_verbs.h>
#include <mlx_ext/helpers.h>

struct simnet_priv {
	struct ib_device *ca;
	u32 port;
};

static netdev_tx_t simnet_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev_core_stats_tx_dropped_inc(dev);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/* Whether @vf is one of the PF's VFs. */
static bool simnet_vf_ok(struct net_device *dev, int vf)
{
	return vf >= 0 && vf < pci_num_vf(to_pci_dev(dev->dev.parent));
}

/*
 * ipoib_get_vf_config() asks the driver first (ib_get_vf_config(), mlx5_ib's
 * get_vf_config, which reads the vport's state policy); the simulator has no
 * such operation, so the VF's number and an automatic link state.
 */
static int simnet_get_vf_config(struct net_device *dev, int vf,
				struct ifla_vf_info *ivf)
{
	if (!simnet_vf_ok(dev, vf))
		return -EINVAL;
	ivf->vf = vf;
	ivf->linkstate = IFLA_VF_LINK_STATE_AUTO;
	memcpy(ivf->mac, dev->dev_addr, min_t(size_t, dev->addr_len, sizeof(ivf->mac)));
	return 0;
}

/* ipoib_set_vf_guid(). */
static int simnet_set_vf_guid(struct net_device *dev, int vf, u64 guid, int type)
{
	struct simnet_priv *priv = netdev_priv(dev);

	if (type != IFLA_VF_IB_NODE_GUID && type != IFLA_VF_IB_PORT_GUID)
		return -EINVAL;
	if (!simnet_vf_ok(dev, vf)) {
		netdev_info(dev, "VF %d: the PF has %d VFs\n", vf,
			    pci_num_vf(to_pci_dev(dev->dev.parent)));
		return -EINVAL;
	}
	return ib_set_vf_guid(priv->ca, vf, priv->port, guid, type);
}

/* ipoib_get_vf_guid(). */
static int simnet_get_vf_guid(struct net_device *dev, int vf,
			      struct ifla_vf_guid *node_guid,
			      struct ifla_vf_guid *port_guid)
{
	struct simnet_priv *priv = netdev_priv(dev);

	if (!simnet_vf_ok(dev, vf))
		return -EINVAL;
	return ib_get_vf_guid(priv->ca, vf, priv->port, node_guid, port_guid);
}

static const struct net_device_ops simnet_ops = {
	.ndo_start_xmit = simnet_xmit,
	.ndo_get_vf_config = simnet_get_vf_config,
	.ndo_set_vf_guid = simnet_set_vf_guid,
	.ndo_get_vf_guid = simnet_get_vf_guid,
};

/* An IPoIB netdev's link-layer facts, as ipoib_setup_common() sets them. */
static void simnet_setup(struct net_device *dev)
{
	dev->netdev_ops = &simnet_ops;
	dev->type = ARPHRD_INFINIBAND;
	dev->addr_len = INFINIBAND_ALEN;
	dev->hard_header_len = 4 + INFINIBAND_ALEN;
	dev->mtu = 2044;
	dev->min_mtu = 68;
	dev->max_mtu = 2044;
	dev->priv_flags |= IFF_NO_QUEUE;
	dev->flags = IFF_BROADCAST | IFF_MULTICAST;
	memset(dev->broadcast, 0xff, INFINIBAND_ALEN);
}

void *mlx_ext_simnet_add(struct ib_device *ca, u32 port)
{
	struct device *parent = ca->dev.parent;
	u8 addr[INFINIBAND_ALEN] = { 0 };
	struct simnet_priv *priv;
	char name[IFNAMSIZ];
	struct net_device *dev;
	int err;

	if (!parent || !dev_is_pci(parent))
		return ERR_PTR(-EINVAL);
	/* alloc_netdev_mqs() BUG()s on a name that does not fit; snprintf()
	 * would cut it silently.
	 */
	if (snprintf(name, sizeof(name), "%sib%u", dev_name(&ca->dev), port) >=
	    sizeof(name)) {
		pr_warn("mlx_ext_sim: %s: no IPoIB netdev: \"%sib%u\" is longer than %d characters\n",
			dev_name(&ca->dev), dev_name(&ca->dev), port, IFNAMSIZ - 1);
		return ERR_PTR(-EINVAL);
	}
	dev = alloc_netdev(sizeof(*priv), name, NET_NAME_PREDICTABLE, simnet_setup);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	priv = netdev_priv(dev);
	priv->ca = ca;
	priv->port = port;
	SET_NETDEV_DEV(dev, parent);
	/* QPN 0, then a link-local GID made of the node GUID. */
	addr[4] = 0xfe;
	addr[5] = 0x80;
	memcpy(addr + 12, &ca->node_guid, sizeof(ca->node_guid));
	dev_addr_set(dev, addr);
	err = register_netdev(dev);
	if (err) {
		free_netdev(dev);
		return ERR_PTR(err);
	}
	return dev;
}

void mlx_ext_simnet_del(void *netdev)
{
	unregister_netdev(netdev);
	free_netdev(netdev);
}

/*
 * Whether this task holds RTNL, as a real driver's set_vf_guid and
 * get_vf_guid may rely on: ipoib's ndo_set_vf_guid and ndo_get_vf_guid
 * call them (drivers/infiniband/ulp/ipoib/ipoib_main.c:2126-2143 in 7.3),
 * and rtnetlink calls those under RTNL: rtnl_setlink(), do_setlink(),
 * do_setvfinfo(), handle_vf_guid() (net/core/rtnetlink.c:2869); and for a
 * read rtnl_getlink() and rtnl_dump_ifinfo(), which take rtnl_lock() before
 * they fill the VF list (rtnetlink.c:4340, 2622) although RTM_GETLINK is
 * registered unlocked; mlx_ext's vport files take it too
 * (rust/helpers/iov.c). mlx5 keeps what it set in vfs_ctx, which RTNL
 * serialises. ASSERT_RTNL() would pass whenever any task holds RTNL;
 * lockdep knows whether this one does (until an earlier report turns
 * lockdep off: then it answers yes, and the log already has that report,
 * which fails the run). Without lockdep (a production kernel), whether any
 * task does. Warns once when it does not.
 */
bool mlx_ext_simnet_rtnl_held(void)
{
	bool held = IS_ENABLED(CONFIG_PROVE_LOCKING) ? lockdep_rtnl_is_held() :
						       rtnl_is_locked();

	WARN_ONCE(!held, "mlx_ext_sim: a VF GUID operation called without RTNL\n");
	return held;
}
