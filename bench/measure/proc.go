package measure

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ticksPerSecond is USER_HZ, the unit of /proc/PID/stat times (100 on
// every Linux architecture Go supports).
const ticksPerSecond = 100

// ProcStat is the part of /proc/PID/stat the benchmark uses.
type ProcStat struct {
	PID, PPID    int
	Utime, Stime int64 // own, ticks
	Cutime       int64 // waited-for children, ticks
	Cstime       int64
}

// ParseProcStat parses the content of /proc/PID/stat.
func ParseProcStat(s string) (ProcStat, error) {
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return ProcStat{}, errors.New("malformed stat")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return ProcStat{}, err
	}
	// Fields after the command: state(3) ppid(4) ... utime(14) stime(15)
	// cutime(16) cstime(17); f[0] is field 3.
	f := strings.Fields(s[close+1:])
	if len(f) < 15 {
		return ProcStat{}, errors.New("short stat")
	}
	var v [5]int64
	for i, idx := range []int{1, 11, 12, 13, 14} {
		if v[i], err = strconv.ParseInt(f[idx], 10, 64); err != nil {
			return ProcStat{}, err
		}
	}
	return ProcStat{PID: pid, PPID: int(v[0]), Utime: v[1], Stime: v[2], Cutime: v[3], Cstime: v[4]}, nil
}

// ReadProcStat reads /proc/PID/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, err
	}
	return ParseProcStat(string(data))
}

// CPUSeconds is the user+system time of the given processes (all their
// threads), in seconds; processes that are gone count as 0.
func CPUSeconds(pids []int) float64 {
	var ticks int64
	for _, pid := range pids {
		if st, err := ReadProcStat(pid); err == nil {
			ticks += st.Utime + st.Stime
		}
	}
	return float64(ticks) / ticksPerSecond
}

// Snapshot is the CPU time of every process at one moment.
type Snapshot map[int]ProcStat

// TakeSnapshot reads every /proc/PID/stat.
func TakeSnapshot() Snapshot {
	entries, err := os.ReadDir("/proc")
	snap := Snapshot{}
	if err != nil {
		return snap
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := ReadProcStat(pid); err == nil {
			snap[pid] = st
		}
	}
	return snap
}

// OutsideCPU returns the CPU seconds that processes other than self and its
// descendants (and other than kernel threads, which do the benchmark's
// packet work too) used between two snapshots. A process that exited in
// between counts through its parent's cutime/cstime, which then includes
// its whole life: what it had used before the first snapshot is taken off
// again.
func OutsideCPU(before, after Snapshot, self int) float64 {
	ours := func(pid int) bool {
		for range 64 {
			if pid == self {
				return true
			}
			st, ok := after[pid]
			if !ok {
				st, ok = before[pid]
			}
			if !ok || st.PPID == 0 {
				return false
			}
			pid = st.PPID
		}
		return false
	}
	var ticks int64
	for pid, a := range after {
		if pid == 2 || a.PPID == 2 || ours(pid) {
			continue
		}
		total := a.Utime + a.Stime + a.Cutime + a.Cstime
		if b, ok := before[pid]; ok {
			total -= b.Utime + b.Stime + b.Cutime + b.Cstime
		}
		ticks += max(0, total)
	}
	for pid, b := range before {
		if _, alive := after[pid]; alive || pid == 2 || b.PPID == 2 || ours(pid) {
			continue
		}
		ticks -= b.Utime + b.Stime + b.Cutime + b.Cstime
	}
	return float64(max(0, ticks)) / ticksPerSecond
}

// ParseVmRSS returns the resident set size, in bytes, from the content of
// /proc/PID/status (its VmRSS line, in kB).
func ParseVmRSS(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("malformed VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no VmRSS line (kernel thread or exited process)")
}

// RSSBytes is the sum of the resident set sizes of the given processes;
// it fails if one of them cannot be read (gone), since a sum without it
// would understate the memory.
func RSSBytes(pids []int) (int64, error) {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, err
		}
		rss, err := ParseVmRSS(string(data))
		if err != nil {
			return 0, fmt.Errorf("pid %d: %w", pid, err)
		}
		total += rss
	}
	return total, nil
}

// ParseSchedstat returns the time on CPU, in seconds, from the content of
// /proc/PID/task/TID/schedstat (its first field, in nanoseconds).
func ParseSchedstat(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) < 1 {
		return 0, errors.New("empty schedstat")
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return float64(ns) / 1e9, nil
}

// ThreadCPUSeconds is the time on CPU of every current thread of the given
// processes, from schedstat, to the nanosecond: idle daemons use too little
// for /proc/PID/stat's 10 ms ticks. Threads that ended are not counted, so
// it suits long-lived threads (an idle switch's), not short-lived ones.
// ok is false when schedstat cannot be read (a kernel without it).
func ThreadCPUSeconds(pids []int) (seconds float64, ok bool) {
	for _, pid := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return 0, false
		}
		for _, t := range tasks {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
			if err != nil {
				continue // the thread ended meanwhile
			}
			s, err := ParseSchedstat(string(data))
			if err != nil {
				return 0, false
			}
			seconds += s
		}
	}
	return seconds, true
}
