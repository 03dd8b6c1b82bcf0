package appctl

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gvs/dpif"
	"gvs/dpif/conntrack"
)

// The dpctl conntrack commands, as Open vSwitch 3.1's lib/dpctl.c has
// them for its userspace datapath: same arguments, output and errors.

// Errno texts dpctl appends to its errors.
const (
	errInval    = "Invalid argument"
	errNoEnt    = "No such file or directory"
	errNotSupp  = "Operation not supported"
	maxArgsNone = math.MaxInt // opt_dpif_open with INT_MAX: never "datapath not found" by count
)

// tracker opens the datapath (opt_dpif_open with maxArgs) and returns it
// and its connection tracker, or nil after reporting the error.
func (c *Commands) tracker(args []string, p *dpctlParams, maxArgs int, what string) (*dpif.Datapath, conntrack.Conntrack) {
	dp := c.openDatapath(args, p, maxArgs)
	if dp == nil {
		return nil, nil
	}
	ct := dp.Conntrack()
	if ct == nil {
		c.dpctlError(p, errNotSupp, "%s", what)
		return nil, nil
	}
	return dp, ct
}

// scanU16 is ovs_scan's "%"SCNu16 after prefix: decimal digits (a sign
// and leading space as strtol takes them), in range; what follows the
// number is ignored, as ovs_scan ignores it.
func scanU16(s, prefix string) (uint16, bool) {
	v, ok := scanUint(s, prefix, math.MaxUint16)
	return uint16(v), ok
}

func scanU32(s, prefix string) (uint32, bool) {
	v, ok := scanUint(s, prefix, math.MaxUint32)
	return uint32(v), ok
}

