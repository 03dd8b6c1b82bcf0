package dummy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

func testPool(t testing.TB) *packet.Pool {
	t.Helper()
	p, err := packet.NewPool(packet.PoolConfig{Buffers: 256})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func frameOf(n int, fill byte) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = fill + byte(i)
	}
	return f
}

func readable(t *testing.T, fd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestRegistryMACsAndLookup(t *testing.T) {
	r := NewRegistry()
	a, err := r.Open(Config{Name: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Open(Config{Name: "p2", Type: "system"})
	if err != nil {
		t.Fatal(err)
	}
	// Open vSwitch's first dummy devices: aa:55:aa:55:00:00, :01, ...
	if got := a.MAC().String(); got != "aa:55:aa:55:00:00" {
		t.Errorf("first MAC %s", got)
	}
	if got := b.MAC().String(); got != "aa:55:aa:55:00:01" {
		t.Errorf("second MAC %s", got)
	}
	if a.Type() != "dummy" || b.Type() != "system" {
		t.Errorf("types %q %q", a.Type(), b.Type())
	}
	if _, err := r.Open(Config{Name: "p1"}); err == nil {
		t.Error("a second p1 opened")
	}
	if r.Lookup("p2") != b || len(r.Devices()) != 2 || r.Devices()[0] != a {
		t.Error("lookup or listing wrong")
	}
	a.Close()
	if r.Lookup("p1") != nil {
		t.Error("closed device still registered")
	}
	b.Close()
}

func TestReceiveRecvAndPollFD(t *testing.T) {
	d, err := NewRegistry().Open(Config{Name: "p1", RxQueues: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pool := testPool(t)
	if readable(t, d.PollFD(1)) {
		t.Fatal("empty queue readable")
	}
	for i := range 3 {
		if err := d.Receive(1, frameOf(60, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	if !readable(t, d.PollFD(1)) || readable(t, d.PollFD(0)) {
		t.Fatal("PollFD does not follow the queues")
	}
	var batch packet.Batch
	if n, _ := d.Recv(0, &batch, pool); n != 0 {
		t.Fatalf("queue 0 gave %d", n)
	}
	n, err := d.Recv(1, &batch, pool)
	if err != nil || n != 3 {
		t.Fatalf("Recv = %d, %v", n, err)
	}
	for i, b := range batch.Buffers() {
		if !bytes.Equal(b.Data(), frameOf(60, byte(i))) {
			t.Errorf("frame %d differs", i)
		}
	}
	packet.FreeBatch(&batch)
	if n, _ := d.Recv(1, &batch, pool); n != 0 || readable(t, d.PollFD(1)) {
		t.Fatal("drained queue still readable or non-empty")
	}
	if err := d.Receive(2, frameOf(60, 0)); !errors.Is(err, ErrNoQueue) {
		t.Errorf("queue 2: %v", err)
	}
	st := d.Stats()
	if st.RxPackets != 3 || st.RxBytes != 180 {
		t.Errorf("stats %+v", st)
	}
}

func TestQueueBound(t *testing.T) {
	d, err := NewRegistry().Open(Config{Name: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range MaxQueueLen + 5 {
		d.Receive(0, frameOf(60, 0))
	}
	if d.Pending(0) != MaxQueueLen || d.Stats().RxKernelDrops != 5 {
		t.Fatalf("pending %d drops %d", d.Pending(0), d.Stats().RxKernelDrops)
	}
}

func TestPcapOptions(t *testing.T) {
	dir := t.TempDir()
	rxq, tx := filepath.Join(dir, "rx.pcap"), filepath.Join(dir, "tx.pcap")
	cfg, err := ConfigFromOptions("p1", "dummy", map[string]string{"rxq_pcap": rxq, "tx_pcap": tx, "n_rxq": "3", "other": "x"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewRegistry().Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool := testPool(t)
	in := [][]byte{frameOf(60, 1), frameOf(100, 2)}
	for _, f := range in {
		d.Receive(0, f)
	}
	var batch packet.Batch
	d.Recv(0, &batch, pool)
	// What came in goes out again: both files record it.
	if err := d.Send(0, &batch); err != nil {
		t.Fatal(err)
	}
	if batch.Len() != 0 || pool.Stats().Free != 256 {
		t.Fatal("Send kept buffers")
	}
	big := pool.Get()
	big.SetLen(copy(big.Room(), frameOf(1600, 0)))
	batch.Append(big)
	d.Send(0, &batch)
	if d.NumRxQueues() != 3 {
		t.Errorf("n_rxq 3 gave %d queues", d.NumRxQueues())
	}
	st := d.Stats()
	if st.TxPackets != 2 || st.TxErrors != 1 {
		t.Errorf("tx stats %+v", st)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{rxq, tx} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadPcap(f)
		f.Close()
		if err != nil || len(got) != 2 || !bytes.Equal(got[0], in[0]) || !bytes.Equal(got[1], in[1]) {
			t.Errorf("%s: %d frames, %v", path, len(got), err)
		}
	}
	// Reopened, the files are appended to, without a second header.
	d, err = NewRegistry().Open(Config{Name: "p1", Pcap: tx})
	if err != nil {
		t.Fatal(err)
	}
	d.Receive(0, frameOf(70, 3))
	d.Close()
	f, _ := os.Open(tx)
	got, err := ReadPcap(f)
	f.Close()
	if err != nil || len(got) != 3 || len(got[2]) != 70 {
		t.Errorf("appended file: %d frames, %v", len(got), err)
	}
	if _, err := ConfigFromOptions("p1", "dummy", map[string]string{"n_rxq": "5000"}); err == nil {
		t.Error("n_rxq 5000 accepted")
	}
}

func TestAdminStateAndClose(t *testing.T) {
	d, _ := NewRegistry().Open(Config{Name: "p1"})
	if l := d.Link(); !l.AdminUp || !l.CarrierUp {
		t.Errorf("new device down: %+v", l)
	}
	d.SetAdminState(false)
	if d.Link().AdminUp {
		t.Error("set-admin-state down ignored")
	}
	d.Close()
	if err := d.Receive(0, frameOf(60, 0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Receive after Close: %v", err)
	}
	var batch packet.Batch
	if _, err := d.Recv(0, &batch, testPool(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
}

func TestRecvSendDoNotAllocate(t *testing.T) {
	dir := t.TempDir()
	d, err := NewRegistry().Open(Config{Name: "p1", TxPcap: filepath.Join(dir, "tx.pcap")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pool := testPool(t)
	frame := frameOf(64, 0)
	var batch packet.Batch
	allocs := testing.AllocsPerRun(100, func() {
		// Receive copies the frame (the appctl path); only Recv and Send
		// are measured.
		d.rx[0].mu.Lock()
		d.rx[0].frames = append(d.rx[0].frames[:0], frame)
		d.rx[0].head = 0
		d.rx[0].mu.Unlock()
		d.Recv(0, &batch, pool)
		d.Send(0, &batch)
	})
	if allocs != 0 {
		t.Fatalf("Recv+Send allocated %v times per run", allocs)
	}
	if d.Stats().TxPackets < 100 {
		t.Fatalf("sent %d", d.Stats().TxPackets)
	}
}

func FuzzReadPcap(f *testing.F) {
	var buf bytes.Buffer
	path := filepath.Join(f.TempDir(), "seed.pcap")
	w, err := openPcap(path)
	if err != nil {
		f.Fatal(err)
	}
	w.Write(frameOf(60, 0))
	w.release()
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(buf.Bytes())
	f.Add(seed[:30])
	f.Fuzz(func(t *testing.T, data []byte) {
		frames, err := ReadPcap(bytes.NewReader(data))
		if err != nil && !errors.Is(err, ErrPcap) {
			t.Fatalf("error not wrapping ErrPcap: %v", err)
		}
		for _, fr := range frames {
			if len(fr) > maxPcapRecord {
				t.Fatal("oversized record")
			}
		}
	})
}

func TestStreams(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry()
	p, err := reg.Open(Config{Name: "p", PStream: "punix:p.sock", RunDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	q, err := reg.Open(Config{Name: "q", Stream: "unix:" + filepath.Join(dir, "p.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(5 * time.Second)
	for q.ConnState() != "connected" || len(*p.streams.conns.Load()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("q %s", q.ConnState())
		}
		time.Sleep(time.Millisecond)
	}
	if p.ConnState() != "unknown" {
		t.Errorf("pstream side says %s", p.ConnState())
	}
	out, _ := reg.connState(nil)
	if out != "q: connected\n" {
		t.Errorf("conn-state: %q", out)
	}
	pool := testPool(t)
	var batch packet.Batch
	// q sends, p receives; then the other way.
	for i, pair := range [][2]*Device{{q, p}, {p, q}} {
		from, to := pair[0], pair[1]
		b := pool.Get()
		b.SetLen(copy(b.Room(), frameOf(60, byte(i))))
		batch.Append(b)
		from.Send(0, &batch)
		for to.Pending(0) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("frame %d never arrived", i)
			}
			time.Sleep(time.Millisecond)
		}
		to.Recv(0, &batch, pool)
		if batch.Len() != 1 || !bytes.Equal(batch.At(0).Data(), frameOf(60, byte(i))) {
			t.Fatalf("frame %d differs", i)
		}
		packet.FreeBatch(&batch)
	}
	p.Close()
	for q.ConnState() != "disconnected" {
		if time.Now().After(deadline) {
			t.Fatal("q still connected after p closed")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := reg.Open(Config{Name: "bad", Stream: "bogus:x"}); err == nil {
		t.Error("bogus stream accepted")
	}
}

// TestStreamSendDoesNotAllocate: once its buffers exist, sending to a
// connection copies into them.
func TestStreamSendDoesNotAllocate(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(dir, "sink.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
		}
	}()
	d, err := NewRegistry().Open(Config{Name: "q", Stream: "unix:" + filepath.Join(dir, "sink.sock")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for d.ConnState() != "connected" {
		time.Sleep(time.Millisecond)
	}
	pool := testPool(t)
	var batch packet.Batch
	send := func() {
		b := pool.Get()
		b.SetLen(copy(b.Room(), frameOf(64, 0)))
		batch.Append(b)
		d.Send(0, &batch)
	}
	for range 2 * MaxQueueLen {
		send()
	}
	time.Sleep(50 * time.Millisecond)
	if allocs := testing.AllocsPerRun(200, send); allocs != 0 {
		t.Fatalf("Send to a stream allocated %v times per frame", allocs)
	}
}
