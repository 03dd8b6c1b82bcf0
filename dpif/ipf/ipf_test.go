package ipf

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/packet"
)

// feed runs frames through Preprocess in order and returns the verdicts
// and the reassembly, if one came.
func feed(t *testing.T, f *IPF, frames [][]byte, zone uint16) ([]Verdict, *Reassembly) {
	t.Helper()
	var vs []Verdict
	var got *Reassembly
	for _, fr := range frames {
		v, r := f.Preprocess(bufferOf(fr, 3), zone)
		vs = append(vs, v)
		if r != nil {
			if got != nil {
				t.Fatalf("two reassemblies from one set")
			}
			got = r
		}
		if (v == Reassembled) != (r != nil) {
			t.Fatalf("verdict %d with reassembly %v", v, r != nil)
		}
	}
	return vs, got
}

func TestNonFragmentPassesWithoutAllocating(t *testing.T) {
	f := New(nil)
	for _, v6 := range []bool{false, true} {
		b := bufferOf(udpFrame(v6, 100, 1), 1)
		allocs := testing.AllocsPerRun(1000, func() {
			if v, r := f.Preprocess(b, 7); v != Pass || r != nil {
				t.Fatalf("non-fragment: %d", v)
			}
		})
		if allocs != 0 {
			t.Errorf("v6=%v: %v allocations per non-fragment packet", v6, allocs)
		}
	}
	if s := f.Status(); s.NFrag != 0 || s.V4.Accepted != 0 {
		t.Errorf("status after non-fragments: %+v", s)
	}
}

func TestReassembleAndRefragment(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		for _, order := range []string{"forward", "reverse", "shuffled"} {
			t.Run(map[bool]string{false: "v4", true: "v6"}[v6]+"/"+order, func(t *testing.T) {
				clock := newClock()
				f := newIPF(clock)
				whole := udpFrame(v6, 4000, 9)
				hdr := 20
				if v6 {
					hdr = 40
				}
				frags := fragmentFrame(whole, v6, 77, evenPieces(len(whole)-14-hdr, 1400))
				setV4ID(whole, v6, 77)
				in := append([][]byte(nil), frags...)
				switch order {
				case "reverse":
					for i, j := 0, len(in)-1; i < j; i, j = i+1, j-1 {
						in[i], in[j] = in[j], in[i]
					}
				case "shuffled":
					rand.New(rand.NewPCG(1, 2)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
					in[len(in)-1], in[0] = in[0], in[len(in)-1]
				}
				vs, r := feed(t, f, in, 5)
				for i, v := range vs[:len(vs)-1] {
					if v != Held {
						t.Fatalf("fragment %d: verdict %d, want Held", i, v)
					}
				}
				if r == nil {
					t.Fatalf("no reassembly; verdicts %v", vs)
				}
				if !bytes.Equal(r.Packet.Data(), whole) {
					t.Fatalf("reassembled %d bytes differ from the original %d", r.Packet.Len(), len(whole))
				}
				if r.Packet.Key.IsFragment() || r.Packet.Key.SrcPort != 40000 || r.Packet.Key.DstPort != 5001 {
					t.Fatalf("reassembled key: frag=%d ports %d->%d", r.Packet.Key.IPFrag, r.Packet.Key.SrcPort, r.Packet.Key.DstPort)
				}
				if s := f.Status(); s.NFrag != uint32(len(frags)) {
					t.Fatalf("num frag %d while the tracker has it, want %d", s.NFrag, len(frags))
				}
				// The tracker's verdict.
				r.Packet.Key.CTState = conntrack.StateTracked | conntrack.StateNew
				r.Packet.Key.CTZone = 5
				r.Packet.Key.CTMark = 42
				pool := testPool()
				out := f.Postprocess(r, pool, nil)
				if len(out) != len(frags) {
					t.Fatalf("%d fragments out, want %d", len(out), len(frags))
				}
				for i, b := range out {
					if !bytes.Equal(b.Data(), frags[i]) {
						t.Errorf("fragment %d changed", i)
					}
					if b.Key.CTState != conntrack.StateTracked|conntrack.StateNew || b.Key.CTZone != 5 || b.Key.CTMark != 42 || b.InPort != 3 {
						t.Errorf("fragment %d: ct_state %#x zone %d mark %d in_port %d", i, b.Key.CTState, b.Key.CTZone, b.Key.CTMark, b.InPort)
					}
					if !b.Key.IsFragment() {
						t.Errorf("fragment %d not parsed as a fragment", i)
					}
					b.Free()
				}
				s := f.Status()
				fs := s.V4
				if v6 {
					fs = s.V6
				}
				if s.NFrag != 0 || fs.Accepted != uint64(len(frags)) || fs.Completed != uint64(len(frags)) {
					t.Errorf("status %+v", s)
				}
				if pool.Stats().Free != testPoolBuffers {
					t.Errorf("pool has %d free after the fragments were freed", pool.Stats().Free)
				}
			})
		}
	}
}

