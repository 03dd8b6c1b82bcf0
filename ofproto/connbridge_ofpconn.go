//go:build ofpconn

package ofproto

import "gvs/ofproto/connmgr"

// Until connmgr names ofproto/ofp's messages (its stand-ins are empty
// types), ConnBridge implements connmgr.Bridge only with the ofpconn build tag.
var _ connmgr.Bridge = (*ConnBridge)(nil)

// CommitBundle implements connmgr.Bridge.
func (c *ConnBridge) CommitBundle(msgs []connmgr.BundleMsg, flags uint16, o connmgr.Origin) (int, error) {
	out := make([]BundleMsg, len(msgs))
	for i, m := range msgs {
		var err error
		switch {
		case m.FlowMod != nil:
			out[i].FlowMod, err = c.pipelineFlowMod(m.FlowMod, o)
		case m.GroupMod != nil:
			out[i].GroupMod, err = pipelineGroupMod(m.GroupMod)
		case m.PortMod != nil:
			out[i].PortMod = &PortMod{OFPort: m.PortMod.PortNo, HWAddr: m.PortMod.HWAddr,
				Config: xlate.PortFlags(m.PortMod.Config), Mask: xlate.PortFlags(m.PortMod.Mask)}
		case m.PacketOut != nil:
			out[i].PacketOut, err = c.packetOut(m.PacketOut)
		}
		if err != nil {
			return i, err
		}
	}
	return c.b.CommitBundle(out, flags&connmgr.BundleAtomic != 0)
}
