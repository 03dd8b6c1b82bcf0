package setups

// Names of the reference setups that ratios are computed against.
const (
	DirectName     = "direct"
	OVSDefaultName = "ovs-netdev"
)

// All returns every setup in the order the runner interleaves them.
func All(env Env) []Setup {
	return []Setup{
		&Direct{Env: env},
		&Bridge{Env: env},
		&OVS{Env: env, Opt: OVSOptions{Name: OVSDefaultName, TxOff: true,
			Description: "Open vSwitch 3.1 netdev datapath, defaults; tx checksum offload off on the hosts' veths (Open vSwitch's documented requirement: TCP fails otherwise)"}},
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-tso", TSO: true,
			Description: "Open vSwitch 3.1 netdev, other_config:userspace-tso-enable=true, offloads at their defaults"}},
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-bigbuf", TxOff: true, BigBuf: true,
			Description: "Open vSwitch 3.1 netdev, tx off, 32 MiB socket buffers (net.core.{r,w}mem_{default,max} raised while it opens its sockets, restored before measuring)"}},
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-tso-bigbuf", TSO: true, BigBuf: true,
			Description: "Open vSwitch 3.1 netdev, userspace TSO and 32 MiB socket buffers (the best-tuned Open vSwitch on veth)"}},
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-afxdp", AFXDP: true, TxOff: true,
			Description: "Open vSwitch 3.1, ports of type afxdp (xdp-mode best-effort), tx off on the hosts' veths"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system",
			Description: "gvs-vswitchd, system ports, defaults (offloads on)"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system-sockbuf", SockBuf: true,
			Description: "gvs-vswitchd, system ports, other_config:userspace-sock-buf-size=8388608"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-afxdp", AFXDP: true,
			Description: "gvs-vswitchd, ports of type afxdp, offloads at their defaults"}},
	}
}

// Extra returns setups that run only when named with -setups: Open vSwitch
// with the hosts' offloads left on, which its documentation says breaks TCP
// through the netdev datapath (kept out of the default session for time).
func Extra(env Env) []Setup {
	return []Setup{
		&OVS{Env: env, Opt: OVSOptions{Name: "ovs-netdev-offloads",
			Description: "Open vSwitch 3.1 netdev datapath, defaults, hosts' offloads left on (not in the default session)"}},
	}
}