// TestNATReachesFragments: what the tracker changes in the reassembled
// packet (addresses, the L4 header) reaches the fragments, and they
// reassemble into the changed packet.
func TestNATReachesFragments(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		f := New(nil)
		whole := udpFrame(v6, 3000, 3)
		hdr := 20
		if v6 {
			hdr = 40
		}
		frags := fragmentFrame(whole, v6, 9, evenPieces(len(whole)-14-hdr, 1280))
		setV4ID(whole, v6, 9)
		_, r := feed(t, f, frags, 0)
		if r == nil {
			t.Fatal("no reassembly")
		}
		// A stand-in for SNAT: new source address and port, checksums
		// kept right incrementally.
		d := r.Packet.Data()
		l3, l4 := int(r.Packet.Offsets.L3), int(r.Packet.Offsets.L4)
		csumOff := l4 + 6
		old := append([]byte(nil), d[l3+12:l3+16]...)
		newAddr := []byte{198, 18, 9, 9}
		if v6 {
			old = append([]byte(nil), d[l3+8:l3+24]...)
			newAddr = append([]byte(nil), old...)
			newAddr[15] = 0x99
			copy(d[l3+8:], newAddr)
		} else {
			copy(d[l3+12:], newAddr)
			c := packet.IPv4HeaderChecksum(d[l3 : l3+20])
			binary.BigEndian.PutUint16(d[l3+10:], c)
		}
		c := packet.UpdateChecksum(binary.BigEndian.Uint16(d[csumOff:]), old, newAddr)
		c = packet.UpdateChecksum(c, d[l4:l4+2], []byte{0x12, 0x34})
		d[l4], d[l4+1] = 0x12, 0x34
		binary.BigEndian.PutUint16(d[csumOff:], c)
		want := append([]byte(nil), d...)

		out := f.Postprocess(r, testPool(), nil)
		if len(out) != len(frags) {
			t.Fatalf("%d fragments", len(out))
		}
		var again [][]byte
		for i, b := range out {
			if !v6 && !checksumOK(b.Data()) {
				t.Errorf("fragment %d: bad IPv4 header checksum", i)
			}
			again = append(again, append([]byte(nil), b.Data()...))
		}
		f2 := New(nil)
		_, r2 := feed(t, f2, again, 0)
		if r2 == nil {
			t.Fatal("changed fragments do not reassemble")
		}
		if !bytes.Equal(r2.Packet.Data(), want) {
			t.Errorf("v6=%v: refragmented packet differs from the tracker's", v6)
		}
		if r2.Packet.Key.SrcPort != 0x1234 {
			t.Errorf("source port %#x after NAT", r2.Packet.Key.SrcPort)
		}
	}
}

