package datapathtest

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// measureEnv turns TestAFXDPUMEMMeasure on: its value is the number of
// rounds (e.g. GVSDP_UMEM_MEASURE=5).
const measureEnv = "GVSDP_UMEM_MEASURE"

// TestAFXDPUMEMMeasure measures iperf3 TCP through the whole switch
// (dpif, NORMAL) between two afxdp ports with private UMEMs (every
// forwarded frame copied once, on transmit) and with one shared UMEM
// (frames moved as descriptors), in generic and native XDP mode: four
// switches side by side, run round-robin, each round in every setup, so
// the machine's load drifts alike for all. It reports per setup the
// median throughput and the switch process's CPU (user + system, which
// includes the kernel's copy-mode transmit done inside its sendto calls)
// per Gbit moved. Off unless GVSDP_UMEM_MEASURE is set.
func TestAFXDPUMEMMeasure(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(measureEnv))
	if rounds <= 0 {
		t.Skipf("set %s=ROUNDS to measure", measureEnv)
	}
	needIperf(t)
	type setup struct {
		v              portVariant
		e              *twoEnds
		gbps, cpuPerGb []float64
		retransmits    int
	}
	var setups []*setup
	for _, v := range []portVariant{
		{name: "generic-private", typ: "afxdp", xdpMode: "generic"},
		{name: "generic-shared", typ: "afxdp", xdpMode: "generic", sharedUMEM: true},
		{name: "native-private", typ: "afxdp", xdpMode: "native"},
		{name: "native-shared", typ: "afxdp", xdpMode: "native", sharedUMEM: true},
	} {
		e := buildTwoEnds(t, v, 0)
		if _, err := newPinger(t, e.a.NS).reach(e.bIP, 56, 5*time.Second); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		setups = append(setups, &setup{v: v, e: e})
	}
	const secs = 3
	for range rounds {
		for _, s := range setups {
			cpu0, err := processCPU(s.e.sw.cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			r, err := iperfTCP(s.e.bNS, s.e.a.NS, s.e.bIP, secs)
			if err != nil {
				t.Fatalf("%s: %v", s.v.name, err)
			}
			cpu1, _ := processCPU(s.e.sw.cmd.Process.Pid)
			s.gbps = append(s.gbps, r.RecvGbps)
			s.cpuPerGb = append(s.cpuPerGb, float64((cpu1-cpu0).Milliseconds())/(r.RecvGbps*secs))
			s.retransmits += r.Retransmits
		}
	}
	for _, s := range setups {
		t.Logf("%-16s TCP median %.2f Gbit/s, switch CPU median %.0f ms per Gbit; runs %.2f Gbit/s, %.0f ms/Gbit; %d retransmits",
			s.v.name, median(s.gbps), median(s.cpuPerGb), s.gbps, s.cpuPerGb, s.retransmits)
		if s.v.sharedUMEM {
			checkZeroCopy(t, s.v, s.e.sw.stats())
		}
	}
}

// processCPU returns a process's user plus system CPU time from
// /proc/PID/stat (clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
