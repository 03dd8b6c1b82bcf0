package afpacket

import (
	"strconv"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// TestRingResizeAtRunTime sets userspace-sock-buf-size on an open
// device: the ring grows straight to it on the next Recv (the socket
// stays bound, frames flow through the new ring), and after the option is
// unset it shrinks back to the minimum once idle.
func TestRingResizeAtRunTime(t *testing.T) {
	for _, mode := range []string{RxRing, RxRingV2} {
		t.Run(mode, func(t *testing.T) {
			env := nettest.New(t)
			a, b := env.IfName("a"), env.IfName("b")
			env.Veth(a, "", b, "")
			in, out := openT(t, a, Config{RxMode: RxRecvmmsg}), openT(t, b, Config{RxMode: mode, IdleShrink: 100 * time.Millisecond})
			before := out.Status()
			const big = 32 << 20
			if _, err := out.SetSocketBuffers(big); err != nil {
				t.Fatal(err)
			}
			if st := out.Status(); st["rx_ring_size"] != before["rx_ring_size"] {
				t.Fatalf("before the next Recv: status %v (was %v), want size unchanged", st, before)
			}
			pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
			if err != nil {
				t.Fatal(err)
			}
			var batch packet.Batch
			if _, err := out.Recv(0, &batch, pool); err != nil {
				t.Fatal(err)
			}
			pool.PutBatch(&batch)
			if st := out.Status(); st["rx_ring_size_pending"] != strconv.Itoa(big) {
				t.Fatalf("after the first Recv: status %v, want %d pending", st, big)
			}
			settle(t, out, pool) // the new ring is made off the polling goroutine
			st := out.Status()
			if st["rx_ring_size"] != strconv.Itoa(big) || st["rx_ring_size_pending"] != "" || st["rx_ring_resizes"] != "1" {
				t.Fatalf("after Recv: status %v, want rx_ring_size %d, nothing pending", st, big)
			}
			if out.RxRingBytes() != big {
				t.Errorf("RxRingBytes %d, want %d", out.RxRingBytes(), big)
			}
			tmpl := udpFrame(t, pool, []packet.VLANTag{{TPID: packet.EtherTypeVLAN, TCI: 9}})
			want := append([]byte(nil), tmpl.Data()...)
			batch.Append(tmpl)
			if err := in.Send(0, &batch); err != nil {
				t.Fatal(err)
			}
			got := recvOne(t, out, pool, func(b *packet.Buffer) bool { return string(b.Data()) == string(want) })
			if got == nil {
				t.Fatalf("no frame through the resized ring; stats %+v", out.Stats())
			}
			pool.Put(got)
			// Unset: back to the minimum once idle.
			if _, err := out.SetSocketBuffers(0); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for out.Status()["rx_ring_size"] != before["rx_ring_size"] && time.Now().Before(deadline) {
				if _, err := out.Recv(0, &batch, pool); err != nil {
					t.Fatal(err)
				}
				pool.PutBatch(&batch)
				time.Sleep(time.Millisecond)
			}
			if st := out.Status(); st["rx_ring_size"] != before["rx_ring_size"] {
				t.Errorf("after SetSocketBuffers(0) and idle: status %v, want ring back to %s", st, before["rx_ring_size"])
			}
		})
	}
}

func TestRingShape(t *testing.T) {
	v2 := Config{RxMode: RxRingV2}.withDefaults()
	v2.mtu = 1500
	for _, sockBuf := range []int{0, 8 << 20} {
		if s := v2.initialShape(sockBuf); s.bytes() != DefaultMinRingSize || s.frameSize != 2048 || s.blocks != 1 || s.blockSize/s.frameSize != 128 {
			t.Errorf("V2 ring with sock-buf-size %d: %+v, want one 256 KiB block of 128 MTU-sized slots", sockBuf, s)
		}
	}
	if s := v2.shapeFor(512<<10, 0, true); s.frameSize != V2GSOFrameSize || s.blockSize/s.frameSize != 7 {
		t.Errorf("V2 ring grown for GSO frames without sock-buf-size: %+v, want GSO-sized slots", s)
	}
	if s := v2.shapeFor(512<<10, 0, false); s.frameSize != 2048 {
		t.Errorf("V2 ring grown for small frames: %+v, want MTU-sized slots", s)
	}
	if s := v2.shapeFor(512<<10, 8<<20, true); s.frameSize != 2048 {
		t.Errorf("grown V2 ring with sock-buf-size: %+v, want MTU-sized slots", s)
	}
	for _, c := range []struct {
		n    int
		up   bool
		want int
	}{
		{40<<20 + 1, true, 41 << 20},
		{40<<20 + 1, false, 40 << 20},
		{700 << 10, true, 1 << 20},
		{700 << 10, false, 512 << 10},
		{1, true, DefaultMinRingSize},
		{1 << 30, true, DefaultMaxRingSize},
	} {
		if got := v2.ringBytes(c.n, c.up); got != c.want {
			t.Errorf("V2 ringBytes(%d, up %v) = %d, want %d", c.n, c.up, got, c.want)
		}
	}
	small := Config{RxMode: RxRingV2, MinRingSize: 4096, MaxRingSize: 4096}.withDefaults()
	if got := small.ringBytes(1, true); got != 128<<10 {
		t.Errorf("a V2 ring smaller than a GSO slot: %d bytes, want one 128 KiB block", got)
	}
	v2.mtu = 9000
	if s := v2.shapeFor(8<<20, 8<<20, true); s.frameSize != 9152 {
		t.Errorf("V2 ring for MTU 9000: %+v", s)
	}
	for _, s := range []ringShape{v2.shapeFor(8<<20, 8<<20, true), v2.shapeFor(256<<10, 0, false), v2.shapeFor(64<<20, 0, true)} {
		if u := unpackShape(s.pack()); u != s {
			t.Errorf("shape %+v does not survive pack/unpack: %+v", s, u)
		}
	}
	for mtu, want := range map[int]int{68: 2048, 1500: 2048, 1950: 2048, 1951: 2112} {
		if got := v2FrameSizeFor(mtu); got != want {
			t.Errorf("v2FrameSizeFor(%d) = %d, want %d", mtu, got, want)
		}
	}
	v3 := Config{RxMode: RxRing}.withDefaults()
	if s := v3.shapeFor(v3.ringBytes(64<<20, true), 0, false); s.bytes() != 64<<20 || s.blockSize != DefaultBlockSize {
		t.Errorf("V3 ring for 64 MiB: %+v", s)
	}
	if got := v3.ringBytes(1, true); got != 2*DefaultBlockSize {
		t.Errorf("smallest V3 ring %d bytes, want two blocks", got)
	}
	if s := (Config{RxMode: RxRecvmmsg}).withDefaults().shapeFor(64<<20, 0, false); s.bytes() != 0 {
		t.Errorf("recvmmsg has a ring: %+v", s)
	}
}

func TestConfigFromOptions(t *testing.T) {
	for _, c := range []struct {
		opts    map[string]string
		mode    string
		queues  int
		invalid bool
	}{
		{nil, DefaultRxMode, 1, false},
		{map[string]string{"rx-mode": "ring-v3"}, RxRing, 1, false},
		{map[string]string{"rx-mode": "ring-v2", "n_rxq": "2"}, RxRingV2, 2, false},
		{map[string]string{"rx-mode": "mmsg"}, RxRecvmmsg, 1, false},
		{map[string]string{"rx-mode": "recvmmsg"}, RxRecvmmsg, 1, false},
		{map[string]string{"rx-mode": "fast"}, "", 0, true},
		{map[string]string{"n_rxq": "0"}, "", 0, true},
	} {
		cfg, err := ConfigFromOptions("eth0", c.opts, nil)
		if c.invalid {
			if err == nil {
				t.Errorf("%v: no error", c.opts)
			}
			continue
		}
		if err != nil || cfg.RxMode != c.mode || cfg.RxQueues != c.queues || cfg.Name != "eth0" {
			t.Errorf("%v: %+v, %v; want mode %s, %d queues", c.opts, cfg, err, c.mode, c.queues)
		}
	}
}