func TestOverlapTooSmallAndLimits(t *testing.T) {
	f := New(nil)
	whole := udpFrame(false, 4000, 1)
	frags := fragmentFrame(whole, false, 1, evenPieces(len(whole)-34, 1400))
	if v, _ := f.Preprocess(bufferOf(frags[0], 1), 2); v != Held {
		t.Fatalf("first: %d", v)
	}
	dup := bufferOf(frags[0], 1)
	if v, _ := f.Preprocess(dup, 2); v != Invalid {
		t.Fatalf("duplicate: %d, want Invalid", v)
	}
	if dup.Key.CTState != conntrack.StateInvalid|conntrack.StateTracked || dup.Key.CTZone != 2 {
		t.Errorf("duplicate's ct_state %#x zone %d", dup.Key.CTState, dup.Key.CTZone)
	}
	// Overlapping the middle of the first without sharing its ends.
	straddle := fragmentFrame(whole, false, 1, []piece{{1000, 2399}})[0]
	if v, _ := f.Preprocess(bufferOf(straddle, 1), 2); v != Invalid {
		t.Fatalf("overlap: %d", v)
	}
	// Too small: a non-last fragment under min-frag (1200).
	small := fragmentFrame(udpFrame(false, 2000, 1), false, 2, []piece{{0, 799}})[0]
	if v, _ := f.Preprocess(bufferOf(small, 1), 2); v != Invalid {
		t.Fatalf("too small: %d", v)
	}
	// A broken header checksum.
	bad := append([]byte(nil), frags[1]...)
	bad[14+10] ^= 0xff
	if v, _ := f.Preprocess(bufferOf(bad, 1), 2); v != Invalid {
		t.Fatalf("bad checksum: %d", v)
	}
	s := f.Status()
	if s.V4.Overlap != 2 || s.V4.TooSmall != 1 || s.V4.Accepted != 1 || s.NFrag != 1 {
		t.Errorf("status %+v", s)
	}
	// max-nfrags: one held, limit 1: the next passes to the tracker.
	if err := f.SetMaxFrags(1); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.Preprocess(bufferOf(frags[1], 1), 2); v != Pass {
		t.Fatalf("over max-nfrags: %d, want Pass", v)
	}
	// Disabled: passes.
	f.SetEnabled(false, false)
	if v, _ := f.Preprocess(bufferOf(frags[2], 1), 2); v != Pass {
		t.Fatalf("disabled: %d", v)
	}
	if err := f.SetMaxFrags(5001); err == nil {
		t.Error("max-nfrags 5001 accepted")
	}
	if err := f.SetMinFrag(true, 399); err == nil {
		t.Error("min-frag 399 accepted")
	}
	if err := f.SetMinFrag(false, 400); err != nil {
		t.Error(err)
	}
	if st := f.Status(); st.V4.Enabled || !st.V6.Enabled || st.MaxFrag != 1 || st.V4.MinFragSize != 400 {
		t.Errorf("settings %+v", st)
	}
}

