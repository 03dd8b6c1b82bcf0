package main

import (
	"fmt"
	"time"

	"gvs/bench/measure"
	"gvs/bench/report"
	"gvs/bench/topo"
)

// config is the shape of one session, fixed by -quick.
type config struct {
	quick       bool
	runs        int
	tcpSeconds  int
	udpSeconds  int
	udpRates    []int64 // offered bits/s; 0 is unlimited
	tcpStreams  []int
	pingCount   int
	rrDuration  time.Duration
	flowRates   []int
	flowSeconds time.Duration
	dbDuration  time.Duration
	dbUpdates   int
}

func newConfig(quick bool, runs int) config {
	if quick {
		return config{quick: true, runs: max(1, runs), tcpSeconds: 2, udpSeconds: 1,
			udpRates: []int64{1e9, 0}, tcpStreams: []int{1}, pingCount: 10,
			rrDuration: 500 * time.Millisecond, flowRates: []int{20000, 40000}, flowSeconds: 500 * time.Millisecond,
			dbDuration: 500 * time.Millisecond, dbUpdates: 50}
	}
	return config{runs: max(3, runs), tcpSeconds: 3, udpSeconds: 2,
		udpRates: []int64{1e9, 2e9, 4e9, 0}, tcpStreams: []int{1, 4}, pingCount: 20,
		rrDuration: 500 * time.Millisecond, flowRates: fullFlowRates, flowSeconds: time.Second,
		dbDuration: 2 * time.Second, dbUpdates: 200}
}

// fullFlowRates are the new-flow test's offered rates, doubling until a
// switch loses (the test stops at the first loss).
var fullFlowRates = []int{10000, 20000, 40000, 80000, 160000, 320000, 640000}

// test is one measurement run against a started setup; it yields values
// for some of its figures.
type test struct {
	id      string
	figures []report.Figure
	cost    time.Duration // rough duration, for the progress line
	run     func(r *runner) (map[string]float64, error)
	// noRepeat: a busy run is kept (marked busy), not repeated, for a
	// test whose first attempt leaves state that skews a second.
	noRepeat bool
}

// udpSizes are the datagram sizes of the UDP tests.
var udpSizes = []struct {
	id    string
	bytes int
	label string
}{{"8k", 8192, "8 KB"}, {"1400", 1400, "1400 B"}}

func rateID(bps int64) string {
	if bps == 0 {
		return "max"
	}
	return fmt.Sprintf("%dg", bps/1e9)
}

func rateText(bps int64) string {
	if bps == 0 {
		return "unlimited"
	}
	return fmt.Sprintf("at %d Gbit/s", bps/1e9)
}

// plan lists the tests of one setup run, latency first (an idle switch).
func (c config) plan() []test {
	var tests []test
	tests = append(tests, pingTest(c), rrTest(c))
	for _, streams := range c.tcpStreams {
		tests = append(tests, tcpTest(c, streams))
	}
	for _, size := range udpSizes {
		for _, rate := range c.udpRates {
			tests = append(tests, udpTest(c, size.id, size.label, size.bytes, rate))
		}
	}
	tests = append(tests, flowTest(c, topo.FlowSenders))
	return tests
}

func tcpTest(c config, streams int) test {
	id := fmt.Sprintf("tcp-%d", streams)
	name := fmt.Sprintf("TCP, %d stream", streams)
	if streams > 1 {
		name += "s"
	}
	figs := []report.Figure{{ID: id, Test: name, Label: "throughput", Unit: "Gbit/s", Higher: true}}
	if streams == 1 {
		figs = append(figs, report.Figure{ID: id + "-retr", Test: name, Label: "retransmits", Unit: "segments"})
	}
	figs = append(figs, report.Figure{ID: id + "-cpu", Test: name, Label: "switch CPU", Unit: "CPU s/Gbit"})
	if streams == 1 {
		figs = append(figs, report.Figure{ID: id + "-machcpu", Test: name, Label: "whole machine's CPU", Unit: "CPU s/Gbit"})
	}
	spec := measure.IperfSpec{Streams: streams, Seconds: c.tcpSeconds}
	return test{id: id, figures: figs, cost: time.Duration(c.tcpSeconds)*time.Second + 500*time.Millisecond,
		run: func(r *runner) (map[string]float64, error) {
			res, err := r.iperf(spec)
			if err != nil {
				return nil, err
			}
			vals := map[string]float64{id: res.Gbps}
			if streams == 1 {
				vals[id+"-retr"] = float64(res.Retransmits)
			}
			if res.switchCPU >= 0 && res.Gbps > 0 {
				vals[id+"-cpu"] = res.switchCPU / (res.Gbps * res.Seconds)
			}
			if streams == 1 && res.machineCPU >= 0 && res.Gbps > 0 {
				vals[id+"-machcpu"] = res.machineCPU / (res.Gbps * res.Seconds)
			}
			return vals, nil
		}}
}

// UDPWindow is the iperf3 -w of the UDP tests (both ends' socket buffers;
// the kernel doubles it for its own overhead): large enough that the
// receiving iperf3's socket does not overflow while it is descheduled for
// tens of milliseconds. net.core.rmem_max/wmem_max are raised to it for
// the session.
const UDPWindow = 8 << 20

