package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"testing"
)

// TestConnClientCounts: against a loopback listener that closes what it
// accepts, _conn-client reports the connections it completed, and they
// are the ones the listener saw.
func TestConnClientCounts(t *testing.T) {
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", ConnPortRate))
	if err != nil {
		t.Skipf("port %d busy: %v", ConnPortRate, err)
	}
	defer ln.Close()
	accepted := make(chan int)
	go func() {
		n := 0
		defer func() { accepted <- n }()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n++
			c.Close()
		}
	}()
	var out bytes.Buffer
	if err := connClientMain([]string{"-dst", "127.0.0.1", "-duration", "300ms", "-parallel", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	ln.Close()
	n := <-accepted
	var res ConnClientResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if res.Connections == 0 || res.Failures != 0 || res.Connections > int64(n) || res.PerSecond <= 0 {
		t.Errorf("result %+v, listener accepted %d", res, n)
	}
}