func TestZoneAndRecircSeparateLists(t *testing.T) {
	f := New(nil)
	whole := udpFrame(false, 2000, 1)
	frags := fragmentFrame(whole, false, 1, evenPieces(len(whole)-34, 1400))
	if v, _ := f.Preprocess(bufferOf(frags[0], 1), 1); v != Held {
		t.Fatal(v)
	}
	if v, _ := f.Preprocess(bufferOf(frags[1], 1), 2); v != Held {
		t.Fatalf("last fragment in another zone completed the set: %d", v)
	}
	b := bufferOf(frags[1], 1)
	b.Key.RecircID = 9
	if v, _ := f.Preprocess(b, 1); v != Held {
		t.Fatalf("last fragment at another recirc_id completed the set: %d", v)
	}
	if v, _ := f.Preprocess(bufferOf(frags[1], 1), 1); v != Reassembled {
		t.Fatalf("matching last fragment: %d", v)
	}
	var lines []string
	f.Dump(func(l ListInfo) bool { lines = append(lines, l.String()); return true })
	want := []string{
		"(src=198.18.0.1,dst=198.19.0.2,recirc_id=0,ip_id=1,dl_type=0x800,zone=1,nw_proto=17,num_fragments=2,state=complete)",
		"(src=198.18.0.1,dst=198.19.0.2,recirc_id=0,ip_id=1,dl_type=0x800,zone=2,nw_proto=17,num_fragments=1,state=last frag)",
		"(src=198.18.0.1,dst=198.19.0.2,recirc_id=9,ip_id=1,dl_type=0x800,zone=1,nw_proto=17,num_fragments=1,state=last frag)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("dump:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestExpiryAndPurge(t *testing.T) {
	clock := newClock()
	f := newIPF(clock)
	whole := udpFrame(true, 3000, 1)
	frags := fragmentFrame(whole, true, 5, evenPieces(len(whole)-54, 1400))
	// An incomplete list: expires after 15 s.
	for _, fr := range frags[1:] {
		if v, _ := f.Preprocess(bufferOf(fr, 1), 0); v != Held {
			t.Fatal(v)
		}
	}
	clock.advance(ListTimeout)
	f.Expire()
	if s := f.Status(); s.NFrag != uint32(len(frags)-1) {
		t.Fatalf("expired early: %+v", s)
	}
	clock.advance(time.Millisecond)
	f.Expire()
	if s := f.Status(); s.NFrag != 0 || s.V6.Expired != uint64(len(frags)-1) {
		t.Fatalf("after expiry: %+v", s)
	}
	// A completed list never handed back: purged 10 s after its expiry,
	// and Postprocess then emits nothing.
	_, r := feed(t, f, frags, 0)
	if r == nil {
		t.Fatal("no reassembly")
	}
	clock.advance(ListTimeout + time.Second)
	f.Expire()
	if s := f.Status(); s.NFrag != uint32(len(frags)) {
		t.Fatalf("completed list expired: %+v", s)
	}
	clock.advance(PurgeDelay)
	f.Expire()
	if s := f.Status(); s.NFrag != 0 || s.V6.Purged != uint64(len(frags)) {
		t.Fatalf("after purge: %+v", s)
	}
	if out := f.Postprocess(r, testPool(), nil); len(out) != 0 {
		t.Fatalf("purged list emitted %d fragments", len(out))
	}
}

func TestOversizedSetFails(t *testing.T) {
	f := New(nil)
	if err := f.SetMinFrag(false, 400); err != nil {
		t.Fatal(err)
	}
	// Fragments claiming a packet beyond 65535 bytes: offset 65000, 1000
	// bytes, plus a first fragment.
	whole := udpFrame(false, 1500, 1)
	first := fragmentFrame(whole, false, 3, []piece{{0, 1199}})[0]
	tail := make([]byte, 14+20+1000)
	copy(tail, first[:34])
	binary.BigEndian.PutUint16(tail[14+2:], 1020)
	binary.BigEndian.PutUint16(tail[14+6:], 65000/8)
	tail[14+10], tail[14+11] = 0, 0
	c := packet.IPv4HeaderChecksum(tail[14:34])
	binary.BigEndian.PutUint16(tail[14+10:], c)
	f.Preprocess(bufferOf(first, 1), 0)
	f.Preprocess(bufferOf(tail, 1), 0)
	// Fill the gap with fragments of 1000 bytes until complete.
	for off := 1200; off < 65000; off += 1000 {
		end := min(off+1000, 65000) - 1
		fr := make([]byte, 14+20+end-off+1)
		copy(fr, first[:34])
		binary.BigEndian.PutUint16(fr[14+2:], uint16(20+end-off+1))
		binary.BigEndian.PutUint16(fr[14+6:], uint16(off/8)|0x2000)
		fr[14+10], fr[14+11] = 0, 0
		c := packet.IPv4HeaderChecksum(fr[14:34])
		binary.BigEndian.PutUint16(fr[14+10:], c)
		if v, r := f.Preprocess(bufferOf(fr, 1), 0); v == Reassembled || r != nil {
			t.Fatal("a packet over 64 KiB was reassembled")
		}
	}
	if s := f.Status(); s.ReassFail != 1 {
		t.Errorf("status %+v", s)
	}
	f.Close()
	if s := f.Status(); s.NFrag != 0 {
		t.Errorf("Close left %d fragments", s.NFrag)
	}
}

func TestStatusFormat(t *testing.T) {
	got := New(nil).Status().Format()
	want := `        Fragmentation Module Status
        ---------------------------
        v4 enabled: 1
        v6 enabled: 1
        max num frags (v4/v6): 1000
        num frag: 0
        min v4 frag size: 1200
        v4 frags accepted: 0
        v4 frags completed: 0
        v4 frags expired: 0
        v4 frags too small: 0
        v4 frags overlapped: 0
        v4 frags purged: 0
        min v6 frag size: 1280
        v6 frags accepted: 0
        v6 frags completed: 0
        v6 frags expired: 0
        v6 frags too small: 0
        v6 frags overlapped: 0
        v6 frags purged: 0
`
	if got != want {
		t.Errorf("format:\n%s\nwant:\n%s", got, want)
	}
}

// TestConcurrentUse: several goroutines (PMDs) reassemble their own
// packets at once while the control plane reads the status and dumps the
// lists and the expiry runs; every set completes once.
func TestConcurrentUse(t *testing.T) {
	f := New(nil)
	f.Start()
	defer f.Close()
	const workers, sets = 4, 50
	done := make(chan int)
	for w := range workers {
		go func() {
			pool := testPool()
			n := 0
			for s := range sets {
				v6 := s%2 == 0
				hdr := 20
				if v6 {
					hdr = 40
				}
				whole := udpFrame(v6, 2500, byte(s))
				frags := fragmentFrame(whole, v6, uint32(w<<16|s), evenPieces(len(whole)-14-hdr, 1280))
				for _, fr := range frags {
					if v, r := f.Preprocess(bufferOf(fr, uint32(w)), uint16(w)); v == Reassembled {
						for _, b := range f.Postprocess(r, pool, nil) {
							b.Free()
						}
						n++
					}
				}
			}
			done <- n
		}()
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				f.Status()
				f.Dump(func(ListInfo) bool { return true })
				f.Expire()
			}
		}
	}()
	total := 0
	for range workers {
		total += <-done
	}
	close(stop)
	if total != workers*sets {
		t.Errorf("%d sets reassembled, want %d", total, workers*sets)
	}
	if s := f.Status(); s.NFrag != 0 {
		t.Errorf("%d fragments still held", s.NFrag)
	}
}

