package appctl

import (
	"fmt"
	"strings"
	"time"

	"gvs/metrics/source"
)

// ofportString is how ofputil_port_to_string names a port without a
// port map: its number, or LOCAL for the bridge's own port.
func ofportString(p uint32) string {
	if p == source.OFPortLocal {
		return "LOCAL"
	}
	return fmt.Sprint(p)
}

// fdbShow is fdb/show BRIDGE: the MAC table, least recently used first.
func (c *Commands) fdbShow(args []string) (string, error) {
	br, ok := c.bridge(args[0])
	if !ok {
		return "", errorf("no such bridge")
	}
	var b strings.Builder
	b.WriteString(" port  VLAN  MAC                Age\n")
	for _, e := range br.OpenFlow.MACEntries() {
		fmt.Fprintf(&b, "%5s  %4d  %s  %3d\n", ofportString(e.Port), e.VLAN, e.MAC, int(e.Age/time.Second))
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
			if br.OpenFlow != nil {
				targets = append(targets, br)
			}
		}
	}
	for _, br := range targets {
		br.OpenFlow.FlushMACs()
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
	s := br.OpenFlow.MACStats()
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

// bridgeDumpFlows is bridge/dump-flows [--offload-stats] BRIDGE: every
// flow of every table, hidden ones included, as Open vSwitch prints them
// (ofproto_get_all_flows); gvs offloads nothing.
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
	return br.OpenFlow.DumpFlows(offload), nil
}

// ofprotoList is ofproto/list: the bridges, one name a line.
func (c *Commands) ofprotoList([]string) (string, error) {
	var b strings.Builder
	for _, br := range c.sw.Bridges() {
		if br.OpenFlow != nil {
			b.WriteString(br.Name + "\n")
		}
	}
	return b.String(), nil
}
