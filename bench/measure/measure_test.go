package measure

import (
	"math"
	"os"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		in            []float64
		med, min, max float64
		n             int
	}{
		{[]float64{3, 1, 2}, 2, 1, 3, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4, 4},
		{[]float64{5}, 5, 5, 5, 1},
		{[]float64{math.NaN(), 7, 9}, 8, 7, 9, 2},
	} {
		s := Summarize(c.in)
		if s.Median != c.med || s.Min != c.min || s.Max != c.max || s.N != c.n {
			t.Errorf("Summarize(%v) = %+v, want median %v min %v max %v n %d", c.in, s, c.med, c.min, c.max, c.n)
		}
	}
	if s := Summarize(nil); s.N != 0 || !math.IsNaN(s.Median) {
		t.Errorf("Summarize(nil) = %+v, want N 0 and NaN", s)
	}
}

func TestPercentile(t *testing.T) {
	s := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for p, want := range map[float64]float64{50: 50, 90: 90, 99: 100, 0: 10, 100: 100} {
		if got := Percentile(s, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile of nothing should be NaN")
	}
}

func TestParseIperfUDP(t *testing.T) {
	data, err := os.ReadFile("testdata/iperf-udp.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ParseIperf(data)
	if err != nil {
		t.Fatal(err)
	}
	// Captured from iperf3 3.12: 124648000 bytes sent, 105040000 received
	// in 1.001405 s; iperf3 itself said 15.73% lost packets.
	if res.SentBytes != 124648000 || res.ReceivedBytes != 105040000 {
		t.Errorf("bytes = %d/%d", res.SentBytes, res.ReceivedBytes)
	}
	wantLoss := 100 * (1 - 105040000.0/124648000.0)
	if math.Abs(res.LossPct-wantLoss) > 1e-9 {
		t.Errorf("loss = %v, want %v", res.LossPct, wantLoss)
	}
	wantGbps := 105040000.0 * 8 / 1.001405 / 1e9
	if math.Abs(res.Gbps-wantGbps) > 1e-9 {
		t.Errorf("gbps = %v, want %v", res.Gbps, wantGbps)
	}
}

func TestParseIperfTCP(t *testing.T) {
	data, err := os.ReadFile("testdata/iperf-tcp.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ParseIperf(data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Retransmits != 1 || res.ReceivedBytes != 982798320 {
		t.Errorf("got %+v", res)
	}
}

func TestParseIperfErrors(t *testing.T) {
	for _, in := range []string{
		`not json`,
		`{"error": "unable to connect to server: Connection refused", "end": {}}`,
		`{"end": {}}`,
		`{"end": {"sum_sent": {"seconds": 0, "bytes": 0}, "sum_received": {"seconds": 1, "bytes": 0}}}`,
	} {
		if _, err := ParseIperf([]byte(in)); err == nil {
			t.Errorf("ParseIperf(%s) succeeded", in)
		}
	}
}

func TestIperfArgs(t *testing.T) {
	got := IperfSpec{UDP: true, Length: 8192, Rate: 2e9, Seconds: 2, Window: 8 << 20}.Args("198.18.0.2")
	want := []string{"iperf3", "-J", "-c", "198.18.0.2", "-p", "5201", "-t", "2", "--connect-timeout", "3000", "-u", "-b", "2000000000", "-l", "8192", "-w", "8388608"}
	if len(got) != len(want) {
		t.Fatalf("args %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("args %v, want %v", got, want)
		}
	}
}

func TestHasListener(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 020012C6:1451 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123 1 0 100 0 0 10 0
   1: 020012C6:1B59 010012C6:9C40 01 00000000:00000000 00:00000000 00000000     0        0 124 1 0 20 4 30 10 -1
`
	if !HasListener(table, 5201) {
		t.Error("listener on 5201 not found")
	}
	if HasListener(table, 7001) {
		t.Error("an established socket counted as listening")
	}
}

func TestParseProcStat(t *testing.T) {
	// A command with spaces and parentheses, as the kernel prints it.
	line := "4242 (a (weird) cmd) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 75 30 12 20 0 3 0 1000 0 0"
	st, err := ParseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	want := ProcStat{PID: 4242, PPID: 17, Utime: 250, Stime: 75, Cutime: 30, Cstime: 12}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
	if _, err := ParseProcStat("garbage"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestOutsideCPU(t *testing.T) {
	const self = 100
	before := Snapshot{
		1:   {PID: 1, Utime: 10},
		2:   {PID: 2},
		50:  {PID: 50, PPID: 2, Utime: 500},               // kernel thread: ignored
		100: {PID: 100, PPID: 1, Utime: 1000},             // the benchmark
		101: {PID: 101, PPID: 100, Utime: 10},             // its child
		200: {PID: 200, PPID: 1, Utime: 100},              // another user's shell
		201: {PID: 201, PPID: 200, Utime: 300, Stime: 50}, // its compiler, exits meanwhile
	}
	after := Snapshot{
		1:   {PID: 1, Utime: 10},
		2:   {PID: 2},
		50:  {PID: 50, PPID: 2, Utime: 900},
		100: {PID: 100, PPID: 1, Utime: 5000},
		101: {PID: 101, PPID: 100, Utime: 900},
		102: {PID: 102, PPID: 101, Utime: 40},                         // our grandchild, new
		200: {PID: 200, PPID: 1, Utime: 120, Cutime: 400, Cstime: 60}, // reaped 201 (350 before + 110 during)
		300: {PID: 300, PPID: 1, Utime: 25},                           // new outside process
	}
	// Outside: shell +20, compiler 110 during the interval, new process 25.
	want := float64(20+110+25) / ticksPerSecond
	if got := OutsideCPU(before, after, self); math.Abs(got-want) > 1e-9 {
		t.Errorf("OutsideCPU = %v, want %v", got, want)
	}
}

// Captured around an unlimited 8 KB iperf3 UDP run over a bare veth pair
// with default socket buffers: 57150 datagrams sent, 39070 received; the
// receiving socket dropped 18065 (Udp InErrors) and 15 were still queued
// when iperf3 closed it, so the path lost nothing.
func TestReceiverDrops(t *testing.T) {
	read := func(name string) SNMP {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseSNMP(string(data))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before, after := read("snmp-before.txt"), read("snmp-after.txt")
	if after["Udp:RcvbufErrors"] != 18065 || after["Ip:InDelivers"] != 57165 {
		t.Fatalf("parsed %v", after)
	}
	if got := ReceiverDrops(before, after); got != 18065+15 {
		t.Errorf("ReceiverDrops = %d, want %d", got, 18065+15)
	}
	res := IperfResult{SentBytes: 57150 * 8192, ReceivedBytes: 39070 * 8192}
	res.LossPct = 100 * (1 - float64(res.ReceivedBytes)/float64(res.SentBytes))
	res.AttributeLoss(ReceiverDrops(before, after), 8192)
	if math.Abs(res.ReceiverLossPct-res.LossPct) > 1e-9 || res.PathLossPct != 0 {
		t.Errorf("attributed %+v, want all loss in the receiver", res)
	}
	// Half the loss before the receiver: the path's share is the rest.
	res.AttributeLoss(9040, 8192)
	if math.Abs(res.PathLossPct-res.LossPct/2) > 1e-9 || math.Abs(res.ReceiverLossPct+res.PathLossPct-res.LossPct) > 1e-9 {
		t.Errorf("attributed %+v", res)
	}
}

func TestParseSNMPErrors(t *testing.T) {
	for _, in := range []string{"", "Ip: Forwarding\nIp: x", "Ip: A B\nIp: 1", "Udp: InErrors\nTcp: 1", "Ip: A\nIp: 1"} {
		if _, err := ParseSNMP(in); err == nil {
			t.Errorf("ParseSNMP(%q) succeeded", in)
		}
	}
}

func TestParseMachineCPU(t *testing.T) {
	// Captured from this machine's /proc/stat (2 CPUs), shortened.
	const stat = "cpu  1000 20 3000 50000 40 5 600 7 0 0\ncpu0 500 10 1500 25000 20 2 300 3 0 0\nintr 1 2 3\n"
	m, err := ParseMachineCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000 + 20 + 3000 + 5 + 600); m.Busy != want {
		t.Errorf("busy %d ticks, want %d", m.Busy, want)
	}
	if want := m.Busy + 50000 + 40 + 7; m.Total != want {
		t.Errorf("total %d ticks, want %d", m.Total, want)
	}
	later := MachineCPU{Busy: m.Busy + 250, Total: m.Total + 400}
	if got := later.BusySecondsSince(m); got != 2.5 {
		t.Errorf("BusySecondsSince = %v, want 2.5", got)
	}
	if _, err := ParseMachineCPU("intr 1 2\n"); err == nil {
		t.Error("no cpu line: no error")
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tovs-vswitchd\nVmPeak:\t  300000 kB\nVmRSS:\t   23456 kB\nRssAnon:\t 10000 kB\n"
	if got, err := ParseVmRSS(status); err != nil || got != 23456*1024 {
		t.Errorf("ParseVmRSS = %d, %v; want %d", got, err, 23456*1024)
	}
	if _, err := ParseVmRSS("Name:\tkthreadd\n"); err == nil {
		t.Error("no VmRSS line: want an error")
	}
	if _, err := ParseVmRSS("VmRSS:\t12 MB\n"); err == nil {
		t.Error("unknown unit: want an error")
	}
	self, err := RSSBytes([]int{os.Getpid()})
	if err != nil || self <= 0 {
		t.Errorf("RSSBytes(self) = %d, %v", self, err)
	}
}

func TestSchedstat(t *testing.T) {
	if got, err := ParseSchedstat("179333957 30842531 470\n"); err != nil || got != 0.179333957 {
		t.Errorf("ParseSchedstat = %v, %v", got, err)
	}
	if _, err := ParseSchedstat(""); err == nil {
		t.Error("empty schedstat: want an error")
	}
	before, ok := ThreadCPUSeconds([]int{os.Getpid()})
	if !ok {
		t.Skip("no schedstat on this kernel")
	}
	deadline := time.Now().Add(20 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	after, _ := ThreadCPUSeconds([]int{os.Getpid()})
	if after-before < 0.005 {
		t.Errorf("20 ms of spinning counted as %v s", after-before)
	}
}