// TestIPv6ExtensionHeaderBeforeFragment: a destination options header
// before the fragment header stays in the reassembled packet, which
// carries no fragment header.
func TestIPv6ExtensionHeaderBeforeFragment(t *testing.T) {
	whole := udpFrame(true, 3000, 4)
	// Insert an 8-byte destination options header after the IPv6 header.
	withOpts := make([]byte, 0, len(whole)+8)
	withOpts = append(withOpts, whole[:14+40]...)
	withOpts = append(withOpts, packet.ProtoUDP, 0, 1, 4, 0, 0, 0, 0) // next UDP, len 0 (8 bytes), PadN
	withOpts = append(withOpts, whole[14+40:]...)
	withOpts[14+6] = packet.ProtoDstOpts
	binary.BigEndian.PutUint16(withOpts[14+4:], uint16(len(withOpts)-14-40))
	data := withOpts[14+48:]
	var frames [][]byte
	for _, p := range evenPieces(len(data), 1400) {
		chunk := data[p.first : p.last+1]
		f := make([]byte, 0, 14+48+8+len(chunk))
		f = append(f, withOpts[:14+48]...)
		f[14+48-8] = packet.ProtoFragment // the options header now names the fragment header
		offlg := uint16(p.first)
		if p.last+1 < len(data) {
			offlg |= 1
		}
		f = append(f, packet.ProtoUDP, 0, byte(offlg>>8), byte(offlg), 0, 0, 0, 9)
		f = append(f, chunk...)
		binary.BigEndian.PutUint16(f[14+4:], uint16(len(f)-14-40))
		frames = append(frames, f)
	}
	f := New(nil)
	_, r := feed(t, f, frames, 0)
	if r == nil {
		t.Fatal("no reassembly")
	}
	if !bytes.Equal(r.Packet.Data(), withOpts) {
		t.Fatalf("reassembled packet differs from the original")
	}
	if r.Packet.Key.IsFragment() || r.Packet.Key.DstPort != 5001 {
		t.Errorf("reassembled key: frag %d dport %d", r.Packet.Key.IPFrag, r.Packet.Key.DstPort)
	}
	out := f.Postprocess(r, testPool(), nil)
	for i, b := range out {
		if !bytes.Equal(b.Data(), frames[i]) {
			t.Errorf("fragment %d changed", i)
		}
	}
}
