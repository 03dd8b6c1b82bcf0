//go:build ofpconn

package dpadapter

import (
	"fmt"

	"gvs/bridge"
	"gvs/ofproto"
	"gvs/ofproto/connmgr"
)

// Until connmgr names ofproto/ofp's messages, the adapter offers its
// bridges to connection managers only with the ofpconn build tag.
var _ bridge.OpenFlowDatapath = (*Datapath)(nil)

// OpenFlowBridge implements bridge.OpenFlowDatapath: the bridge, emptied,
// handed to its connection manager.
func (d *Datapath) OpenFlowBridge(name string, events connmgr.Events) (connmgr.Bridge, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	br := d.bridges[name]
	if br == nil {
		return nil, fmt.Errorf("%w: %s", ofproto.ErrNoBridge, name)
	}
	cb := br.Connect(events)
	if d.conns == nil {
		d.conns = map[string]*ofproto.ConnBridge{}
	}
	d.conns[name] = cb
	return cb, nil
}

// SetDatapathID implements bridge.OpenFlowDatapath.
func (d *Datapath) SetDatapathID(name string, id uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cb := d.conns[name]; cb != nil {
		cb.SetDatapathID(id)
	}
}
