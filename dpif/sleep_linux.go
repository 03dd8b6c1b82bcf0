package dpif

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper lets an idle PMD block in ppoll(2) on its queues' PollFDs plus
// an eventfd that the datapath writes to wake it (new plan, stop). A
// packet arriving on any polled queue wakes it at once; queues without a
// PollFD are polled again after at most MaxSleep.
type sleeper struct {
	wakeFD int
	fds    []unix.PollFd // [0] is wakeFD
	allFDs bool
	ts     unix.Timespec
	drain  [8]byte
}

func (s *sleeper) init() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("dpif: eventfd: %w", err)
	}
	s.wakeFD = fd
	s.fds = []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	s.allFDs = true
	return nil
}

// setFDs takes the poll set from a new plan (on the PMD goroutine).
func (s *sleeper) setFDs(rxqs []rxq) {
	s.fds = s.fds[:1]
	s.allFDs = true
	for _, q := range rxqs {
		if q.fd < 0 {
			s.allFDs = false
			continue
		}
		s.fds = append(s.fds, unix.PollFd{Fd: int32(q.fd), Events: unix.POLLIN})
	}
}

// sleep waits up to d for a queue or the wake eventfd to become readable
// and returns how long it slept.
func (s *sleeper) sleep(d time.Duration) time.Duration {
	start := time.Now()
	s.ts = unix.NsecToTimespec(int64(d))
	for i := range s.fds {
		s.fds[i].Revents = 0
	}
	n, err := unix.Ppoll(s.fds, &s.ts, nil)
	if err == nil && n > 0 && s.fds[0].Revents != 0 {
		unix.Read(s.wakeFD, s.drain[:])
	}
	return time.Since(start)
}

// wake makes a sleeping PMD return from sleep; safe from any goroutine.
func (s *sleeper) wake() {
	one := [8]byte{1}
	unix.Write(s.wakeFD, one[:])
}

func (s *sleeper) closeFDs() {
	if s.wakeFD > 0 {
		unix.Close(s.wakeFD)
		s.wakeFD = -1
	}
}

// pinToCPU pins the calling OS thread (the goroutine must have called
// runtime.LockOSThread) to one CPU.
func pinToCPU(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// parseCPUMask parses a pmd-cpu-mask ("0x6", "6", "") into CPU numbers.
func parseCPUMask(s string) ([]int, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	if s == "" {
		return nil, nil
	}
	var cpus []int
	// Right to left, four CPUs per hex digit, so masks wider than 64 bits
	// work.
	for i := len(s) - 1; i >= 0; i-- {
		d, err := strconv.ParseUint(s[i:i+1], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("dpif: invalid pmd-cpu-mask %q", s)
		}
		base := (len(s) - 1 - i) * 4
		for d != 0 {
			b := bits.TrailingZeros64(d)
			cpus = append(cpus, base+b)
			d &^= 1 << b
		}
	}
	return cpus, nil
}
