package ofp

import (
	"gvs/ofproto/ofpact"
	"reflect"
	"testing"
)

func TestContinuationRoundTrip(t *testing.T) {
	c := &Continuation{
		Bridge:      [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		Stack:       [][]byte{{0, 0, 0, 5}, {1, 2}},
		Mirrors:     3,
		Conntracked: true,
		Steps: []ContinuationStep{
			{TableID: 0, Cookie: 0, Actions: []Action{&ofpact.Output{Port: 1, MaxLen: 0xffff}}},
			{TableID: 10, Cookie: 0x1234, Actions: []Action{&ofpact.Output{Port: 2, MaxLen: 0xffff}}},
		},
		ODPPort: 7,
	}
	b := c.Append(nil, Version15)
	got, err := ParseContinuation(b, Version15)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", got, c)
	}
	// The continuation inside an NXT_PACKET_IN2 as ovs-ofctl prints it.
	pin := &PacketIn{Format: PacketInNXT2, Packet: make([]byte, 60), TotalLen: 60, BufferID: BufferNone,
		TableID: 3, Cookie: CookieNone, Reason: ReasonAction, Userdata: []byte{1, 2}, Continuation: b}
	msg, err := Encode(Version15, 0, pin)
	if err != nil {
		t.Fatal(err)
	}
	out := ofpPrint(t, msg, 2)
	for _, want := range []string{"NXT_PACKET_IN2 (OF1.5) (xid=0x0): table_id=3 total_len=60  (via action) data_len=60 (unbuffered)", "userdata=01.02",
		// Open vSwitch writes its struct uuid in host order; gvs's
		// bridge id is opaque bytes, printed as OVS reads them.
		" continuation.bridge=04030201-0807-0605-0c0b-0a09100f0e0d", " continuation.stack=(top) 0x5 0x102 (bottom)",
		" continuation.actions=unroll_xlate(table=0, cookie=0),output:1,unroll_xlate(table=10, cookie=4660),output:2", " continuation.mirrors=0x3",
		" continuation.conntracked=true", " continuation.odp_port=7"} {
		if !contains(out, want) {
			t.Errorf("ofp-print lacks %q:\n%s", want, out)
		}
	}
	roundTrip(t, "packet-in2 with continuation", msg)
}
