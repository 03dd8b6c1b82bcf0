package appctl

import (
	"fmt"
	"strings"
	"time"

	"gvs/metrics/source"
)

// ofportName is how ofputil_port_to_string names a port without a port
// map: its number, or LOCAL for the bridge's own port. A port whose
// OpenFlow number the switch does not know shows its datapath number.
func ofportName(br source.Bridge, dpPort uint32) string {
	for _, p := range br.Ports {
		if p.InDatapath && p.DPPort == dpPort && p.OFPort != 0 {
			if p.OFPort == source.OFPortLocal {
				return "LOCAL"
			}
			return fmt.Sprint(p.OFPort)
		}
	}
	return fmt.Sprint(dpPort)
}

// fdbShow is fdb/show BRIDGE: the MAC table, least recently used first.
func (c *Commands) fdbShow(args []string) (string, error) {
	br, ok := c.bridge(args[0])
	if !ok {
		return "", errorf("no such bridge")
	}
	var b strings.Builder
	b.WriteString(" port  VLAN  MAC                Age\n")
	for _, e := range br.NORMAL.MACs() {
		fmt.Fprintf(&b, "%5s  %4d  %s  %3d\n", ofportName(br, e.Port), e.VLAN, e.MAC, int(e.Age/time.Second))
	}
	return b.String(), nil
}

// fdbFlush is fdb/flush [BRIDGE].
func (c *Commands) fdbFlush(args []string) (string, error) {
	var targets []source.Bridge
	if len(args) == 1 {
		br, ok := c.bridge(args[0])
		if !ok {
			return "", errorf("no such bridge")
		}
		targets = append(targets, br)
	} else {
		for _, br := range c.sw.Bridges() {
			if br.NORMAL != nil {
				targets = append(targets, br)
			}
		}
	}
	for _, br := range targets {
		br.NORMAL.FlushMACs()
		c.cov.add("fdb_flush", 1)
	}
	return "table successfully flushed", nil
}

// fdbStatsShow is fdb/stats-show BRIDGE. gvs has no static entries.
func (c *Commands) fdbStatsShow(args []string) (string, error) {
	br, ok := c.bridge(args[0])
	if !ok {
		return "", errorf("no such bridge")
	}
	s := br.NORMAL.MACStats()
	var b strings.Builder
	fmt.Fprintf(&b, "Statistics for bridge \"%s\":\n", br.Name)
	fmt.Fprintf(&b, "  Current/maximum MAC entries in the table: %d/%d\n", s.Entries, s.Max)
	fmt.Fprintf(&b, "  Current static MAC entries in the table : 0\n")
	fmt.Fprintf(&b, "  Total number of learned MAC entries     : %d\n", s.Learned)
	fmt.Fprintf(&b, "  Total number of expired MAC entries     : %d\n", s.Expired)
	fmt.Fprintf(&b, "  Total number of evicted MAC entries     : %d\n", s.Evicted)
	fmt.Fprintf(&b, "  Total number of port moved MAC entries  : %d\n", s.Moved)
	return b.String(), nil
}

// bridgeDumpFlows is bridge/dump-flows [--offload-stats] BRIDGE. A gvs
// bridge has one OpenFlow rule, priority 0 actions=NORMAL, which every
// packet received on the bridge's ports passes: its counters are the sum
// of those ports' received packets and bytes (so they drop when a port
// leaves the bridge). Its age is the bridge's.
func (c *Commands) bridgeDumpFlows(args []string) (string, error) {
	br, ok := c.bridge(args[len(args)-1])
	if !ok {
		return "", errorf("Unknown bridge")
	}
	offload := false
	for _, a := range args[:len(args)-1] {
		if a == "--offload-stats" {
			offload = true
		}
	}
	var packets, bytes uint64
	if dp := c.sw.Datapath(); dp != nil {
		in := map[uint32]bool{}
		for _, p := range br.Ports {
			if p.InDatapath {
				in[p.DPPort] = true
			}
		}
		for _, p := range dp.Ports() {
			if in[p.No] {
				s := p.Device.Stats()
				packets += s.RxPackets
				bytes += s.RxBytes
			}
		}
	}
	created := br.Created
	now := c.now()
	if created.IsZero() {
		c.mu.Lock()
		created = c.firstSeen[br.Name]
		if created.IsZero() {
			created = now
			c.firstSeen[br.Name] = now
		}
		c.mu.Unlock()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "duration=%ds, n_packets=%d, n_bytes=%d, ", int64(now.Sub(created)/time.Second), packets, bytes)
	if offload {
		b.WriteString("n_offload_packets=0, n_offload_bytes=0, ")
	}
	b.WriteString("priority=0,actions=NORMAL\n")
	return b.String(), nil
}

// ofprotoList is ofproto/list: the bridges, one name a line.
func (c *Commands) ofprotoList([]string) (string, error) {
	var b strings.Builder
	for _, br := range c.sw.Bridges() {
		if br.NORMAL != nil || br.OpenFlow != nil {
			b.WriteString(br.Name + "\n")
		}
	}
	return b.String(), nil
}
