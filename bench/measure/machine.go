package measure

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// MachineCPU is the whole machine's CPU time from the "cpu" line of
// /proc/stat, in ticks (USER_HZ), summed over all CPUs.
type MachineCPU struct {
	Busy  int64 // user, nice, system, irq, softirq: everything but idle, iowait and steal
	Total int64 // busy + idle + iowait + steal
}

// ParseMachineCPU reads the aggregate "cpu" line of /proc/stat content.
func ParseMachineCPU(s string) (MachineCPU, error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return MachineCPU{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return MachineCPU{}, err
		}
		v[i] = n
	}
	busy := v[0] + v[1] + v[2] + v[5] + v[6]
	return MachineCPU{Busy: busy, Total: busy + v[3] + v[4] + v[7]}, nil
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	return ParseMachineCPU(string(data))
}

// BusySecondsSince is the CPU time (all CPUs, in seconds) the machine
// spent busy between before and m.
func (m MachineCPU) BusySecondsSince(before MachineCPU) float64 {
	return float64(m.Busy-before.Busy) / ticksPerSecond
}
