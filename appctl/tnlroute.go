package appctl

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gvs/ofproto/tnlroute"
	"gvs/unixctl"
)

// RegisterTunnelRouting adds native tunnelling's route table and
// neighbour cache commands, with Open vSwitch 3.1's names, usage,
// output and errors:
//
//	ovs/route/add IP/PLEN OUTPUT_BRIDGE [GW] [pkt_mark=MARK]
//	ovs/route/del IP/PLEN [pkt_mark=MARK]
//	ovs/route/show
//	ovs/route/lookup IP [pkt_mark=MARK]
//	tnl/neigh/show, tnl/neigh/set BRIDGE IP MAC, tnl/neigh/flush,
//	tnl/neigh/aging [SECS], and the same as tnl/arp/*
//
// ovs/route/show lists entries by priority, then prefix (Open vSwitch
// lists each prefix length's entries in hash order); tnl/neigh/show by
// bridge, then address (Open vSwitch: hash order).
func RegisterTunnelRouting(s Registrar, routes *tnlroute.Table, neigh *tnlroute.Cache) {
	s.Register("ovs/route/add", "ip_addr/prefix_len out_br_name [gw] [pkt_mark=mark]", 2, 4, func(args []string) (string, error) {
		r, err := tnlroute.ParseRouteAdd(args)
		if err != nil {
			return "", err
		}
		if err := routes.AddUser(r); err != nil {
			return "", err
		}
		return "OK", nil
	})
	s.Register("ovs/route/del", "ip_addr/prefix_len [pkt_mark=mark]", 1, 2, func(args []string) (string, error) {
		r, err := tnlroute.ParseRouteDel(args)
		if err != nil {
			return "", err
		}
		if err := routes.DelUser(r); err != nil {
			return "", err
		}
		return "OK", nil
	})
	s.Register("ovs/route/show", "", 0, 0, func([]string) (string, error) {
		return FormatRouteShow(routes.Entries()), nil
	})
	s.Register("ovs/route/lookup", "ip_addr [pkt_mark=mark]", 1, 2, func(args []string) (string, error) {
		r, err := tnlroute.ParseRouteLookup(args)
		if err != nil {
			return "", err
		}
		res, ok := routes.Lookup(r.Mark, tnlroute.From16(r.Dst), netip.Addr{})
		if !ok {
			return "", tnlroute.ErrNotFound
		}
		// An unset address (no gateway) prints as "::", as Open vSwitch's.
		return fmt.Sprintf("src %s\ngateway %s\ndev %s\n",
			tnlroute.FormatAddr(res.Src.As16()), tnlroute.FormatAddr(res.Gateway.As16()), res.Dev), nil
	})
	for _, prefix := range []string{"tnl/arp/", "tnl/neigh/"} {
		s.Register(prefix+"show", "", 0, 0, func([]string) (string, error) {
			return FormatNeighShow(neigh.Entries()), nil
		})
		s.Register(prefix+"set", "BRIDGE IP MAC", 3, 3, func(args []string) (string, error) {
			br, ip, mac, err := tnlroute.ParseNeighSet(args)
			if err != nil {
				return "", err
			}
			neigh.Set(br, ip, mac)
			return "OK", nil
		})
		s.Register(prefix+"flush", "", 0, 0, func([]string) (string, error) {
			neigh.Flush()
			return "OK", nil
		})
		s.Register(prefix+"aging", "[SECS]", 0, 1, func(args []string) (string, error) {
			if len(args) == 0 {
				return strconv.FormatInt(int64(neigh.Aging()/time.Second), 10), nil
			}
			secs, err := tnlroute.ParseAging(args[0])
			if err != nil {
				return "", err
			}
			neigh.SetAging(time.Duration(secs) * time.Second)
			return "OK", nil
		})
	}
}

// Registrar is where RegisterTunnelRouting puts its commands: a
// unixctl.Server.
type Registrar interface {
	Register(name, usage string, minArgs, maxArgs int, fn func(args []string) (string, error))
}

var _ Registrar = (*unixctl.Server)(nil)

// FormatRouteShow formats ovs/route/show.
func FormatRouteShow(entries []tnlroute.Entry) string {
	var b strings.Builder
	b.WriteString("Route Table:\n")
	for _, e := range entries {
		if e.User() {
			b.WriteString("User: ")
		} else {
			b.WriteString("Cached: ")
		}
		b.WriteString(tnlroute.FormatAddr(e.Dst))
		plen := e.Plen
		if tnlroute.From16(e.Dst).Is4() {
			plen -= 96
		}
		fmt.Fprintf(&b, "/%d", plen)
		if e.Mark != 0 {
			fmt.Fprintf(&b, " MARK %d", e.Mark)
		}
		fmt.Fprintf(&b, " dev %s", e.Dev)
		if e.GW != ([16]byte{}) {
			b.WriteString(" GW " + tnlroute.FormatAddr(e.GW))
		}
		b.WriteString(" SRC " + tnlroute.FormatAddr(e.Src))
		if e.Local {
			b.WriteString(" local")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FormatNeighShow formats tnl/neigh/show: the address padded to
// INET6_ADDRSTRLEN (46) columns.
func FormatNeighShow(entries []tnlroute.Neighbor) string {
	var b strings.Builder
	b.WriteString("IP                                            MAC                 Bridge\n")
	b.WriteString("==========================================================================\n")
	for _, n := range entries {
		ip := tnlroute.FormatAddr(n.IP)
		b.WriteString(ip)
		if pad := 46 - len(ip); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		}
		m := n.MAC
		fmt.Fprintf(&b, "%02x:%02x:%02x:%02x:%02x:%02x   %s", m[0], m[1], m[2], m[3], m[4], m[5], n.Bridge)
		if n.Stale {
			b.WriteString(" STALE")
		}
		b.WriteByte('\n')
	}
	return b.String()
}
