package afpacket

import (
	"bytes"
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

func TestSocketBuffers(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	const big = 16 << 20 // beyond net.core.rmem_max here: needs SO_RCVBUFFORCE
	d := openT(t, a, Config{SocketBuffer: big})
	got, err := d.SetSocketBuffers(0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Requested != 0 || got.Receive < big || got.Send < big {
		t.Errorf("after Open with %d: %+v, want both >= %d", big, got, big)
	}
	got, err = d.SetSocketBuffers(1000)
	if err != nil {
		t.Fatal(err)
	}
	if got.Requested != netdev.MinSocketBuffer || got.Receive < netdev.MinSocketBuffer || got.Receive >= big {
		t.Errorf("SetSocketBuffers(1000) at run time: %+v, want clamped to %d", got, netdev.MinSocketBuffer)
	}
	if st := d.Status(); st["socket_sndbuf"] == "" || st["rx_ring"] != DefaultRxMode || st["tx"] != "sendmmsg" {
		t.Errorf("Status() = %v", st)
	}
}

func TestStatusAndLink(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	d := openT(t, a, Config{})
	if st := d.Status(); st["driver_name"] != "veth" {
		t.Errorf("driver_name = %q, want veth (status %v)", st["driver_name"], st)
	}
	l := d.Link()
	if !l.AdminUp || !l.CarrierUp || l.IfIndex == 0 {
		t.Errorf("Link() = %+v, want up", l)
	}
	if err := d.SetMTU(1400); err != nil || d.MTU() != 1400 {
		t.Errorf("SetMTU(1400): %v, MTU() = %d", err, d.MTU())
	}
	if len(d.MAC()) != 6 {
		t.Errorf("MAC() = %v", d.MAC())
	}
	env.Run("ip", "link", "set", b, "down")
	if d.Link().CarrierUp {
		t.Errorf("carrier still up with the peer down")
	}
}

// TestFanoutQueues opens two queues and checks that frames of many flows
// reach both and that none is lost or duplicated, also after both
// queues' rings were resized (their new sockets join the fanout group).
func TestFanoutQueues(t *testing.T) {
	for _, resize := range []bool{false, true} {
		t.Run(map[bool]string{false: "opened", true: "resized"}[resize], func(t *testing.T) { testFanoutQueues(t, resize) })
	}
}

func testFanoutQueues(t *testing.T, resize bool) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	in := openT(t, a, Config{})
	out := openT(t, b, Config{RxQueues: 2, MinRingSize: 8 << 20}) // the frames come before the first Recv
	if out.NumRxQueues() != 2 || out.NumTxQueues() != 2 {
		t.Fatalf("queues: %d rx %d tx", out.NumRxQueues(), out.NumTxQueues())
	}
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 256})
	if err != nil {
		t.Fatal(err)
	}
	if resize {
		if _, err := out.SetSocketBuffers(16 << 20); err != nil {
			t.Fatal(err)
		}
		var batch packet.Batch
		for end := time.Now().Add(5 * time.Second); out.queues[0].resizes.Load() == 0 || out.queues[1].resizes.Load() == 0 ||
			out.queues[0].resizeWanted() || out.queues[1].resizeWanted() ||
			out.queues[0].joinPending || out.queues[1].joinPending; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("queues not resized: %v", out.Status())
			}
			for q := range 2 {
				if _, err := out.Recv(q, &batch, pool); err != nil {
					t.Fatal(err)
				}
				pool.PutBatch(&batch)
			}
		}
		if out.RxRingBytes() != 32<<20 {
			t.Fatalf("rings %d bytes after resizing both to 16 MiB", out.RxRingBytes())
		}
	}
	const flows = 64
	var batch packet.Batch
	for i := range flows {
		f := udpFrame(t, pool, nil)
		f.Data()[14+20+1] = byte(i) // source port: one flow each
		f.Data()[14+20+6], f.Data()[14+20+7] = 0, 0
		batch.Append(f)
		if batch.Full() || i == flows-1 {
			if err := in.Send(0, &batch); err != nil {
				t.Fatal(err)
			}
		}
	}
	perQueue := [2]int{}
	for end := time.Now().Add(time.Second); time.Now().Before(end) && perQueue[0]+perQueue[1] < flows; time.Sleep(2 * time.Millisecond) {
		for q := range 2 {
			n, _ := out.Recv(q, &batch, pool)
			for _, b := range batch.Buffers() {
				if bytes.Equal(b.Data()[:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
					perQueue[q]++
				}
			}
			_ = n
			pool.PutBatch(&batch)
		}
	}
	if perQueue[0]+perQueue[1] != flows || perQueue[0] == 0 || perQueue[1] == 0 {
		t.Errorf("frames per queue %v, want %d spread over both", perQueue, flows)
	}
}