func udpTest(c config, sizeID, sizeText string, bytes int, rate int64) test {
	id := fmt.Sprintf("udp-%s-%s", sizeID, rateID(rate))
	name := fmt.Sprintf("UDP %s %s", sizeText, rateText(rate))
	figs := []report.Figure{
		{ID: id, Test: name, Label: "delivered", Unit: "Gbit/s", Higher: true},
		{ID: id + "-loss", Test: name, Label: "loss in the switch", Unit: "%", Percent: true},
		{ID: id + "-rcvloss", Test: name, Label: "loss in the receiving socket", Unit: "%", Percent: true},
	}
	withCPU := rate == 0 && sizeID == "1400"
	if withCPU {
		figs = append(figs, report.Figure{ID: id + "-cpu", Test: name, Label: "switch CPU", Unit: "CPU s/Gbit"})
	}
	spec := measure.IperfSpec{UDP: true, Length: bytes, Rate: rate, Seconds: c.udpSeconds, Window: UDPWindow}
	return test{id: id, figures: figs, cost: time.Duration(c.udpSeconds)*time.Second + 500*time.Millisecond,
		run: func(r *runner) (map[string]float64, error) {
			res, err := r.iperf(spec)
			if err != nil {
				return nil, err
			}
			vals := map[string]float64{id: res.Gbps, id + "-loss": res.PathLossPct, id + "-rcvloss": res.ReceiverLossPct}
			if withCPU && res.switchCPU >= 0 && res.Gbps > 0 {
				vals[id+"-cpu"] = res.switchCPU / (res.Gbps * res.Seconds)
			}
			return vals, nil
		}}
}

func pingTest(c config) test {
	fig := report.Figure{ID: "ping", Test: fmt.Sprintf("Ping, %d echoes 50 ms apart", c.pingCount), Label: "median round trip", Unit: "µs"}
	return test{id: "ping", figures: []report.Figure{fig}, cost: time.Duration(c.pingCount) * 55 * time.Millisecond,
		run: func(r *runner) (map[string]float64, error) {
			rtt, err := r.ping(c.pingCount)
			if err != nil {
				return nil, err
			}
			return map[string]float64{"ping": rtt}, nil
		}}
}

func rrTest(c config) test {
	figs := []report.Figure{
		{ID: "rr-udp", Test: "UDP request/response, 1 byte", Label: "rate", Unit: "transactions/s", Higher: true},
		{ID: "rr-tcp", Test: "TCP request/response, 1 byte", Label: "rate", Unit: "transactions/s", Higher: true},
	}
	return test{id: "rr", figures: figs, cost: 2*c.rrDuration + 500*time.Millisecond,
		run: func(r *runner) (map[string]float64, error) { return r.requestResponse(c.rrDuration) }}
}

func flowID(rate int) string { return fmt.Sprintf("flows-%dk-loss", rate/1000) }

// flowShortfall is how far below the offered rate the senders may fall
// before a rate counts as not reached (the senders, not the switch, being
// the limit).
const flowShortfall = 0.9

// prefixed returns t with every figure ID (and the values it yields)
// prefixed, and the test names prefixed too, for a second section that
// runs the same test.
func prefixed(t test, prefix string) test {
	figs := make([]report.Figure, len(t.figures))
	for i, f := range t.figures {
		f.ID = prefix + f.ID
		figs[i] = f
	}
	run := t.run
	return test{id: prefix + t.id, figures: figs, cost: t.cost,
		run: func(r *runner) (map[string]float64, error) {
			vals, err := run(r)
			out := make(map[string]float64, len(vals))
			for k, v := range vals {
				out[prefix+k] = v
			}
			return out, err
		}}
}

// flowTest offers rising rates of new UDP flows, split evenly over the
// senders, and stops at the first rate with loss: later rates are not
// tried. Loss, as in the UDP tests, leaves out what the receiving host's
// UDP layer dropped (ReceiverDrops).
func flowTest(c config, sendersN int) test {
	var figs []report.Figure
	senders := fmt.Sprintf("%d senders", sendersN)
	if sendersN == 1 {
		senders = "1 sender"
	}
	for _, rate := range c.flowRates {
		figs = append(figs, report.Figure{ID: flowID(rate), Test: fmt.Sprintf("New UDP flows at %d/s from %s", rate, senders), Label: "loss in the switch", Unit: "%", Percent: true})
	}
	figs = append(figs, report.Figure{ID: "flows-max", Test: "New UDP flows from " + senders, Label: "highest rate tried with no loss", Unit: "flows/s", Higher: true})
	return test{id: "flows", figures: figs, cost: time.Duration(len(c.flowRates)) * (c.flowSeconds + 700*time.Millisecond),
		run: func(r *runner) (map[string]float64, error) {
			if err := r.warmSenders(); err != nil {
				return nil, err
			}
			vals := map[string]float64{"flows-max": 0}
			for _, rate := range c.flowRates {
				loss, achieved, err := r.flows(rate, c.flowSeconds)
				if err != nil {
					return nil, err
				}
				// The loss stands whatever rate the senders reached; a
				// rate they fell short of is not credited as lossless.
				vals[flowID(rate)] = loss
				if loss > 0 {
					break
				}
				if achieved < flowShortfall*float64(rate) {
					r.prog.logf("%s: flows at %d/s: the senders reached only %.0f/s; higher rates not tried", r.setup.Name(), rate, achieved)
					break
				}
				vals["flows-max"] = float64(rate)
			}
			return vals, nil
		}}
}
