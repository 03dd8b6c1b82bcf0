package dpif

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sleeper is a PMD's epoll(7) set: the PollFDs of the queues it polls
// and an eventfd the datapath writes to wake it (new plan, stop, new
// max-sleep). Each registered descriptor carries its own number as the
// event data, which stays true across plan changes, so a new plan costs
// one epoll_ctl per queue that comes or goes and none for the others.
// Registrations are level-triggered: a queue left with packets is
// reported again by the next wait. Only the PMD goroutine calls setFDs
// and wait; wake is safe from any goroutine.
type sleeper struct {
	epfd   int
	wakeFD int
	reg    map[int32]fdOwner // PollFDs in the set, wakeFD aside
	events []unix.EpollEvent // wait's results
	ts     unix.Timespec
	drain  [8]byte
	one    [8]byte // what wake adds to the eventfd (any non-zero count); read-only after init
	// noPwait2: the kernel has no epoll_pwait2 (before Linux 5.11), so
	// timeouts are whole milliseconds, rounded up.
	noPwait2 bool
}

// maxEvents bounds how many ready descriptors one wait returns; the rest
// stay ready (level-triggered) and come with the next.
const maxEvents = 128

func (s *sleeper) init() error {
	s.epfd, s.wakeFD = -1, -1
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("dpif: epoll_create1: %w", err)
	}
	s.epfd = ep
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		s.closeFDs()
		return fmt.Errorf("dpif: eventfd: %w", err)
	}
	s.wakeFD = fd
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		s.closeFDs()
		return fmt.Errorf("dpif: epoll_ctl: %w", err)
	}
	s.one = [8]byte{1}
	s.reg = make(map[int32]fdOwner)
	s.events = make([]unix.EpollEvent, maxEvents)
	return nil
}

// fdOwner identifies the queue a registered descriptor was added for (its
// counters, which outlive republished ports), so a number the kernel
// handed out again after a close we did not see is registered anew.
type fdOwner *rxqCounters

// setFDs makes the set hold exactly the descriptors in want, each for its
// owner, adding and removing only those that differ, and returns those
// the kernel refused (the PMD polls their queues as if they had no
// PollFD). Called on the PMD goroutine when it takes a new plan, so a
// descriptor leaves the set before PortDel closes its device.
func (s *sleeper) setFDs(want map[int32]fdOwner) (refused []int32, err error) {
	for fd, owner := range s.reg {
		if w, ok := want[fd]; !ok || w != owner {
			// A descriptor closed meanwhile has left the set already.
			_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
			delete(s.reg, fd)
		}
	}
	for fd, owner := range want {
		if _, ok := s.reg[fd]; ok {
			continue
		}
		if e := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, int(fd), &unix.EpollEvent{Events: unix.EPOLLIN, Fd: fd}); e != nil {
			refused = append(refused, fd)
			err = e
			continue
		}
		s.reg[fd] = owner
	}
	return refused, err
}

// renew registers fd again, now that its number refers to another open
// file (dup3 onto it): epoll keys registrations by file and number, so
// the old file's registration went with the last reference to it or
// lingers harmlessly until then, and the new file needs its own.
func (s *sleeper) renew(fd int32) error {
	_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
	err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, int(fd), &unix.EpollEvent{Events: unix.EPOLLIN, Fd: fd})
	if err == unix.EEXIST {
		return nil
	}
	return err
}

// wait returns the registered descriptors that are ready, waiting up to
// d for one (0: not at all). A wake-up through wake is consumed and not
// among them. The result is valid until the next call.
func (s *sleeper) wait(d time.Duration) []unix.EpollEvent {
	var n int
	switch {
	case d <= 0:
		n, _ = unix.EpollWait(s.epfd, s.events, 0)
	case !s.noPwait2:
		s.ts = unix.NsecToTimespec(int64(d))
		r, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(s.epfd), uintptr(unsafe.Pointer(&s.events[0])),
			uintptr(len(s.events)), uintptr(unsafe.Pointer(&s.ts)), 0, 0)
		if e == unix.ENOSYS {
			s.noPwait2 = true
			return s.wait(d)
		}
		if e == 0 {
			n = int(r)
		}
	default:
		n, _ = unix.EpollWait(s.epfd, s.events, int((d+time.Millisecond-1)/time.Millisecond))
	}
	evs := s.events[:max(n, 0)]
	for i := range evs {
		if evs[i].Fd == int32(s.wakeFD) {
			unix.Read(s.wakeFD, s.drain[:])
			evs[i] = evs[len(evs)-1]
			evs = evs[:len(evs)-1]
			break
		}
	}
	return evs
}

// wake makes a sleeping PMD return from wait; safe from any goroutine.
func (s *sleeper) wake() {
	unix.Write(s.wakeFD, s.one[:])
}

func (s *sleeper) closeFDs() {
	for _, fd := range []*int{&s.wakeFD, &s.epfd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
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
