package afpacket

import (
	"strconv"
	"testing"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// TestRingResizeAtRunTime sets userspace-sock-buf-size above the ring's
// size on an open device: the ring is swapped on the next Recv (Status
// shows it pending until then), the socket stays bound, and frames flow
// through the new ring.
func TestRingResizeAtRunTime(t *testing.T) {
	for _, mode := range []string{RxRing, RxRingV2} {
		t.Run(mode, func(t *testing.T) {
			env := nettest.New(t)
			a, b := env.IfName("a"), env.IfName("b")
			env.Veth(a, "", b, "")
			in, out := openT(t, a, Config{RxMode: RxRecvmmsg}), openT(t, b, Config{RxMode: mode})
			before := out.Status()
			const big = 32 << 20
			if _, err := out.SetSocketBuffers(big); err != nil {
				t.Fatal(err)
			}
			st := out.Status()
			if st["rx_ring_size"] != before["rx_ring_size"] || st["rx_ring_size_pending"] != strconv.Itoa(big) {
				t.Fatalf("before the next Recv: status %v (was %v), want size unchanged and %d pending", st, before, big)
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
			st = out.Status()
			if st["rx_ring_size"] != strconv.Itoa(big) || st["rx_ring_size_pending"] != "" || st["rx_ring_resizes"] != "1" {
				t.Fatalf("after Recv: status %v, want rx_ring_size %d, nothing pending", st, big)
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
			// Back to the configured size.
			if _, err := out.SetSocketBuffers(0); err != nil {
				t.Fatal(err)
			}
			if _, err := out.Recv(0, &batch, pool); err != nil {
				t.Fatal(err)
			}
			pool.PutBatch(&batch)
			if st := out.Status(); st["rx_ring_size"] != before["rx_ring_size"] {
				t.Errorf("after SetSocketBuffers(0): status %v, want ring back to %s", st, before["rx_ring_size"])
			}
		})
	}
}

func TestRingShape(t *testing.T) {
	v2 := Config{RxMode: RxRingV2}.withDefaults()
	if s := v2.ringShape(0); s.bytes() != DefaultV2RingSize || s.frameSize != V2GSOFrameSize || s.blockSize/s.frameSize != 15 {
		t.Errorf("default V2 ring %+v", s)
	}
	v2.mtu = 1500
	if s := v2.ringShape(8 << 20); s.bytes() != DefaultV2RingSize || s.frameSize != 2048 || s.blockSize/s.frameSize != 512 {
		t.Errorf("V2 ring with a smaller sock-buf-size shrank or kept GSO slots: %+v", s)
	}
	if s := v2.ringShape(40<<20 + 1); s.bytes() != 41<<20 {
		t.Errorf("V2 ring for 40 MiB + 1: %d bytes", s.bytes())
	}
	v2.mtu = 9000
	if s := v2.ringShape(8 << 20); s.frameSize != 9152 {
		t.Errorf("V2 ring for MTU 9000: %+v", s)
	}
	if s := unpackShape(v2.ringShape(8<<20).pack(), V2BlockSize); s != v2.ringShape(8<<20) {
		t.Errorf("shape does not survive pack/unpack: %+v", s)
	}
	for mtu, want := range map[int]int{68: 2048, 1500: 2048, 1950: 2048, 1951: 2112} {
		if got := v2FrameSizeFor(mtu); got != want {
			t.Errorf("v2FrameSizeFor(%d) = %d, want %d", mtu, got, want)
		}
	}
	v3 := Config{RxMode: RxRing}.withDefaults()
	if s := v3.ringShape(64 << 20); s.bytes() != 64<<20 || s.blockSize != DefaultBlockSize {
		t.Errorf("V3 ring for 64 MiB: %+v", s)
	}
	if s := (Config{RxMode: RxRecvmmsg}).withDefaults().ringShape(64 << 20); s.bytes() != 0 {
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
