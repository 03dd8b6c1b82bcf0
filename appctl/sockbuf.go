package appctl

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"gvs/metrics/source"
)

// sockBufShow is gvs/sock-buf-show [BRIDGE]: per port, the socket buffer
// size requested with userspace-sock-buf-size, the sizes in effect as the
// kernel reports them, and the packets the kernel dropped before gvs read
// them (AF_PACKET tp_drops; AF_XDP ring drops) — the losses that a too
// small buffer causes.
func (c *Commands) sockBufShow(args []string) (string, error) {
	var bridges []source.Bridge
	for _, br := range c.sw.Bridges() {
		if len(args) == 0 || br.Name == args[0] {
			bridges = append(bridges, br)
		}
	}
	if len(args) == 1 && len(bridges) == 0 {
		return "", errorf("no such bridge")
	}
	dp := c.sw.Datapath()
	if dp == nil {
		return "", nil
	}
	ports := dp.Ports()
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "bridge\tport\ttype\trequested\trcvbuf\tsndbuf\tkernel_rx_drops\ttx_drops")
	for _, br := range bridges {
		for _, p := range br.Ports {
			if !p.InDatapath {
				continue
			}
			for _, dpp := range ports {
				if dpp.No != p.DPPort {
					continue
				}
				bufs := source.SocketBuffersOf(dpp.Device, p.SocketBufferRequest)
				st := dpp.Device.Stats()
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", br.Name, p.Interface, netdevType(p.Type),
					sizeOrDefault(bufs.Requested, "default"), sizeOrDefault(bufs.Receive, "-"), sizeOrDefault(bufs.Send, "-"),
					st.RxKernelDrops, st.TxDrops)
			}
		}
	}
	w.Flush()
	return b.String(), nil
}

func sizeOrDefault(n int, zero string) string {
	if n == 0 {
		return zero
	}
	return fmt.Sprint(n)
}