func scanUint(s, prefix string, max uint64) (uint64, bool) {
	if !strings.HasPrefix(s, prefix) {
		return 0, false
	}
	// As strtoull: leading space, a sign, decimal digits; a value beyond
	// 64 bits fails (ERANGE), a negative one wraps; ovs_scan then stores
	// it in the conversion's width, dropping the high bits.
	s = strings.TrimLeft(s[len(prefix):], " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(s[:n], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v & max, true
}

// dumpConntrack is dpctl/dump-conntrack [-m] [-s] [dp] [zone=N].
func (c *Commands) dumpConntrack(args []string, p *dpctlParams) {
	zone := conntrack.AllZones
	if n := len(args); n > 0 {
		if z, ok := scanU16(args[n-1], "zone="); ok {
			zone, args = int32(z), args[:n-1]
		}
	}
	_, ct := c.tracker(args, p, 2, "starting conntrack dump")
	if ct == nil {
		return
	}
	ct.Dump(zone, func(e *conntrack.Entry) bool {
		p.out.WriteString(formatCTEntry(e, p.verbosity > 0, p.statistics))
		p.out.WriteByte('\n')
		return true
	})
}

// flushConntrack is dpctl/flush-conntrack [dp] [zone=N] [ct-orig-tuple]
// [ct-reply-tuple]. Open vSwitch 3.1 takes the datapath name only where
// no zone or tuple follows (it parses the name as a tuple); gvs skips a
// leading datapath name as later versions do.
func (c *Commands) flushConntrack(args []string, p *dpctlParams) {
	rest := args
	if len(rest) > 0 && isDatapathName(rest[0]) {
		rest = rest[1:]
	}
	zone := conntrack.AllZones
	if len(rest) > 0 && strings.HasPrefix(rest[0], "zone=") {
		z, ok := scanU16(rest[0], "zone=")
		if !ok {
			c.dpctlError(p, errInval, "failed to parse zone")
			return
		}
		zone, rest = int32(z), rest[1:]
	}
	var m ctMatch
	for i := 0; i < 2 && len(rest) > 0; i++ {
		if rest[0] != "" {
			if msg, ok := m.parseTuple(i == 1, rest[0]); !ok {
				c.dpctlError(p, errInval, "%s", msg)
				return
			}
		}
		rest = rest[1:]
	}
	if len(rest) > 1 {
		c.dpctlError(p, errInval, "invalid arguments")
		return
	}
	dp := c.openDatapath(args, p, 5)
	if dp == nil {
		c.dpctlError(p, errInval, "Cannot open dpif")
		return
	}
	ct := dp.Conntrack()
	if ct == nil {
		c.dpctlError(p, errNotSupp, "failed to flush conntrack")
		return
	}
	if errno := m.flush(ct, zone); errno != "" {
		c.dpctlError(p, errno, "failed to flush conntrack")
	}
}

// ctStatsShow is dpctl/ct-stats-show [dp] [zone=N] [verbose]: the
// connections per protocol (and, verbose, TCP connections per state),
// counted from a dump as Open vSwitch does.
func (c *Commands) ctStatsShow(args []string, p *dpctlParams) {
	verbose := p.verbosity > 0
	zone := conntrack.AllZones
	for last := -1; len(args) > 0 && last != len(args); {
		last = len(args)
		a := args[len(args)-1]
		switch {
		case strings.HasPrefix(a, "verbose"):
			verbose, args = true, args[:len(args)-1]
		case strings.HasPrefix(a, "zone="):
			if z, ok := scanU16(a, "zone="); ok {
				zone, args = int32(z), args[:len(args)-1]
			}
		}
	}
	_, ct := c.tracker(args, p, 2, "starting conntrack dump")
	if ct == nil {
		return
	}
	total := 0
	perProto := map[uint8]int{}
	perState := map[string]int{}
	ct.Dump(zone, func(e *conntrack.Entry) bool {
		total++
		perProto[e.Orig.Proto]++
		if e.Orig.Proto == protoTCP {
			perState[e.TCPState]++
		}
		return true
	})
	fmt.Fprintf(&p.out, "Connections Stats:\n    Total: %d\n", total)
	other := total
	for _, pr := range ctStatsProtos {
		other -= perProto[pr.proto]
	}
	for _, pr := range ctStatsProtos {
		n := perProto[pr.proto]
		if pr.name == "" || n == 0 {
			continue // ICMPv6 is counted in the total only, as in Open vSwitch
		}
		fmt.Fprintf(&p.out, "  %s: %d\n", pr.name, n)
		if pr.proto == protoTCP && verbose {
			p.out.WriteString("    Conn per TCP states:\n")
			for _, st := range tcpStateNames {
				if n := perState[st]; n > 0 {
					fmt.Fprintf(&p.out, "\t  [%s]=%d\n", st, n)
				}
			}
		}
	}
	if other > 0 {
		fmt.Fprintf(&p.out, "  Other: %d\n", other)
	}
}

const (
	protoICMP    = 1
	protoIGMP    = 2
	protoTCP     = 6
	protoUDP     = 17
	protoDCCP    = 33
	protoICMPv6  = 58
	protoSCTP    = 132
	protoUDPLite = 136
)

// ctStatsProtos are ct-stats-show's protocols in its order; ICMPv6 has
// no line of its own.
var ctStatsProtos = []struct {
	proto uint8
	name  string
}{
	{protoTCP, "TCP"}, {protoUDP, "UDP"}, {protoUDPLite, "UDPLITE"}, {protoSCTP, "SCTP"},
	{protoICMP, "ICMP"}, {protoDCCP, "DCCP"}, {protoIGMP, "IGMP"}, {protoICMPv6, ""},
}

// tcpStateNames are Open vSwitch's CT_DPIF_TCP_STATES in their order.
var tcpStateNames = []string{"CLOSED", "LISTEN", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "CLOSE_WAIT",
	"FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT"}

// ctBkts is dpctl/ct-bkts [dp] [gt=N]. Open vSwitch's userspace tracker
// (a cmap) reports a single bucket holding every connection; so does
// gvs's, whose table is not Open vSwitch's either.
func (c *Commands) ctBkts(args []string, p *dpctlParams) {
	var gt uint16
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "gt=") {
		if v, ok := scanU16(args[n-1], "gt="); ok {
			gt, args = v, args[:n-1]
		}
	}
	_, ct := c.tracker(args, p, 2, "starting conntrack dump")
	if ct == nil {
		return
	}
	const buckets = 1
	total := 0
	ct.Dump(conntrack.AllZones, func(*conntrack.Entry) bool { total++; return true })
	fmt.Fprintf(&p.out, "Total Buckets: %d\n", buckets)
	fmt.Fprintf(&p.out, "Current Connections: %d\n\n", total)
	if total == 0 {
		return
	}
	p.out.WriteString("+-----------+-----------------------------------------+\n")
	p.out.WriteString("|  Buckets  |         Connections per Buckets         |\n")
	p.out.WriteString("+-----------+-----------------------------------------+")
	const perRow = 8
	for i := range buckets {
		if i%perRow == 0 {
			fmt.Fprintf(&p.out, "\n %3d..%3d   | ", i, i+perRow-1)
		}
		if n := total; n > int(gt) {
			fmt.Fprintf(&p.out, "%5d", n)
		} else {
			fmt.Fprintf(&p.out, "%5s", ".")
		}
	}
	p.out.WriteString("\n\n")
}

