package measure

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"gvs/bench/topo"
)

// SNMP holds the counters of one network namespace's /proc/net/snmp,
// keyed "Proto:Name" ("Udp:InErrors"). The file is per namespace.
type SNMP map[string]int64

// ParseSNMP reads /proc/net/snmp: per protocol a line of names followed by
// a line of values.
func ParseSNMP(text string) (SNMP, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	out := SNMP{}
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || len(names) != len(values) || names[0] != values[0] || !strings.HasSuffix(names[0], ":") {
			return nil, fmt.Errorf("snmp: malformed lines %q / %q", lines[i], lines[i+1])
		}
		for j := 1; j < len(names); j++ {
			v, err := strconv.ParseInt(values[j], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("snmp: %s%s: %w", names[0], names[j], err)
			}
			out[names[0]+names[j]] = v
		}
	}
	if _, ok := out["Udp:InErrors"]; !ok {
		return nil, fmt.Errorf("snmp: no Udp:InErrors")
	}
	return out, nil
}

// ReadSNMP reads /proc/net/snmp inside namespace ns.
func ReadSNMP(ctx context.Context, ns string) (SNMP, error) {
	out, err := topo.Run(ctx, ns, "cat", "/proc/net/snmp")
	if err != nil {
		return nil, err
	}
	return ParseSNMP(out)
}

// ReceiverDrops counts the UDP datagrams that reached the receiving host's
// UDP layer between two snapshots of its namespace but were never read by
// an application:
//
//   - dropped by a socket (Udp:InErrors, which includes a full receive
//     buffer, Udp:RcvbufErrors, and bad checksums), plus
//   - still queued when the receiver closed its socket: datagrams delivered
//     to UDP (Ip:InDelivers less Tcp:InSegs and Icmp:InMsgs, the only
//     other protocols in the namespace) less those read (Udp:InDatagrams),
//     sent to a closed port (Udp:NoPorts) or dropped (Udp:InErrors).
//
// What is lost before the UDP layer (in the switch, the veths, IP
// reassembly of a datagram missing a fragment) is not counted.
func ReceiverDrops(before, after SNMP) int64 {
	d := func(k string) int64 { return after[k] - before[k] }
	dropped := d("Udp:InErrors")
	unread := d("Ip:InDelivers") - d("Tcp:InSegs") - d("Icmp:InMsgs") - d("Udp:InDatagrams") - d("Udp:NoPorts") - dropped
	return dropped + max(0, unread)
}
