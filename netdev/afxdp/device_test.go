package afxdp

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// loopPair creates a root-namespace veth pair with queues receive and
// transmit queues each and opens both ends with afxdp: what one end
// sends, the other receives.
func loopPair(t testing.TB, cfg Config, queues int) (*nettest.Env, *Device, *Device) {
	t.Helper()
	e := newEnv(t)
	p0, p1 := e.IfName("p0"), e.IfName("p1")
	e.VethQueues(p0, "", p1, "", queues)
	return e, openT(t, p0, cfg), openT(t, p1, cfg)
}

// sendFrames sends copies of frames from d's queue q.
func sendFrames(t testing.TB, d netdev.Device, q int, pool *packet.Pool, frames ...[]byte) {
	t.Helper()
	var batch packet.Batch
	for _, f := range frames {
		b := pool.Get()
		copy(b.Room(), f)
		b.SetLen(len(f))
		batch.Append(b)
	}
	if err := d.Send(q, &batch); err != nil {
		t.Fatal(err)
	}
	if batch.Len() != 0 {
		t.Fatal("Send left buffers in the batch")
	}
}

// recvFrames receives until want frames arrived on d's queue q or a
// second passed, and returns copies.
func recvFrames(t testing.TB, d netdev.Device, q int, pool *packet.Pool, want int) [][]byte {
	t.Helper()
	var out [][]byte
	var batch packet.Batch
	fds := []unix.PollFd{{Fd: int32(d.PollFD(q)), Events: unix.POLLIN}}
	for end := time.Now().Add(time.Second); len(out) < want && time.Now().Before(end); {
		n, err := d.Recv(q, &batch, pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batch.Buffers() {
			out = append(out, bytes.Clone(b.Data()))
		}
		pool.PutBatch(&batch)
		if n == 0 {
			_, _ = unix.Poll(fds, 10)
		}
	}
	return out
}

func newTestPool(t testing.TB) *packet.Pool {
	t.Helper()
	p, err := packet.NewPool(packet.PoolConfig{Buffers: 256, FrameSize: 9216})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFramesSurviveBothModes sends tagged and untagged frames, with
// complete and partial checksums, and checks what arrives: the same
// bytes, VLAN tags in place (AF_XDP keeps them), partial checksums
// completed.
func TestFramesSurviveBothModes(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			_, a, b := loopPair(t, Config{XDPMode: mode}, 1)
			pool := newTestPool(t)
			plain := buildFrame(frameSpec{payload: 1000})
			tagged := buildFrame(frameSpec{vlan: 42, payload: 64, udp: true})
			partial := buildFrame(frameSpec{payload: 1400, partial: true})
			v6partial := buildFrame(frameSpec{ipv6: true, udp: true, payload: 300, partial: true})
			sendFrames(t, a, 0, pool, plain, tagged, partial, v6partial)
			got := recvFrames(t, b, 0, pool, 4)
			if len(got) != 4 {
				t.Fatalf("received %d frames, want 4; a %+v b %+v", len(got), a.Stats(), b.Stats())
			}
			if !bytes.Equal(got[0], plain) || !bytes.Equal(got[1], tagged) {
				t.Error("plain or tagged frame changed on the way")
			}
			for i, f := range got[2:] {
				if !l4ChecksumOK(f) {
					t.Errorf("partial frame %d: checksum not completed", i)
				}
			}
			if b.ChecksumsFixed() != 2 {
				t.Errorf("ChecksumsFixed %d, want 2", b.ChecksumsFixed())
			}
			if st := a.Stats(); st.TxPackets != 4 || st.TxDrops != 0 {
				t.Errorf("sender stats %+v", st)
			}
			if st := b.Stats(); st.RxPackets != 4 || st.RxBytes != uint64(len(plain)+len(tagged)+len(partial)+len(v6partial)) {
				t.Errorf("receiver stats %+v", st)
			}
		})
	}
}

