package appctl

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gvs/dpif"
	"gvs/metrics/source"
)

// dpctlParams are dpctl's options (lib/dpctl.c).
type dpctlParams struct {
	verbosity  int
	statistics bool
	names      bool
	out        strings.Builder
	failed     bool
}

// errorf appends an error line in dpctl's format: "PROGRAM: MSG" plus
// " (STRERROR)" when errno is given.
func (c *Commands) dpctlError(p *dpctlParams, errno string, format string, args ...any) {
	fmt.Fprintf(&p.out, "%s: ", c.program)
	fmt.Fprintf(&p.out, format, args...)
	if errno != "" {
		fmt.Fprintf(&p.out, " (%s)", errno)
	}
	p.out.WriteByte('\n')
	p.failed = true
}

// dpctl wraps a dpctl command with Open vSwitch's option parsing and error
// reporting: output and errors accumulate in one text, sent as the reply
// or, if anything failed, as the error.
func (c *Commands) dpctl(handler func(args []string, p *dpctlParams)) func([]string) (string, error) {
	return func(args []string) (string, error) {
		p := &dpctlParams{}
		setNames := false
	options:
		for len(args) > 0 {
			a := args[0]
			switch {
			case strings.HasPrefix(a, "--"):
				switch a {
				case "--statistics":
					p.statistics = true
				case "--more":
					p.verbosity++
				case "--names":
					p.names, setNames = true, true
				case "--no-names":
					p.names, setNames = false, true
				case "--clear", "--may-create":
				default:
					return "", errorf("Unrecognized option %s", a)
				}
			case len(a) > 1 && a[0] == '-':
				for _, o := range a[1:] {
					switch o {
					case 'm':
						p.verbosity++
					case 's':
						p.statistics = true
					default:
						return "", errorf("Unrecognized option -%c", o)
					}
				}
			default:
				break options
			}
			args = args[1:]
		}
		if !setNames {
			p.names = p.verbosity > 0
		}
		handler(args, p)
		if p.failed {
			return "", errorf("%s", p.out.String())
		}
		return p.out.String(), nil
	}
}

// openDatapath is opt_dpif_open: args[0] may name the datapath; without
// it there must be exactly one (gvs has at most one). maxArgs is the
// number of arguments at which a non-datapath first argument is an error.
func (c *Commands) openDatapath(args []string, p *dpctlParams, maxArgs int) *dpif.Datapath {
	dp := c.sw.Datapath()
	switch {
	case len(args) > 0 && isDatapathName(args[0]) && dp != nil:
		return dp
	case len(args)+1 == maxArgs:
		c.dpctlError(p, "Invalid argument", "datapath not found")
		return nil
	case dp == nil:
		c.dpctlError(p, "", "no datapaths exist")
		c.dpctlError(p, "Invalid argument", "datapath not found")
		return nil
	}
	return dp
}

// dpctlShow is dpctl/show: the datapath's lookups, flows and ports.
func (c *Commands) dpctlShow(args []string, p *dpctlParams) {
	dp := c.sw.Datapath()
	for _, a := range args {
		if !isDatapathName(a) || dp == nil {
			c.dpctlError(p, "No such device", "opening datapath %s failed", a)
			return
		}
	}
	if dp == nil {
		return
	}
	st := dp.Stats()
	fmt.Fprintf(&p.out, "%s:\n", DatapathFullName)
	fmt.Fprintf(&p.out, "  lookups: hit:%d missed:%d lost:%d\n  flows: %d\n", st.Hit, st.Missed, st.Lost, st.Flows)
	for _, port := range dp.Ports() {
		fmt.Fprintf(&p.out, "  port %d: %s", port.No, port.Name)
		if t := netdevType(port.Type); t != "system" {
			fmt.Fprintf(&p.out, " (%s)", t)
		}
		p.out.WriteByte('\n')
		if p.statistics {
			s := port.Device.Stats()
			fmt.Fprintf(&p.out, "    RX packets:%d errors:%d dropped:%d overruns:? frame:?\n", s.RxPackets, s.RxErrors, s.RxKernelDrops)
			fmt.Fprintf(&p.out, "    TX packets:%d errors:%d dropped:%d aborted:? carrier:?\n", s.TxPackets, s.TxErrors, s.TxDrops)
			fmt.Fprintf(&p.out, "    collisions:?\n")
			fmt.Fprintf(&p.out, "    RX bytes:%d  TX bytes:%d\n", s.RxBytes, s.TxBytes)
		}
	}
}

// netdevType is the netdev type Open vSwitch shows for a port of the
// userspace datapath: an "internal" port is a tap device there.
func netdevType(t string) string {
	switch t {
	case "", "system":
		return "system"
	case "internal":
		return "tap"
	}
	return t
}

