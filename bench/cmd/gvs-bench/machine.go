package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"gvs/bench/report"
	"gvs/netdev"
)

// describeMachine gathers what a reader needs to judge the figures.
func describeMachine() report.Machine {
	m := report.Machine{CPUs: runtime.NumCPU(), Versions: map[string]string{"go": runtime.Version()}}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.CPU = firstField("/proc/cpuinfo", "model name")
	if total, err := netdev.MemTotal(); err == nil {
		m.MemoryGB = float64(int(float64(total)/(1<<30)*10+0.5)) / 10
	}
	for name, argv := range map[string][]string{
		"Open vSwitch": {"/usr/sbin/ovs-vswitchd", "--version"},
		"iperf3":       {"iperf3", "--version"},
		"gvs":          {"git", "describe", "--always", "--dirty"},
	} {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			continue
		}
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		fields := strings.Fields(line)
		if name != "gvs" && len(fields) > 0 {
			// "ovs-vswitchd (Open vSwitch) 3.1.0", "iperf 3.12 (cJSON 1.7.15)"
			line = fields[len(fields)-1]
			if name == "iperf3" && len(fields) > 1 {
				line = fields[1]
			}
		}
		m.Versions[name] = line
	}
	return m
}

func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