// TestOversizeFramesDroppedAndCounted: Send drops frames beyond
// MaxFrame (MTU + Ethernet + one tag) and counts them in TxDrops; Recv
// drops non-TCP frames beyond the MTU it was opened with and counts them
// in RxErrors.
func TestOversizeFramesDroppedAndCounted(t *testing.T) {
	e, a, b := loopPair(t, Config{XDPMode: ModeGeneric}, 1)
	pool := newTestPool(t)
	if got := a.Capabilities().MaxFrame; got != 1500+18 {
		t.Fatalf("MaxFrame %d, want 1518", got)
	}
	fits := buildFrame(frameSpec{vlan: 7, udp: true, payload: 1500 - 28})
	over := buildFrame(frameSpec{vlan: 7, udp: true, payload: 1500 - 27})
	huge := buildFrame(frameSpec{udp: true, payload: 5000})
	sendFrames(t, a, 0, pool, over, fits, huge)
	if got := recvFrames(t, b, 0, pool, 1); len(got) != 1 || !bytes.Equal(got[0], fits) {
		t.Fatalf("received %d frames, want the one that fits", len(got))
	}
	if st := a.Stats(); st.TxDrops != 2 || st.TxPackets != 1 {
		t.Errorf("sender stats %+v, want 2 drops, 1 sent", st)
	}
	// Raise the MTUs behind a's back and reopen b at the new MTU (4096-byte
	// chunks): b sends a 2544-byte frame, which a (opened at 1500 with
	// 2048-byte chunks) receives as a two-buffer frame beyond its MTU.
	bName := b.Name()
	b.Close()
	e.Run("ip", "link", "set", a.Name(), "mtu", "3000")
	e.Run("ip", "link", "set", bName, "mtu", "3000")
	b, err := Open(Config{Name: bName, XDPMode: ModeGeneric})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.Capabilities().MaxFrame; got != 3018 {
		t.Fatalf("MaxFrame at MTU 3000: %d", got)
	}
	big := buildFrame(frameSpec{udp: true, payload: 2500})
	sendFrames(t, b, 0, pool, big)
	if got := recvFrames(t, a, 0, pool, 1); len(got) != 0 {
		t.Fatalf("a delivered a %d-byte frame beyond its MTU", len(got[0]))
	}
	if st := a.Stats(); st.RxErrors != 1 {
		t.Errorf("receiver stats %+v: the oversize frame is not counted in RxErrors", st)
	}
}

