package bridge_test

import (
	"fmt"
	"log/slog"
	"testing"
)

// benchEnv is a reconciler on the fake datapath with bridge br0 and n
// ports (devices b0 ... b<n-1>) already applied, the statistics timer
// set to an hour so that only the changes under test cause passes.
func benchEnv(b *testing.B, n int) *env {
	b.Helper()
	e := newEnvLogging(b, slog.LevelWarn)
	e.startReconciler()
	e.vsctl("set", "Open_vSwitch", ".", "other_config:stats-update-interval=3600000")
	args := []string{"add-br", "br0"}
	for i := range n {
		name := fmt.Sprintf("b%d", i)
		e.dp.AddDevice(name)
		args = append(args, "--", "add-port", "br0", name)
	}
	e.vsctl(args...)
	return e
}

// BenchmarkAddPort: one `ovs-vsctl add-port` (which waits for cur_cfg,
// so the time includes the reconciler's pass and write-back) with 10,
// 100 and 1,000 ports already in the bridge. Each added port is deleted
// again outside the timing.
func BenchmarkAddPort(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("ports=%d", n), func(b *testing.B) {
			e := benchEnv(b, n)
			for i := range b.N {
				name := fmt.Sprintf("n%d", i)
				e.dp.AddDevice(name)
			}
			var passes uint64
			var passTime float64
			b.ResetTimer()
			for i := range b.N {
				name := fmt.Sprintf("n%d", i)
				before := e.metrics.Snapshot().Duration
				e.vsctl("add-port", "br0", name)
				after := e.metrics.Snapshot().Duration
				passes += after.Count - before.Count
				passTime += after.Sum - before.Sum
				b.StopTimer()
				e.vsctl("del-port", name)
				b.StartTimer()
			}
			// What the reconciler's passes took of each add-port.
			b.ReportMetric(passTime*1000/float64(b.N), "pass-ms/op")
			b.ReportMetric(float64(passes)/float64(b.N), "passes/op")
		})
	}
}

// BenchmarkAdd200PortsInOneTransaction: 200 ports added by one
// `ovs-vsctl` call (waiting for cur_cfg), to a bridge with 10 ports;
// removed again by one call outside the timing.
func BenchmarkAdd200PortsInOneTransaction(b *testing.B) {
	e := benchEnv(b, 10)
	add := []string{}
	del := []string{}
	for i := range 200 {
		name := fmt.Sprintf("m%d", i)
		e.dp.AddDevice(name)
		add = append(add, "--", "add-port", "br0", name)
		del = append(del, "--", "del-port", name)
	}
	var passes uint64
	var passTime float64
	b.ResetTimer()
	for range b.N {
		before := e.metrics.Snapshot().Duration
		e.vsctl(add[1:]...)
		after := e.metrics.Snapshot().Duration
		passes += after.Count - before.Count
		passTime += after.Sum - before.Sum
		b.StopTimer()
		e.vsctl(del[1:]...)
		b.StartTimer()
	}
	b.ReportMetric(passTime*1000/float64(b.N), "pass-ms/op")
	b.ReportMetric(float64(passes)/float64(b.N), "passes/op")
}

// BenchmarkAddPortNoWait is BenchmarkAddPort at 1,000 ports with
// --no-wait: ovs-vsctl and the database server alone (ovs-vsctl reads the
// whole Open_vSwitch state on every call), the floor under the waiting
// figure.
func BenchmarkAddPortNoWait(b *testing.B) {
	e := benchEnv(b, 1000)
	for i := range b.N {
		e.dp.AddDevice(fmt.Sprintf("n%d", i))
	}
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("n%d", i)
		e.vsctl("--no-wait", "add-port", "br0", name)
		b.StopTimer()
		e.vsctl("del-port", name)
		b.StartTimer()
	}
}