// ctSetMaxconns is dpctl/ct-set-maxconns [dp] maxconns.
func (c *Commands) ctSetMaxconns(args []string, p *dpctlParams) {
	_, ct := c.tracker(args, p, 3, "ct set maxconns failed")
	if ct == nil {
		return
	}
	n, ok := scanU32(args[len(args)-1], "")
	if !ok {
		c.dpctlError(p, errInval, "maxconns missing or malformed")
		return
	}
	ct.SetMaxConns(n)
	p.out.WriteString("setting maxconns successful")
}

// ctGetMaxconns is dpctl/ct-get-maxconns [dp].
func (c *Commands) ctGetMaxconns(args []string, p *dpctlParams) {
	if _, ct := c.tracker(args, p, 2, "maxconns could not be retrieved"); ct != nil {
		fmt.Fprintf(&p.out, "%d\n", ct.MaxConns())
	}
}

// ctGetNconns is dpctl/ct-get-nconns [dp].
func (c *Commands) ctGetNconns(args []string, p *dpctlParams) {
	if _, ct := c.tracker(args, p, 2, "nconns could not be retrieved"); ct != nil {
		fmt.Fprintf(&p.out, "%d\n", ct.Stats().Conns)
	}
}

// TCPSeqChecker is what a tracker offers for dpctl's
// ct-enable-tcp-seq-chk, ct-disable-tcp-seq-chk and ct-get-tcp-seq-chk
// (Open vSwitch's conntrack_set_tcp_seq_chk): checking TCP sequence
// numbers and windows, or the liberal mode. A tracker without it makes
// those commands fail with "Operation not supported".
type TCPSeqChecker interface {
	SetTCPSeqCheck(enabled bool)
	TCPSeqCheck() bool
}

// ctSetTCPSeqChk is dpctl/ct-enable-tcp-seq-chk and
// ct-disable-tcp-seq-chk [dp].
func (c *Commands) ctSetTCPSeqChk(enabled bool) func(args []string, p *dpctlParams) {
	verb := "disabling"
	if enabled {
		verb = "enabling"
	}
	return func(args []string, p *dpctlParams) {
		_, ct := c.tracker(args, p, 3, verb+" TCP sequence checking failed")
		if ct == nil {
			return
		}
		sc, ok := ct.(TCPSeqChecker)
		if !ok {
			c.dpctlError(p, errNotSupp, "%s TCP sequence checking failed", verb)
			return
		}
		sc.SetTCPSeqCheck(enabled)
		fmt.Fprintf(&p.out, "%s TCP sequence checking successful", verb)
	}
}

// ctGetTCPSeqChk is dpctl/ct-get-tcp-seq-chk [dp].
func (c *Commands) ctGetTCPSeqChk(args []string, p *dpctlParams) {
	_, ct := c.tracker(args, p, 2, "TCP sequence checking query failed")
	if ct == nil {
		return
	}
	sc, ok := ct.(TCPSeqChecker)
	if !ok {
		c.dpctlError(p, errNotSupp, "TCP sequence checking query failed")
		return
	}
	state := "disabled"
	if sc.TCPSeqCheck() {
		state = "enabled"
	}
	fmt.Fprintf(&p.out, "TCP sequence checking: %s\n", state)
}

// ctSetLimits is dpctl/ct-set-limits [dp] [default=L] [zone=N,limit=L]...
func (c *Commands) ctSetLimits(args []string, p *dpctlParams) {
	i := 0
	if len(args) > 0 && isDatapathName(args[0]) {
		i = 1
	}
	if i >= len(args) {
		c.dpctlError(p, errInval, "too few arguments")
		return
	}
	_, ct := c.tracker(args, p, maxArgsNone, "failed to set conntrack limit")
	if ct == nil {
		return
	}
	var limits []conntrack.ZoneLimit
	if strings.HasPrefix(args[i], "default=") {
		v, ok := scanU32(args[i], "default=")
		if !ok {
			c.dpctlError(p, errInval, "invalid default limit")
			return
		}
		limits = append(limits, conntrack.ZoneLimit{Zone: conntrack.DefaultZoneLimit, Limit: v})
		i++
	}
	for ; i < len(args); i++ {
		zone, limit, msg := parseZoneLimit(args[i])
		if msg != "" {
			c.dpctlError(p, errInval, "%s", msg)
			return
		}
		limits = append(limits, conntrack.ZoneLimit{Zone: int32(zone), Limit: limit})
	}
	ct.SetZoneLimits(limits)
}

