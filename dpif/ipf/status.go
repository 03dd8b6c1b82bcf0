package ipf

import (
	"fmt"
	"net/netip"
	"strings"
)

// FamilyStatus is one family's part of Status (ipf_proto_status).
type FamilyStatus struct {
	Enabled     bool
	MinFragSize uint32
	Accepted    uint64
	Completed   uint64 // sent after their set went through the tracker
	Expired     uint64
	TooSmall    uint64
	Overlap     uint64
	Purged      uint64
}

// Status is what dpctl/ipf-get-status reports (ipf_status), with two
// counters of gvs's own: fragments dropped on emission for want of a
// buffer, and complete sets that could not be reassembled (over 64 KiB).
type Status struct {
	V4, V6         FamilyStatus
	NFrag, MaxFrag uint32
	NoBuffer       uint64
	ReassFail      uint64
}

// Status reads the counters and settings.
func (f *IPF) Status() Status {
	fs := func(x *family) FamilyStatus {
		return FamilyStatus{
			Enabled:     x.enabled.Load(),
			MinFragSize: x.minFrag.Load(),
			Accepted:    x.accepted.Load(),
			Completed:   x.completed.Load(),
			Expired:     x.expired.Load(),
			TooSmall:    x.tooSmall.Load(),
			Overlap:     x.overlap.Load(),
			Purged:      x.purged.Load(),
		}
	}
	return Status{
		V4:        fs(&f.v4),
		V6:        fs(&f.v6),
		NFrag:     uint32(f.nfrag.Load()),
		MaxFrag:   f.maxFrags.Load(),
		NoBuffer:  f.noBuffer.Load(),
		ReassFail: f.reassErr.Load(),
	}
}

// Format is the text of ovs-appctl dpctl/ipf-get-status, as lib/dpctl.c
// prints it.
func (s Status) Format() string {
	var b strings.Builder
	b01 := func(v bool) int {
		if v {
			return 1
		}
		return 0
	}
	p := func(format string, a ...any) { fmt.Fprintf(&b, "        "+format+"\n", a...) }
	p("Fragmentation Module Status")
	p("---------------------------")
	p("v4 enabled: %d", b01(s.V4.Enabled))
	p("v6 enabled: %d", b01(s.V6.Enabled))
	p("max num frags (v4/v6): %d", s.MaxFrag)
	p("num frag: %d", s.NFrag)
	for _, x := range []struct {
		name string
		fs   *FamilyStatus
	}{{"v4", &s.V4}, {"v6", &s.V6}} {
		p("min %s frag size: %d", x.name, x.fs.MinFragSize)
		p("%s frags accepted: %d", x.name, x.fs.Accepted)
		p("%s frags completed: %d", x.name, x.fs.Completed)
		p("%s frags expired: %d", x.name, x.fs.Expired)
		p("%s frags too small: %d", x.name, x.fs.TooSmall)
		p("%s frags overlapped: %d", x.name, x.fs.Overlap)
		p("%s frags purged: %d", x.name, x.fs.Purged)
	}
	return b.String()
}

// ListInfo is one fragment list as dpctl/ipf-get-status -m shows it.
type ListInfo struct {
	Src, Dst     netip.Addr
	RecircID     uint32
	IPID         uint32
	DLType       uint16
	Zone         uint16
	Proto        uint8
	NumFragments int
	State        string
}

// String is lib/ipf.c's ipf_dump_create text.
func (l ListInfo) String() string {
	return fmt.Sprintf("(src=%s,dst=%s,recirc_id=%d,ip_id=%d,dl_type=0x%x,zone=%d,nw_proto=%d,num_fragments=%d,state=%s)",
		l.Src, l.Dst, l.RecircID, l.IPID, l.DLType, l.Zone, l.Proto, l.NumFragments, l.State)
}

// Dump calls fn for each list held, oldest first, until fn returns false.
// fn runs without the IPF's lock.
func (f *IPF) Dump(fn func(ListInfo) bool) {
	f.mu.Lock()
	infos := make([]ListInfo, 0, len(f.lists))
	for l := f.head; l != nil; l = l.next {
		li := ListInfo{
			RecircID: l.key.recircID, IPID: l.key.id, DLType: l.key.dlType,
			Zone: l.key.zone, Proto: l.key.proto,
			NumFragments: len(l.frags), State: stateNames[l.state],
		}
		if l.v6 {
			li.Src, li.Dst = netip.AddrFrom16(l.key.src), netip.AddrFrom16(l.key.dst)
		} else {
			li.Src = netip.AddrFrom4([4]byte(l.key.src[:4]))
			li.Dst = netip.AddrFrom4([4]byte(l.key.dst[:4]))
		}
		infos = append(infos, li)
	}
	f.mu.Unlock()
	for _, li := range infos {
		if !fn(li) {
			return
		}
	}
}
