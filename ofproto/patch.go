package ofproto

import "gvs/ofproto/xlate"

// Patch ports (Interface type=patch, options:peer) have no datapath
// port: translation continues in the peer bridge (xlate.PatchPort). The
// switch pairs them after every port change in any bridge, as Open
// vSwitch's ofport_update_peer: a patch port's peer is the port named by
// its options:peer, in any bridge of the same datapath type, provided
// that port is a patch port whose options:peer names it back. A change
// of pairing republishes the bridge's ports and revalidates its flows.

// pairPatchesLocked pairs every patch port of every bridge. Caller holds
// s.mu (and no Bridge.mu).
func (s *Switch) pairPatchesLocked() {
	type end struct {
		b *Bridge
		p *xlate.Port
	}
	byName := map[string]end{}
	havePatch := false
	for _, b := range s.bridges {
		for _, p := range b.Ports() {
			byName[p.Name] = end{b, p}
			havePatch = havePatch || p.Patch != nil
		}
	}
	if !havePatch {
		return
	}
	for _, b := range s.bridges {
		peers := map[string]*xlate.PatchPeer{}
		for _, p := range b.Ports() {
			if p.Patch == nil {
				continue
			}
			q, ok := byName[p.Patch.PeerName]
			if !ok || q.p.Patch == nil || q.p.Patch.PeerName != p.Name || q.b.datapathType() != b.datapathType() || q.p == p {
				continue
			}
			peers[p.Name] = &xlate.PatchPeer{Bridge: q.b, OFPort: q.p.OFPort}
		}
		b.setPatchPeers(peers)
	}
}

// setPatchPeers gives each patch port of the bridge its peer (nil for
// those not in peers), republishing the ports and revalidating when that
// changed anything. It does not call the ports hook: the switch calls it
// from there.
func (b *Bridge) setPatchPeers(peers map[string]*xlate.PatchPeer) {
	b.mu.Lock()
	changed := false
	for name, p := range b.byName {
		if p.Patch == nil {
			continue
		}
		want := peers[name]
		have := p.Patch.Peer
		if have == nil && want == nil || have != nil && want != nil && have.Bridge == want.Bridge && have.OFPort == want.OFPort {
			continue
		}
		np := *p
		pp := *p.Patch
		pp.Peer = want
		np.Patch = &pp
		b.byName[name] = &np
		changed = true
	}
	if changed {
		b.publishPortsLocked()
	}
	b.mu.Unlock()
	if changed {
		b.notifyChanged()
	}
}

// PatchError is what Open vSwitch writes to Interface.error for a patch
// port without a usable peer ("" when it has one, or is no patch port).
func (b *Bridge) PatchError(name string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byName[name]
	if p == nil || p.Patch == nil || p.Patch.Peer != nil {
		return ""
	}
	return "No usable peer '" + p.Patch.PeerName + "' exists in '" + b.dpType + "' datapath."
}

// PatchStats returns a patch port's counters (false for any other port).
func (b *Bridge) PatchStats(name string) (xlate.PatchStats, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byName[name]
	if p == nil || p.Patch == nil {
		return xlate.PatchStats{}, false
	}
	return p.Patch.Counters.Snapshot(), true
}

// SetDatapathType changes the bridge's datapath type (Bridge.datapath_type
// changed): its patch ports pair again, within the new type.
func (b *Bridge) SetDatapathType(t string) {
	b.mu.Lock()
	changed := b.dpType != t
	b.dpType = t
	b.mu.Unlock()
	if changed {
		b.portsChanged()
	}
}

func (b *Bridge) datapathType() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dpType
}
