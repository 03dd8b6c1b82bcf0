package dpif

import (
	"errors"
	"testing"

	"gvs/packet"
)

// TestPortDropCounters: each kind of datapath drop lands on the port it
// belongs to, and Ports and PortStats agree.
func TestPortDropCounters(t *testing.T) {
	toGone := handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(9)) // no such port
		return UpcallInstall
	})
	fx, p, plan := manualFixture(t, Config{}, flowFrames(1), toGone)
	p.pollOnce(plan)
	st, err := fx.dp.PortStats(1)
	if err != nil || st.TxNoPort != packet.BatchSize || st.Drops() != st.TxNoPort {
		t.Fatalf("after output to a missing port: %+v, %v", st, err)
	}

	// No handler: the misses are lost upcalls of the input port.
	fx.dp.Flush()
	fx.dp.SetUpcallHandler(nil)
	p.pollOnce(plan)
	if st, _ := fx.dp.PortStats(1); st.LostUpcalls != packet.BatchSize {
		t.Fatalf("lost upcalls: %+v", st)
	}

	// An empty pool: the receive finds no buffer.
	var held packet.Batch
	for p.pool.GetBatch(&held, packet.BatchSize) > 0 {
		for _, b := range held.Buffers() {
			defer p.pool.Put(b)
		}
		held.Reset()
	}
	p.pollOnce(plan)
	if st, _ := fx.dp.PortStats(1); st.RxNoBuffer == 0 {
		t.Fatalf("pool exhaustion not counted: %+v", st)
	}

	// The per-port split adds up to the PMD's totals.
	p.publish()
	var txDrops, lost uint64
	for _, pi := range fx.dp.Ports() {
		want, _ := fx.dp.PortStats(pi.No)
		if pi.DatapathStats != want {
			t.Fatalf("port %d: Ports says %+v, PortStats %+v", pi.No, pi.DatapathStats, want)
		}
		txDrops += want.TxNoPort + want.TxNoBuffer + want.TxOffloadDrops
		lost += want.LostUpcalls
	}
	if tot := fx.totals(); tot.TxDrops != txDrops || tot.LostUpcalls != lost {
		t.Fatalf("PMD tx drops %d, lost upcalls %d; ports %d, %d", tot.TxDrops, tot.LostUpcalls, txDrops, lost)
	}
	if _, err := fx.dp.PortStats(42); !errors.Is(err, ErrNoPort) {
		t.Fatalf("PortStats of a missing port: %v", err)
	}
}

// TestCopyWithoutBufferCounted: a multi-output flow whose copy finds the
// pool empty charges the output port that missed its copy.
func TestCopyWithoutBufferCounted(t *testing.T) {
	two := handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(2), Output(3))
		return UpcallInstall
	})
	fx, p, plan := manualFixture(t, Config{PoolBuffers: packet.BatchSize}, flowFrames(1), two)
	p.pollOnce(plan) // every buffer is in the receive batch: no copies
	st2, _ := fx.dp.PortStats(2)
	st3, _ := fx.dp.PortStats(3)
	if st2.TxNoBuffer == 0 || st3.TxNoBuffer != 0 {
		t.Fatalf("port 2 %+v, port 3 %+v", st2, st3)
	}
}
