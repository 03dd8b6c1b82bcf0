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