// parseZoneLimit parses "zone=N,limit=L" as ct_dpif_parse_zone_limit_tuple
// does; msg is its error text.
func parseZoneLimit(s string) (zone uint16, limit uint32, msg string) {
	var haveZone, haveLimit bool
	for kv := range keyValues(s) {
		if kv.value == "" {
			return 0, 0, "field " + kv.key + " missing value"
		}
		switch kv.key {
		case "zone":
			v, err := parseCUint(kv.value, math.MaxUint16)
			if err {
				return 0, 0, "failed to parse field zone"
			}
			zone, haveZone = uint16(v), true
		case "limit":
			v, err := parseCUint(kv.value, math.MaxUint32)
			if err {
				return 0, 0, "failed to parse field limit"
			}
			limit, haveLimit = uint32(v), true
		default:
			return 0, 0, "invalid zone limit field: " + kv.key
		}
	}
	if !haveZone || !haveLimit {
		return 0, 0, "failed to parse zone limit"
	}
	return zone, limit, ""
}

// parseCUint is Open vSwitch's str_to_u16/str_to_u32 (str_to_llong, base
// 10... with strtoll's base 0: 0x hex and 0 octal): the whole string, no
// sign, at most max. It reports true on error.
func parseCUint(s string, max uint64) (uint64, bool) {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil || v < 0 || uint64(v) > max {
		return 0, true
	}
	return uint64(v), false
}

// ctDelLimits is dpctl/ct-del-limits [dp] zone=N1[,N2]...
func (c *Commands) ctDelLimits(args []string, p *dpctlParams) {
	i := 0
	if len(args) > 0 && isDatapathName(args[0]) {
		i = 1
	}
	if i >= len(args) {
		c.dpctlError(p, errInval, "too few arguments")
		return
	}
	_, ct := c.tracker(args, p, 3, "failed to delete conntrack limit")
	if ct == nil {
		return
	}
	zones, msg := parseLimitZones(args[i])
	if msg != "" {
		c.dpctlError(p, errInval, "%s", msg)
		return
	}
	ct.DelZoneLimits(zones)
}

// parseLimitZones parses "zone=N1[,N2]..." as parse_ct_limit_zones.
func parseLimitZones(s string) ([]uint16, string) {
	if !strings.HasPrefix(s, "zone=") {
		return nil, "invalid argument " + s
	}
	var zones []uint16
	for _, z := range strings.Split(s[len("zone="):], ",") {
		if z == "" {
			continue // strtok_r skips empty fields
		}
		v, ok := scanU16(z, "")
		if !ok {
			return nil, "invalid zone"
		}
		zones = append(zones, v)
	}
	if len(zones) == 0 {
		return nil, "invalid zone" // strtok_r found nothing to scan
	}
	return zones, ""
}

// ctGetLimits is dpctl/ct-get-limits [dp] [zone=N1[,N2]...].
func (c *Commands) ctGetLimits(args []string, p *dpctlParams) {
	i := 0
	if len(args) > 0 && isDatapathName(args[0]) {
		i = 1
	}
	_, ct := c.tracker(args, p, 3, "failed to get conntrack limit")
	if ct == nil {
		return
	}
	var query []uint16
	if i < len(args) {
		zones, msg := parseLimitZones(args[i])
		if msg != "" {
			c.dpctlError(p, errInval, "%s", msg)
			return
		}
		query = zones
	}
	var def uint32
	var zones []conntrack.ZoneLimit
	for _, l := range ct.ZoneLimits(query) {
		if l.Zone == conntrack.DefaultZoneLimit {
			def = l.Limit
		} else {
			zones = append(zones, l)
		}
	}
	if query == nil {
		// Every zone with a limit of its own, by zone as Open vSwitch
		// walks them.
		slices.SortFunc(zones, func(a, b conntrack.ZoneLimit) int { return int(a.Zone - b.Zone) })
	}
	fmt.Fprintf(&p.out, "default limit=%d", def)
	for _, l := range zones {
		fmt.Fprintf(&p.out, "\nzone=%d,limit=%d,count=%d", l.Zone, l.Limit, l.Count)
	}
	p.out.WriteByte('\n')
}
