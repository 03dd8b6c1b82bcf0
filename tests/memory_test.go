package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// procStatusKB reads a field such as VmHWM or VmRSS of /proc/PID/status.
func procStatusKB(pid int, field string) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return -1
}

// bigTransact is a valid transaction of about size bytes: a select whose
// condition holds a long string, so the reply is small and nothing stays
// in the database.
func bigTransact(size int) []byte {
	return []byte(`{"id":1,"method":"transact","params":["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","==","` +
		strings.Repeat("x", size) + `"]]}]}`)
}

// Memory across connections: five clients sending 60 MB messages at once
// keep the server's peak RSS under maxPeakMB, another client's requests
// are answered meanwhile, every big request gets its reply, and the RSS
// falls back under maxAfterMB within a second. Debian's ovsdb-server
// runs the same load for reference (its figures are logged).
func TestConcurrentLargeMessagesMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 300 MB")
	}
	const (
		clients    = 5
		msgSize    = 60 << 20
		maxPeakMB  = 400
		maxAfterMB = 120
	)
	ref, ours := sides(t)
	msg := bigTransact(msgSize)
	for _, kind := range []serverKind{ref, ours} {
		s := startServer(t, kind)
		pid := s.cmd.Process.Pid
		var wg sync.WaitGroup
		errs := make(chan error, clients+1)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.Dial("unix", s.sock)
				if err != nil {
					errs <- err
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(60 * time.Second))
				if _, err := c.Write(msg); err != nil {
					errs <- fmt.Errorf("write: %v", err)
					return
				}
				var reply struct {
					ID     int             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.NewDecoder(c).Decode(&reply); err != nil || reply.ID != 1 || !strings.HasPrefix(string(reply.Result), `[{"rows":[]}]`) {
					errs <- fmt.Errorf("reply: %v %s", err, reply.Result)
				}
			}()
		}
		// Meanwhile a small client is served without waiting for them.
		stop := make(chan struct{})
		var slowest time.Duration
		var pingDone sync.WaitGroup
		pingDone.Add(1)
		go func() {
			defer pingDone.Done()
			c, err := net.Dial("unix", s.sock)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			dec := json.NewDecoder(c)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
				start := time.Now()
				c.SetDeadline(start.Add(10 * time.Second))
				fmt.Fprintf(c, `{"id":%d,"method":"list_dbs","params":[]}`, i)
				var reply map[string]any
				if err := dec.Decode(&reply); err != nil {
					errs <- fmt.Errorf("small client: %v", err)
					return
				}
				slowest = max(slowest, time.Since(start))
			}
		}()
		wg.Wait()
		close(stop)
		pingDone.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", kind.name, err)
		}
		peak := procStatusKB(pid, "VmHWM") / 1024
		time.Sleep(time.Second)
		after := procStatusKB(pid, "VmRSS") / 1024
		t.Logf("%s: %d clients x %d MB: peak RSS %d MB, %d MB after; slowest list_dbs meanwhile %v", kind.name, clients, msgSize>>20, peak, after, slowest)
		if kind.name != "ours" {
			continue
		}
		if peak > maxPeakMB {
			t.Errorf("ours: peak RSS %d MB over %d MB", peak, maxPeakMB)
		}
		if after >= maxAfterMB {
			t.Errorf("ours: RSS %d MB 1 s after the load, not under %d MB", after, maxAfterMB)
		}
		if slowest > 2*time.Second {
			t.Errorf("ours: a small request waited %v during the load", slowest)
		}
	}
}