// dumpFlows is dpctl/dump-flows. gvs's megaflows are shared by every PMD
// (Open vSwitch keeps one classifier per PMD), so there are no
// per-PMD sections and pmd=N shows them all.
func (c *Commands) dumpFlows(args []string, p *dpctlParams) {
	var filter, types string
	rest := args[:0:0]
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "filter=") && filter == "":
			filter = a[len("filter="):]
		case strings.HasPrefix(a, "type=") && types == "":
			types = a[len("type="):]
		case strings.HasPrefix(a, "pmd="):
		default:
			rest = append(rest, a)
		}
	}
	if filter != "" {
		c.dpctlError(p, "", "Failed to parse filter (filters are not supported by gvs)")
		return
	}
	wantNone := false
	for _, t := range strings.Split(types, ",") {
		switch t {
		case "", "all", "ovs", "non-offloaded":
		case "offloaded", "partially-offloaded", "tc", "dpdk":
			wantNone = true // gvs offloads nothing
		default:
			c.dpctlError(p, "", "Failed to parse type (%s)", t)
			return
		}
	}
	dp := c.openDatapath(rest, p, 2)
	if dp == nil || wantNone {
		return
	}
	flows := dp.Dump()
	now := c.now()
	lines := make([]string, len(flows))
	for i, f := range flows {
		lines[i] = f.Format(now)
	}
	sort.Strings(lines) // Dump's order is the classifier's, not stable
	if c.onlyDummyBridges() && len(lines) > 0 {
		// Open vSwitch's dummy ports are polled by its main thread,
		// whose flows it lists under this heading.
		p.out.WriteString("flow-dump from the main thread:\n")
	}
	for _, l := range lines {
		p.out.WriteString(l)
		p.out.WriteByte('\n')
	}
}

// delFlows is dpctl/del-flows [dp]: flush every flow.
func (c *Commands) delFlows(args []string, p *dpctlParams) {
	if len(args) > 1 || (len(args) == 1 && !isDatapathName(args[0])) {
		c.dpctlError(p, "Operation not supported", "deleting flows listed in a file")
		return
	}
	dp := c.openDatapath(args, p, 3)
	if dp == nil {
		return
	}
	n := dp.NumFlows()
	dp.Flush()
	c.cov.add("dpif_flow_flush", 1)
	c.cov.add("dpif_flow_del", uint64(n))
}

// dpifShow is dpif/show: the datapath's hit/missed line, then each bridge
// and its ports with OpenFlow/datapath port numbers.
func (c *Commands) dpifShow([]string) (string, error) {
	dp := c.sw.Datapath()
	if dp == nil {
		return "", nil
	}
	var b strings.Builder
	st := dp.Stats()
	// Open vSwitch shows one section per datapath: its dummy bridges
	// (--enable-dummy) are in dummy@ovs-dummy. gvs's bridges share one
	// datapath, so both sections show its counters.
	bridges := c.sw.Bridges()
	var netdevBrs, dummyBrs []source.Bridge
	for _, br := range bridges {
		if br.Dummy {
			dummyBrs = append(dummyBrs, br)
		} else {
			netdevBrs = append(netdevBrs, br)
		}
	}
	if len(dummyBrs) > 0 {
		fmt.Fprintf(&b, "dummy@ovs-dummy: hit:%d missed:%d\n", st.Hit, st.Missed)
		showBridges(&b, dummyBrs)
	}
	if len(netdevBrs) > 0 || len(dummyBrs) == 0 {
		fmt.Fprintf(&b, "%s: hit:%d missed:%d\n", DatapathFullName, st.Hit, st.Missed)
		showBridges(&b, netdevBrs)
	}
	return b.String(), nil
}

// onlyDummyBridges: every bridge is a datapath_type=dummy bridge
// (gvs-vswitchd --enable-dummy's sandboxes and test suites).
func (c *Commands) onlyDummyBridges() bool {
	brs := c.sw.Bridges()
	for _, br := range brs {
		if !br.Dummy {
			return false
		}
	}
	return len(brs) > 0
}

// showBridges writes dpif/show's lines for the bridges of one datapath.
func showBridges(b *strings.Builder, bridges []source.Bridge) {
	for _, br := range bridges {
		fmt.Fprintf(b, "  %s:\n", br.Name)
		ports := append(br.Ports[:0:0], br.Ports...)
		sort.Slice(ports, func(i, j int) bool { return ports[i].Interface < ports[j].Interface })
		for _, pt := range ports {
			dpPort := "none"
			if pt.InDatapath {
				dpPort = fmt.Sprint(pt.DPPort)
			}
			fmt.Fprintf(b, "    %s %d/%s: (%s", pt.Interface, pt.OFPort, dpPort, netdevType(pt.Type))
			for i, k := range slices.Sorted(maps.Keys(pt.Config)) {
				sep := ","
				if i == 0 {
					sep = ":"
				}
				fmt.Fprintf(b, "%s %s=%s", sep, k, pt.Config[k])
			}
			b.WriteString(")\n")
		}
	}
}
