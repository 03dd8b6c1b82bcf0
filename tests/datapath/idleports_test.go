package datapathtest

import (
	"fmt"
	"testing"
	"time"
)

// idlePorts is how many idle system ports share the PMD with the two
// busy ones: more than a busy PMD reads one by one (dpif's
// directPollMax, 32), so it polls only the queues epoll reports ready.
const idlePorts = 38

// TestManyIdlePorts: one PMD polls 40 system ports, 38 of them idle.
// Two hosts on the others reach each other, every echo of a quick series
// comes back (the PMD finds the ready queues among the idle ones, asleep
// and busy), and so they do after idle ports flap (the kernel leaves an
// error pending on their sockets, which epoll reports).
func TestManyIdlePorts(t *testing.T) {
	tp := newTopo(t)
	swNS := tp.ns("sw")
	idleNS := tp.ns("idle")
	sub := tp.subnet(0)
	h1 := tp.host(swNS, "h1", "p1", sub+".1/24", 0)
	h2 := tp.host(swNS, "h2", "p2", sub+".2/24", 0)
	spec := switchSpec{PMDs: 1, Ports: []portSpec{{Name: "p1", Type: "system"}, {Name: "p2", Type: "system"}}}
	for i := range idlePorts {
		name := fmt.Sprintf("i%d", i)
		tp.veth(swNS, name, idleNS, name, 0)
		spec.Ports = append(spec.Ports, portSpec{Name: name, Type: "system"})
	}
	if _, err := startSwitch(t, swNS, spec); err != nil {
		t.Fatal(err)
	}
	p1, p2 := newPinger(t, h1.NS), newPinger(t, h2.NS)
	if _, err := p1.reach(h2.IP, 56, 5*time.Second); err != nil {
		t.Fatalf("h1 -> h2: %v", err)
	}
	series := func(when string) {
		t.Helper()
		lost := 0
		for i := range 100 {
			p, dst := p1, h2.IP
			if i%2 == 1 {
				p, dst = p2, h1.IP
			}
			if _, err := p.ping(dst, 56, 300*time.Millisecond); err != nil {
				lost++
			}
			if i%10 == 0 {
				time.Sleep(20 * time.Millisecond) // let the PMD fall asleep now and then
			}
		}
		if lost > 0 {
			t.Errorf("%s: %d of 100 echoes lost", when, lost)
		}
	}
	series("40 ports, 38 idle")

	for _, dev := range []string{"i3", "i17", "i30"} {
		tp.run("ip", "-n", idleNS, "link", "set", dev, "down")
	}
	time.Sleep(200 * time.Millisecond)
	for _, dev := range []string{"i3", "i17", "i30"} {
		tp.run("ip", "-n", idleNS, "link", "set", dev, "up")
	}
	series("after idle ports flapped")
}
