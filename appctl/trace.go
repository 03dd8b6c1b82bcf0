package appctl

import (
	"encoding/hex"
	"fmt"
	"strings"

	"gvs/metrics/source"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/packet"
)

// ofprotoTrace is ofproto/trace [dp] BRIDGE|odp_flow br_flow|odp_flow
// [-generate|packet]: translation of one flow through a bridge's tables,
// printed as Open vSwitch's ofproto/trace does (ofproto-dpif-trace.c's
// forms: "bridge br_flow", "odp_flow", "dpname odp_flow", each with an
// optional packet in hex; options are accepted and ignored).
func (c *Commands) ofprotoTrace(argv []string) (string, error) {
	var args []string
	var ctNext []uint32
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--ct-next":
			if i+1 >= len(argv) {
				return "", errorf("Missing argument for option %s", a)
			}
			i++
			st, err := xlate.ParseCTNext(argv[i])
			if err != nil {
				return "", errorf("%s", err.Error())
			}
			ctNext = append(ctNext, st)
		case a == "-generate" || a == "--generate" || a == "-names" || a == "--names" ||
			a == "-consistent" || a == "--consistent":
		case strings.HasPrefix(a, "-"):
			return "", errorf("%s: unknown option", a)
		default:
			args = append(args, a)
		}
	}
	if len(args) > 3 {
		return "", errorf("too many arguments")
	}
	var frame []byte
	if len(args) > 1 {
		if b, err := hex.DecodeString(args[len(args)-1]); err == nil && len(b) >= 14 {
			frame, args = b, args[:len(args)-1]
		} else if len(args) > 2 {
			return "", errorf("Trailing garbage in packet data")
		}
	}
	if len(args) == 0 {
		return "", errorf("Syntax error")
	}
	var br source.Bridge
	var flow mf.Flow
	last := args[len(args)-1]
	if key, err := xlate.ParseODPFlow(last); err == nil && (len(args) == 1 || isDatapathName(args[0])) {
		// An odp flow: its datapath in_port names the bridge.
		found := false
		for _, b := range c.sw.Bridges() {
			if b.OpenFlow == nil {
				continue
			}
			if p := b.OpenFlow.PortByDatapath(key.InPort); p != nil {
				br, found = b, true
				flow.Key = key
				flow.InPort = p.OFPort
			}
		}
		if !found {
			return "", errorf("no OpenFlow port for datapath port %d", key.InPort)
		}
	} else if len(args) != 2 {
		return "", errorf("Syntax error (or the bridge name was omitted)")
	} else {
		var ok bool
		if br, ok = c.bridge(args[0]); !ok {
			return "", errorf("%s: unknown bridge", args[0])
		}
		ports := func(name string) (uint32, bool) {
			for _, p := range br.OpenFlow.Ports() {
				if p.Name == name {
					return p.OFPort, true
				}
			}
			return 0, false
		}
		f, err := mf.ParseExactFlow(last, ports)
		if err != nil {
			return "", errorf("Bad openflow flow syntax: %v", err)
		}
		flow = f
	}
	if frame != nil {
		// The packet's fields, the flow's metadata (pkt_metadata_from_flow
		// and flow_extract).
		md := flow
		packet.Parse(frame, &flow.Key)
		flow.InPort, flow.Metadata, flow.Regs = md.InPort, md.Metadata, md.Regs
		flow.TunID, flow.PktMark, flow.RecircID, flow.DPHash = md.TunID, md.PktMark, md.RecircID, md.DPHash
	}
	return xlate.TraceText(br.OpenFlow, flow, xlate.TraceOptions{
		FormatFlow:   func(f *mf.Flow) string { return f.Format() },
		FormatMatch:  func(m *mf.Match) string { return m.Format(mf.DefaultPriority) },
		FormatAction: formatAction,
		Packet:       frame,
		CTNext:       ctNext,
		Recirc:       br.OpenFlow.RecircTable(),
	}), nil
}

// formatAction prints one action as ovs-ofctl does.
func formatAction(a xlate.Action) string {
	if x, ok := any(a).(ofpact.Action); ok {
		return ofpact.Format([]ofpact.Action{x})
	}
	return fmt.Sprint(a)
}
