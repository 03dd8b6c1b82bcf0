package tunnel

import (
	"sort"
	"strconv"
	"strings"
)

// Args returns the configuration as Open vSwitch's get_tunnel_config
// reports it (what ovs-appctl dpif/show prints in parentheses), sorted by
// key: only what differs from the defaults of typ.
func (c *Config) Args(typ string) [][2]string {
	var a [][2]string
	add := func(k, v string) { a = append(a, [2]string{k, v}) }
	if c.Remote.IsValid() {
		add("remote_ip", c.Remote.String())
	} else if c.RemoteFlow {
		add("remote_ip", "flow")
	}
	if c.Local.IsValid() {
		add("local_ip", c.Local.String())
	} else if c.LocalFlow {
		add("local_ip", "flow")
	}
	in, out := c.InKey, c.OutKey
	switch {
	case in.Flow && out.Flow:
		add("key", "flow")
	case in.Present && out.Present && !in.Flow && !out.Flow && in.Value == out.Value:
		add("key", strconv.FormatUint(in.Value, 10))
	default:
		if in.Flow {
			add("in_key", "flow")
		} else if in.Present {
			add("in_key", strconv.FormatUint(in.Value, 10))
		}
		if out.Flow {
			add("out_key", "flow")
		} else if out.Present {
			add("out_key", strconv.FormatUint(out.Value, 10))
		}
	}
	if c.TTLInherit {
		add("ttl", "inherit")
	} else if c.TTL != 64 {
		add("ttl", strconv.Itoa(int(c.TTL)))
	}
	if c.TOSInherit {
		add("tos", "inherit")
	} else if c.TOS != 0 {
		add("tos", "0x"+strconv.FormatUint(uint64(c.TOS), 16))
	}
	if c.DstPort != 0 && (typ == "geneve" && c.DstPort != GenevePort || typ == "vxlan" && c.DstPort != VXLANPort) {
		add("dst_port", strconv.Itoa(int(c.DstPort)))
	}
	if c.Csum {
		add("csum", "true")
	}
	if c.Seq {
		add("seq", "true")
	}
	// Every kind here carries Ethernet, so legacy_l2 is the default.
	if c.PacketType != LegacyL2 {
		add("packet_type", [...]string{"legacy_l2", "legacy_l3", "ptap"}[c.PacketType])
	}
	if !c.DontFragment {
		add("df_default", "false")
	}
	if c.SetEgressPktMark {
		add("egress_pkt_mark", strconv.FormatUint(uint64(c.EgressPktMark), 10))
	}
	sort.Slice(a, func(i, j int) bool { return a[i][0] < a[j][0] })
	return a
}

// DpifShow returns the parenthesised part of a port's line in ovs-appctl
// dpif/show: "geneve: dst_port=7000, remote_ip=flow", or just the type.
func (c *Config) DpifShow(typ string) string {
	args := c.Args(typ)
	if len(args) == 0 {
		return typ
	}
	var s strings.Builder
	s.WriteString(typ)
	s.WriteString(": ")
	for i, kv := range args {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(kv[0])
		s.WriteByte('=')
		s.WriteString(kv[1])
	}
	return s.String()
}

// DatapathPortName is the name Open vSwitch gives the datapath port that
// tunnel ports of typ share: genev_sys_6081, vxlan_sys_4789 (per UDP
// port), gre_sys, ip6gre_sys.
func DatapathPortName(typ string, dstPort uint16) string {
	switch typ {
	case "geneve":
		return "genev_sys_" + strconv.Itoa(int(dstPort))
	case "vxlan":
		return "vxlan_sys_" + strconv.Itoa(int(dstPort))
	}
	return typ + "_sys"
}

// ListeningPortLine is one line of ovs-appctl tnl/ports/show after
// "Listening ports:": the datapath port's name, number, and how many
// tunnel ports share it.
func ListeningPortLine(name string, dpPort uint32, refs int) string {
	return name + " (" + strconv.FormatUint(uint64(dpPort), 10) + ") ref_cnt=" + strconv.Itoa(refs)
}
