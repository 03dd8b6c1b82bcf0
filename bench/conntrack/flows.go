package conntrack

import (
	"fmt"
	"strings"
)

// Ports are the OpenFlow port numbers the benchmark gives the client's and
// the server's switch ports (ofport_request).
const (
	ClientPort = 1
	ServerPort = 2
)

// FirewallFlows is the classic stateful firewall: every IPv4 packet goes
// through ct in zone 0 and on to table 1, where the client may open
// connections (committed) and packets of established connections pass
// both ways; ARP switches with NORMAL; everything else is dropped.
func FirewallFlows() string {
	return strings.Join([]string{
		"table=0,priority=100,ip,actions=ct(table=1)",
		"table=0,priority=10,arp,actions=NORMAL",
		"table=0,priority=0,actions=drop",
		fmt.Sprintf("table=1,priority=100,ip,ct_state=+trk+new,in_port=%d,actions=ct(commit),output:%d", ClientPort, ServerPort),
		fmt.Sprintf("table=1,priority=100,ip,ct_state=+trk+est,in_port=%d,actions=output:%d", ClientPort, ServerPort),
		fmt.Sprintf("table=1,priority=100,ip,ct_state=+trk+est,in_port=%d,actions=output:%d", ServerPort, ClientPort),
		"table=1,priority=0,actions=drop",
	}, "\n") + "\n"
}

// PlainFlows forwards what FirewallFlows lets through, without ct: IPv4
// from each port to the other, ARP with NORMAL, the rest dropped. It is
// the "without conntrack" reference of the same shape (two tables).
func PlainFlows() string {
	return strings.Join([]string{
		"table=0,priority=100,ip,actions=resubmit(,1)",
		"table=0,priority=10,arp,actions=NORMAL",
		"table=0,priority=0,actions=drop",
		fmt.Sprintf("table=1,priority=100,ip,in_port=%d,actions=output:%d", ClientPort, ServerPort),
		fmt.Sprintf("table=1,priority=100,ip,in_port=%d,actions=output:%d", ServerPort, ClientPort),
		"table=1,priority=0,actions=drop",
	}, "\n") + "\n"
}

// CountConnections counts the entries of `ovs-appctl dpctl/dump-conntrack`
// output that are established TCP connections to port dstPort (Open
// vSwitch's format: "tcp,orig=(src=...,dst=...,sport=...,dport=N),
// reply=(...),protoinfo=(state=ESTABLISHED)"); connections closing are
// left out.
func CountConnections(dump string, dstPort int) int {
	want := fmt.Sprintf(",dport=%d)", dstPort)
	n := 0
	for _, line := range strings.Split(dump, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "tcp,orig=(") || !strings.Contains(line, "state=ESTABLISHED") {
			continue
		}
		orig, _, ok := strings.Cut(line[len("tcp,orig=("):], ")")
		if ok && strings.HasSuffix(orig+")", want) {
			n++
		}
	}
	return n
}

// BytesPerConnection is the growth of a resident set from before to after
// over the connections held, in bytes (0 for no connections).
func BytesPerConnection(before, after uint64, conns int) float64 {
	if conns <= 0 {
		return 0
	}
	return (float64(after) - float64(before)) / float64(conns)
}

// MemoryShowValue returns the value of key in `ovs-appctl memory/show`
// output ("key:value key:value ..."), and whether it is there.
func MemoryShowValue(out, key string) (uint64, bool) {
	for _, f := range strings.Fields(out) {
		k, v, ok := strings.Cut(f, ":")
		if !ok || k != key {
			continue
		}
		var n uint64
		if _, err := fmt.Sscanf(v, "%d", &n); err != nil {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
