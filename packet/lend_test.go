package packet

import (
	"bytes"
	"testing"
)

type recordingLender struct{ returned []int }

func (l *recordingLender) Return(token int) { l.returned = append(l.returned, token) }

func TestLendForwardsInPlaceAndReturnsOnPut(t *testing.T) {
	p, err := NewPool(PoolConfig{Buffers: 2, FrameSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	ring := bytes.Repeat([]byte{0xee}, 256)
	copy(ring[100:], []byte("frame-bytes"))
	l := &recordingLender{}
	b := p.Get()
	own := &b.Room()[0]
	b.Lend(ring, 100, 11, l, 7)
	if !b.Borrowed() || string(b.Data()) != "frame-bytes" || b.Headroom() != 100 || b.Tailroom() != 256-111 {
		t.Fatalf("lent buffer: %q headroom %d tailroom %d", b.Data(), b.Headroom(), b.Tailroom())
	}
	copy(b.Prepend(2), "<<") // writes into the lender's memory: no copy
	if string(ring[98:111]) != "<<frame-bytes" {
		t.Fatalf("prepend did not write in place: %q", ring[98:111])
	}
	p.Put(b)
	if len(l.returned) != 1 || l.returned[0] != 7 {
		t.Fatalf("returned tokens %v, want [7]", l.returned)
	}
	b = p.Get()
	for b != nil && &b.Room()[0] != own {
		b = p.Get()
	}
	if b == nil || b.Borrowed() || b.Len() != 0 || b.Headroom() != DefaultHeadroom {
		t.Fatalf("the buffer did not get its own memory back")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Lend beyond the memory did not panic")
			}
		}()
		b.Lend(ring, 250, 10, l, 1)
	}()
}

func TestLendNoAllocs(t *testing.T) {
	p, err := NewPool(PoolConfig{Buffers: 1, FrameSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	ring := make([]byte, 4096)
	l := &recordingLender{returned: make([]int, 0, 1024)}
	allocs := testing.AllocsPerRun(100, func() {
		b := p.Get()
		b.Lend(ring, 64, 1500, l, 3)
		p.Put(b)
	})
	if allocs != 0 {
		t.Fatalf("Lend+Put allocates %.1f times", allocs)
	}
}

// TestTakeLoanHandsTheMemoryOver checks that a taken loan is not
// returned by Put, that Loan and Headroom locate the frame in the lent
// memory beforehand, and that the buffer is its own, empty, afterwards.
func TestTakeLoanHandsTheMemoryOver(t *testing.T) {
	p, err := NewPool(PoolConfig{Buffers: 1, FrameSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 2048)
	copy(chunk[256:], "frame")
	l := &recordingLender{}
	b := p.Get()
	if got, tok := b.TakeLoan(); got != nil || tok != 0 {
		t.Fatalf("TakeLoan of an unborrowed buffer: %v %d", got, tok)
	}
	b.Lend(chunk, 256, 5, l, 4096)
	copy(b.Prepend(4), "vlan")
	got, tok := b.Loan()
	if got != Lender(l) || tok != 4096 || b.Headroom() != 252 || string(chunk[b.Headroom():b.Headroom()+b.Len()]) != "vlanframe" {
		t.Fatalf("Loan %v %d, headroom %d", got, tok, b.Headroom())
	}
	b.InPort = 3
	if got, tok = b.TakeLoan(); got != Lender(l) || tok != 4096 {
		t.Fatalf("TakeLoan returned %v %d", got, tok)
	}
	if b.Borrowed() || b.Len() != 0 || b.Headroom() != DefaultHeadroom || b.InPort != 3 {
		t.Fatalf("after TakeLoan: borrowed %v len %d headroom %d in_port %d", b.Borrowed(), b.Len(), b.Headroom(), b.InPort)
	}
	p.Put(b)
	if len(l.returned) != 0 {
		t.Fatalf("Put returned a loan that was taken over: %v", l.returned)
	}
	b = p.Get()
	b.Lend(chunk, 256, 5, l, 1) // the buffer can borrow again
	p.Put(b)
	if len(l.returned) != 1 || l.returned[0] != 1 {
		t.Fatalf("returned %v, want [1]", l.returned)
	}
}

func TestTakeLoanNoAllocs(t *testing.T) {
	p, err := NewPool(PoolConfig{Buffers: 1, FrameSize: 128})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 2048)
	l := &recordingLender{}
	allocs := testing.AllocsPerRun(100, func() {
		b := p.Get()
		b.Lend(chunk, 256, 1500, l, 3)
		if got, _ := b.Loan(); got == nil {
			t.Fatal("no loan")
		}
		b.TakeLoan()
		p.Put(b)
	})
	if allocs != 0 {
		t.Fatalf("Lend+Loan+TakeLoan+Put allocates %.1f times", allocs)
	}
}