// TestCloseDetachesProgram checks that an open device shows an XDP
// program in ip(8) and that Close removes it (and is idempotent).
func TestCloseDetachesProgram(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			e, a, _ := loopPair(t, Config{XDPMode: mode}, 1)
			if !xdpAttached(e, a.Name()) {
				t.Fatalf("no XDP program on %s after Open: %s", a.Name(), e.Run("ip", "link", "show", "dev", a.Name()))
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if xdpAttached(e, a.Name()) {
				t.Fatalf("XDP program still on %s after Close: %s", a.Name(), e.Run("ip", "link", "show", "dev", a.Name()))
			}
			if err := a.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if st := a.Stats(); st.RxKernelDrops != 0 {
				t.Errorf("stats after close %+v", st)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(Config{Name: "gvsxdp-none"}); !errors.Is(err, netdev.ErrNoDevice) {
		t.Errorf("missing device: %v, want ErrNoDevice", err)
	}
	for _, cfg := range []Config{
		{Name: "x", XDPMode: "turbo"},
		{Name: "x", TxBatchSize: 33},
		{Name: "x", TxBatchSize: -1},
		{Name: "x", RingSize: 1000},
	} {
		if _, err := Open(cfg); err == nil || errors.Is(err, netdev.ErrNoDevice) {
			t.Errorf("Open(%+v) = %v, want a configuration error", cfg, err)
		}
	}
}

// TestZeroCopyRefusedCleanly: veth has no zero-copy AF_XDP; asking for it
// fails and leaves no program behind.
func TestZeroCopyRefusedCleanly(t *testing.T) {
	e, a, _ := loopPair(t, Config{XDPMode: ModeGeneric}, 1)
	name := a.Name()
	a.Close()
	d, err := Open(Config{Name: name, XDPMode: ModeNativeZeroCopy})
	if err == nil {
		d.Close()
		t.Skip("this kernel does zero-copy AF_XDP on veth")
	}
	t.Logf("zero-copy: %v", err)
	if xdpAttached(e, name) {
		t.Fatalf("failed Open left an XDP program: %s", e.Run("ip", "link", "show", "dev", name))
	}
}

// TestQueues opens two queues on a two-queue veth: the XSKMAP must route
// a frame sent on queue 1 to the peer's queue-1 socket.
func TestQueues(t *testing.T) {
	_, a, b := loopPair(t, Config{XDPMode: ModeNative, Queues: 2}, 2)
	if a.NumRxQueues() != 2 || a.NumTxQueues() != 2 || a.Status()["n_rxq"] != "2" {
		t.Fatalf("queues %d/%d status %v", a.NumRxQueues(), a.NumTxQueues(), a.Status())
	}
	pool := newTestPool(t)
	frame := buildFrame(frameSpec{payload: 100})
	sendFrames(t, a, 1, pool, frame)
	if got := recvFrames(t, b, 1, pool, 1); len(got) != 1 {
		t.Fatalf("queue 1 received %d frames (queue 0 has %d)", len(got), len(recvFrames(t, b, 0, pool, 1)))
	}
	if _, err := Open(Config{Name: a.Name(), Queues: 3}); err == nil || !strings.Contains(err.Error(), "2 receive queues") {
		t.Errorf("Open with 3 queues on a 2-queue veth: %v", err)
	}
}

func TestTooManyQueues(t *testing.T) {
	e, a, _ := loopPair(t, Config{XDPMode: ModeGeneric}, 1)
	name := a.Name()
	a.Close()
	if _, err := Open(Config{Name: name, Queues: 2}); err == nil || !strings.Contains(err.Error(), "receive queues") {
		t.Errorf("Open with 2 queues on a 1-queue veth: %v", err)
	}
	if xdpAttached(e, name) {
		t.Error("failed Open left an XDP program")
	}
}

// TestDeviceAttributes covers the non-packet methods.
func TestDeviceAttributes(t *testing.T) {
	e, a, _ := loopPair(t, Config{TxBatchSize: 8}, 1)
	st := a.Status()
	for k, want := range map[string]string{"xdp-mode": "generic", "xdp-mode-requested": "best-effort", "tx-batch-size": "8", "driver_name": "veth"} {
		if st[k] != want {
			t.Errorf("status[%s] = %q, want %q (%v)", k, st[k], want, st)
		}
	}
	if a.Type() != "afxdp" || a.Capabilities().VnetHdr {
		t.Errorf("type %q caps %+v", a.Type(), a.Capabilities())
	}
	if a.MTU() != 1500 {
		t.Errorf("MTU %d", a.MTU())
	}
	if err := a.SetMTU(1400); err != nil || a.MTU() != 1400 || a.Capabilities().MaxFrame != 1418 {
		t.Errorf("SetMTU(1400): %v, MTU %d, MaxFrame %d", err, a.MTU(), a.Capabilities().MaxFrame)
	}
	// Multi-buffer sockets take frames spanning chunks.
	if err := a.SetMTU(3000); err != nil || a.Capabilities().MaxFrame != 3018 {
		t.Errorf("SetMTU(3000) with %d-byte chunks: %v, MaxFrame %d", a.chunkSize, err, a.Capabilities().MaxFrame)
	}
	mac := a.MAC()
	if mac == nil || !strings.Contains(e.Run("ip", "link", "show", "dev", a.Name()), mac.String()) {
		t.Errorf("MAC %v not what ip(8) shows", mac)
	}
	l := a.Link()
	if !l.AdminUp || !l.CarrierUp || l.IfIndex == 0 {
		t.Errorf("link %+v", l)
	}
	sb, err := a.SetSocketBuffers(4 << 20)
	if err != nil || sb.Receive != 0 || sb.Send != 0 || sb.Requested != 4<<20 {
		t.Errorf("SetSocketBuffers: %+v %v", sb, err)
	}
	cs := a.CustomStats()
	for _, k := range []string{"xsk_rx_dropped", "xsk_rx_ring_full", "xsk_rx_fill_ring_empty_descs", "xsk_tx_ring_empty_descs", "rx_csum_completed", "rx_tso_frames_cut", "tx_kicks",
		// Open vSwitch's per-queue names.
		"xsk_queue_0_rx_dropped", "xsk_queue_0_rx_invalid_descs", "xsk_queue_0_tx_invalid_descs"} {
		if _, ok := cs[k]; !ok {
			t.Errorf("custom stats lack %s: %v", k, cs)
		}
	}
	if a.PollFD(0) < 0 {
		t.Error("no poll fd")
	}
	if _, err := os.Stat("/sys/fs/bpf/gvs_xsks"); err == nil {
		t.Error("a map was pinned")
	}
}

func TestConfigFromOptions(t *testing.T) {
	cfg, err := ConfigFromOptions("p", map[string]string{"n_rxq": "2", "xdp-mode": "generic", "tx-batch-size": "32", "other": "x"}, nil)
	if err != nil || cfg.Queues != 2 || cfg.XDPMode != ModeGeneric || cfg.TxBatchSize != 32 {
		t.Errorf("%+v %v", cfg, err)
	}
	for _, bad := range []map[string]string{{"n_rxq": "0"}, {"xdp-mode": "fast"}, {"tx-batch-size": "x"}, {"tx-batch-size": "64"}} {
		if _, err := ConfigFromOptions("p", bad, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestPreferGeneric: only best-effort on veth starts with generic XDP;
// hardware drivers and explicit modes keep their order.
func TestPreferGeneric(t *testing.T) {
	for _, tc := range []struct {
		mode   XDPMode
		driver string
		want   bool
	}{
		{ModeBestEffort, "veth", true},
		{ModeBestEffort, "mlx5_core", false},
		{ModeBestEffort, "", false},
		{ModeNative, "veth", false},
		{ModeGeneric, "veth", false},
		{ModeNativeZeroCopy, "veth", false},
	} {
		if got := preferGeneric(tc.mode, map[string]string{"driver_name": tc.driver}); got != tc.want {
			t.Errorf("preferGeneric(%s, %q) = %v, want %v", tc.mode, tc.driver, got, tc.want)
		}
	}
}

// TestOpenTwice: a second device on the same interface is refused (one
// XDP program per interface) and the first keeps working.
func TestOpenTwice(t *testing.T) {
	_, a, b := loopPair(t, Config{XDPMode: ModeNative}, 1)
	if d, err := Open(Config{Name: b.Name()}); err == nil {
		d.Close()
		t.Fatal("second Open of the same interface succeeded")
	} else {
		t.Logf("second Open: %v", err)
	}
	pool := newTestPool(t)
	sendFrames(t, a, 0, pool, buildFrame(frameSpec{payload: 100}))
	if got := recvFrames(t, b, 0, pool, 1); len(got) != 1 {
		t.Fatal("first device stopped receiving after a refused second Open")
	}
}

// TestLinkFlapAndRemoval: the device survives its interface going down
// and up (and moves frames again), and closes cleanly after the
// interface is deleted under it.
func TestLinkFlapAndRemoval(t *testing.T) {
	e, a, b := loopPair(t, Config{XDPMode: ModeNative}, 1)
	pool := newTestPool(t)
	frame := buildFrame(frameSpec{payload: 100})
	e.Run("ip", "link", "set", b.Name(), "down")
	if l := b.Link(); l.AdminUp {
		t.Errorf("link %+v after down", l)
	}
	sendFrames(t, a, 0, pool, frame) // into a down peer: dropped, must not wedge
	e.Run("ip", "link", "set", b.Name(), "up")
	time.Sleep(50 * time.Millisecond)
	recvFrames(t, b, 0, pool, 1) // whatever got through before
	sendFrames(t, a, 0, pool, frame, frame)
	if got := recvFrames(t, b, 0, pool, 2); len(got) != 2 {
		t.Fatalf("after the flap %d of 2 frames arrived; a %+v b %+v", len(got), a.Stats(), b.Stats())
	}
	e.Run("ip", "link", "del", a.Name())
	nettest.WaitGone(a.Name(), 3*time.Second)
	sendFrames(t, a, 0, pool, frame) // on a vanished interface: counted, not fatal
	if n, err := a.Recv(0, new(packet.Batch), pool); n != 0 || err != nil {
		t.Errorf("Recv on a vanished interface: %d, %v", n, err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Close() }()
	select {
	case err := <-done:
		t.Logf("Close after removal: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs after the interface was removed")
	}
}

// TestKernelTxBudget: the default transmit batch follows the kernel's
// TX_BATCH_SIZE, 16 before Linux 5.13 and 32 since.
func TestKernelTxBudget(t *testing.T) {
	for release, want := range map[string]int{
		"4.19.0-27-amd64": 16, "5.10.0-30-amd64": 16, "5.12.19": 16,
		"5.13.0": 32, "5.15.0-91-generic": 32, "6.1.0-18-amd64": 32, "6.18.44-fc-v782": 32,
		"": 16, "garbage": 16,
	} {
		if got := KernelTxBudget(release); got != want {
			t.Errorf("KernelTxBudget(%q) = %d, want %d", release, got, want)
		}
	}
	cfg, err := (Config{Name: "p"}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TxBatchSize != DefaultTxBatchSize() || (cfg.TxBatchSize != 16 && cfg.TxBatchSize != 32) {
		t.Errorf("default tx-batch-size %d, DefaultTxBatchSize() %d", cfg.TxBatchSize, DefaultTxBatchSize())
	}
}
