package openflow

import (
	"bufio"
	"fmt"
	"io"
)

// Shape of a generated flow table: a three-table pipeline of the kind a
// router-like controller installs.
//
//	table 0: in_port + dl_dst exact matches classify a packet into a
//	         network (metadata), then resubmit to table 1;
//	table 1: ip, metadata, nw_dst /32 routes rewrite the destination MAC,
//	         set a next-hop register, dec_ttl, resubmit to table 2;
//	table 2: reg0 next hops output to a port;
//
// plus one priority-0 drop in tables 0 and 1. Every match is distinct.
const (
	// GenPorts is how many ingress/egress ports the generated flows name.
	GenPorts = 8
	// genNetworks is how many metadata values (networks) table 0 assigns.
	genNetworks = 16
	// genFixed is the flows not generated per item (the two drops).
	genFixed = 2
)

// GenCounts splits n flows over the three tables: 30% classification,
// 60% routes, the rest (at least one) next hops and the two drops.
func GenCounts(n int) (classify, routes, nextHops int, err error) {
	if n < genFixed+3 {
		return 0, 0, 0, fmt.Errorf("need at least %d flows, got %d", genFixed+3, n)
	}
	if n > 1<<20 {
		return 0, 0, 0, fmt.Errorf("at most %d flows, got %d", 1<<20, n)
	}
	items := n - genFixed
	classify = max(1, items*3/10)
	routes = max(1, items*6/10)
	nextHops = items - classify - routes
	return classify, routes, nextHops, nil
}

// Generate writes n flows in `ovs-ofctl add-flows` syntax (OpenFlow 1.5:
// set_field and registers), deterministic for a given n. Addresses come
// from 198.18.0.0/15 (routes) and locally administered MACs.
func Generate(w io.Writer, n int) error {
	classify, routes, nextHops, err := GenCounts(n)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	for i := range classify {
		port := i%GenPorts + 1
		fmt.Fprintf(bw, "table=0,priority=100,in_port=%d,dl_dst=%s actions=set_field:0x%x->metadata,resubmit(,1)\n",
			port, genMAC(0x02, i), i%genNetworks+1)
	}
	fmt.Fprintln(bw, "table=0,priority=0 actions=drop")
	for i := range routes {
		// 198.18.0.0/15 has 131,072 addresses; routes beyond that
		// repeat an address in another network, still a distinct match.
		addr := i % (1 << 17)
		network := i/(1<<17) + i%genNetworks + 1
		hop := i%nextHops + 1
		fmt.Fprintf(bw, "table=1,priority=100,ip,metadata=0x%x,nw_dst=198.%d.%d.%d actions=set_field:%s->eth_dst,set_field:0x%x->reg0,dec_ttl,resubmit(,2)\n",
			network, 18+addr>>16, addr>>8&0xff, addr&0xff, genMAC(0x06, hop), hop)
	}
	fmt.Fprintln(bw, "table=1,priority=0 actions=drop")
	for i := range nextHops {
		fmt.Fprintf(bw, "table=2,priority=100,reg0=0x%x actions=output:%d\n", i+1, i%GenPorts+1)
	}
	return bw.Flush()
}

// genMAC is a locally administered unicast MAC with first octet first
// (0x02, 0x06, ...) and i in the low 32 bits.
func genMAC(first byte, i int) string {
	return fmt.Sprintf("%02x:00:%02x:%02x:%02x:%02x", first, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
}
