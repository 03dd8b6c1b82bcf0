package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Reading large messages is bounded server-wide. A session reads a
// message of up to LargeMessageThreshold bytes freely; past that it must
// hold one of the server's large-message slots to read on, and keeps it
// until the message has been handled. Without a slot it stops reading
// (the client's writes block in its socket), so however many clients
// send large messages at once, at most DefaultLargeMessageSlots of them
// are buffered, each under jsonrpc.MaxMessageSize. Open vSwitch's
// ovsdb-server bounds memory the same way by parsing one session at a
// time. Small messages, and so every other client, are never held up.
const (
	// LargeMessageThreshold is how many bytes a session reads towards one
	// message before it needs a large-message slot.
	LargeMessageThreshold = 1 << 20
	// DefaultLargeMessageSlots is how many sessions may read large
	// messages at once.
	DefaultLargeMessageSlots = 1
	// DefaultLargeMessageStall is how long a session holding a slot may
	// go without receiving a byte before it is dropped, so that a client
	// that starts a large message and stops cannot keep others' large
	// messages waiting.
	DefaultLargeMessageStall = 10 * time.Second
	// FreeMemoryThreshold is the size of message after which the memory
	// is handed back to the system at once.
	FreeMemoryThreshold = 16 << 20
)

// largeSlots is the server's large-message slots.
type largeSlots struct {
	slots chan struct{}
	// freeing is set while a goroutine returns memory to the system;
	// again asks it for one more pass (a message was released meanwhile).
	freeing, again atomic.Bool
}

func newLargeSlots(n int) *largeSlots {
	return &largeSlots{slots: make(chan struct{}, n)}
}

// acquire takes a slot, or gives up when done is closed.
func (l *largeSlots) acquire(done <-chan struct{}) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	case <-done:
		return false
	}
}

// release gives a slot back. After a message of FreeMemoryThreshold or
// more (huge) it then returns the memory to the system (one collection at
// a time, and one more after the last such release), so that a burst of
// huge messages does not leave the process at its peak size; smaller ones
// are left to the collector, which a forced collection per message would
// only keep busy.
func (l *largeSlots) release(huge bool) {
	<-l.slots
	if !huge {
		return
	}
	l.again.Store(true)
	if !l.freeing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			for l.again.Swap(false) {
				debug.FreeOSMemory()
			}
			l.freeing.Store(false)
			// A release between the last pass and now found freeing
			// set and left it to us.
			if !l.again.Load() || !l.freeing.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// budgetReader is a session's connection as its message reader sees it:
// it counts the bytes read since the last complete message and, past
// LargeMessageThreshold, waits for a large-message slot before reading
// on. Owned by the session's reader goroutine.
type budgetReader struct {
	s       *session
	pending int  // bytes read since the last message was returned
	holding bool // a slot is held for the message being read
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.pending >= LargeMessageThreshold && !r.holding {
		if !r.s.srv.large.acquire(r.s.done) {
			return 0, net.ErrClosed
		}
		r.holding = true
	}
	if r.holding {
		r.s.conn.SetReadDeadline(time.Now().Add(r.s.srv.largeStall))
	}
	n, err := r.s.conn.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("no data for %v in the middle of a large message", r.s.srv.largeStall)
	}
	if n > 0 {
		r.s.touch()
		r.pending += n
	}
	return n, err
}

// messageDone is called by the reader goroutine for each message read: it
// returns the function the loop calls once the message has been handled
// (nil for a message read without a slot).
func (r *budgetReader) messageDone() (release func()) {
	size := r.pending
	r.pending = 0
	if !r.holding {
		return nil
	}
	r.holding = false
	r.s.conn.SetReadDeadline(time.Time{})
	huge := size >= FreeMemoryThreshold
	return func() { r.s.srv.large.release(huge) }
}

// dropSlot releases a slot held by a reader that ends mid-message.
func (r *budgetReader) dropSlot() {
	if r.holding {
		r.holding = false
		r.s.srv.large.release(true)
	}
}

// holdSlotForReply releases a large message's slot once its reply is
// written (the backlog is back under the pause threshold), so that a
// large reply (an echo, a big select) counts against the bound too; it
// holds the slot for at most the stall limit, then lets it go even if the
// client is slow to read. Called by the loop.
func (s *session) holdSlotForReply(release func()) {
	if s.backlogBytes() <= s.srv.pauseBacklog {
		release()
		return
	}
	s.heldSlot, s.heldUntil = release, time.Now().Add(s.srv.largeStall)
}

// releaseHeldSlot releases the held slot when the reply has been written,
// the time is up, or (force) the session ends. Called by the loop.
func (s *session) releaseHeldSlot(force bool) {
	if s.heldSlot == nil {
		return
	}
	if force || s.backlogBytes() <= s.srv.pauseBacklog || !time.Now().Before(s.heldUntil) {
		s.heldSlot()
		s.heldSlot = nil
	}
}
