/* net.h — the network layer, from a front's side: the one header of src/net a front includes
 * to put the network under the engine (scripts/layers.json "interfaces").
 * Owns: installing src/net's table of what the engine asks of a network layer (netplan.h
 * mxc_net_ops: lowering a section, the host's capabilities, governed egress's credential and
 * environment, model 1's resolver, attaching, --dry-run's rules, --probe's models).  A front that
 * links the engine calls it once at startup, before any thread; libmxc.so, which carries the
 * network layer whole, has it done at load. */
#ifndef MXC_NET_NET_H
#define MXC_NET_NET_H

/* src/net's table into the engine (mxc_net_ops_set); again is harmless. */
void mxc_net_install(void);

#endif
