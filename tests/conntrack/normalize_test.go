package conntrack

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// ephemeralPortMin is where ports the tests do not choose start: the
// scenarios' servers listen below it (21, 20, 80, 5001, 8080 ...), while
// clients' kernel-chosen source ports (32768-60999) and the ports a NAT
// allocates (20000-20255 in the SNAT scenario) are above.
const ephemeralPortMin = 10000

var (
	portRE    = regexp.MustCompile(`\b(sport|dport)=(\d+)`)
	timeoutRE = regexp.MustCompile(`\btimeout=\d+`)
	stampRE   = regexp.MustCompile(`\b(start|stop)=\d+`)
)

// normalise makes two runs' dpctl/dump-conntrack outputs comparable:
//   - sport=/dport= values of ephemeralPortMin and above become "E": the
//     kernel picks clients' source ports and the switch picks NAT ports
//     (each run differently; the SNAT scenario checks allocated ports on
//     its own);
//   - timeout=N (with -s) becomes timeout=T: seconds left, which depend
//     on when the dump ran (checkStats compares them with a tolerance);
//   - start=/stop= timestamps (with -s) become start=T/stop=T;
//   - lines are trimmed, empty ones dropped, the rest sorted (the table's
//     order is its hash order);
//   - connection ids need no placeholder: dump-conntrack prints them only
//     with -m, which the tests do not use.
//
// Nothing else changes: addresses, protocols, zones, ICMP ids (the tests'
// pings use a fixed id), types, codes, marks, labels and TCP states must be
// identical.
func normalise(dump string) string {
	var lines []string
	for _, l := range strings.Split(dump, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		l = portRE.ReplaceAllStringFunc(l, func(m string) string {
			k, v, _ := strings.Cut(m, "=")
			if n, err := strconv.Atoi(v); err == nil && n >= ephemeralPortMin {
				return k + "=E"
			}
			return m
		})
		l = timeoutRE.ReplaceAllString(l, "timeout=T")
		l = stampRE.ReplaceAllString(l, "$1=T")
		lines = append(lines, l)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// timeoutSlack is how far (seconds) a connection's timeout in the gvs
// run's dump-conntrack -s may be from the reference's.
const timeoutSlack = 5

// statsLine is one dump-conntrack -s entry: normalised with its timeout
// replaced by T, and the timeout.
type statsLine struct {
	text    string
	timeout int
}

var timeoutValueRE = regexp.MustCompile(`\btimeout=(\d+)`)

// normaliseStats normalises dump-conntrack -s output like normalise and
// keeps each entry's timeout, sorted by text, then timeout.
func normaliseStats(dump string) []statsLine {
	var out []statsLine
	for _, l := range strings.Split(dump, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		timeout := -1
		if m := timeoutValueRE.FindStringSubmatch(l); m != nil {
			timeout, _ = strconv.Atoi(m[1])
		}
		out = append(out, statsLine{text: normalise(l), timeout: timeout})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].text != out[j].text {
			return out[i].text < out[j].text
		}
		return out[i].timeout < out[j].timeout
	})
	return out
}

func joinStats(ls []statsLine) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

func TestNormalise(t *testing.T) {
	a := "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=45678,dport=5001),reply=(src=198.18.0.2,dst=198.18.0.1,sport=5001,dport=45678),zone=1,protoinfo=(state=TIME_WAIT)\n" +
		"icmp,orig=(src=198.18.0.1,dst=198.18.0.2,id=17219,type=8,code=0),reply=(src=198.18.0.2,dst=198.18.0.1,id=17219,type=0,code=0),zone=1\n"
	b := "icmp,orig=(src=198.18.0.1,dst=198.18.0.2,id=17219,type=8,code=0),reply=(src=198.18.0.2,dst=198.18.0.1,id=17219,type=0,code=0),zone=1\n\n" +
		"tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=51000,dport=5001),reply=(src=198.18.0.2,dst=198.18.0.1,sport=5001,dport=51000),zone=1,protoinfo=(state=TIME_WAIT)\n"
	if normalise(a) != normalise(b) {
		t.Errorf("runs differing only in ephemeral ports and order differ:\n%s\n%s", normalise(a), normalise(b))
	}
	for _, c := range []struct{ x, y string }{
		{"tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=45678,dport=5001),zone=1", "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=45678,dport=5002),zone=1"},
		{"tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=45678,dport=5001),zone=1", "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=45678,dport=5001),zone=2"},
		{"tcp,orig=(sport=45678,dport=5001),protoinfo=(state=TIME_WAIT)", "tcp,orig=(sport=45678,dport=5001),protoinfo=(state=ESTABLISHED)"},
		{"icmp,orig=(id=1,type=8,code=0)", "icmp,orig=(id=2,type=8,code=0)"},
		{"udp,orig=(sport=40000,dport=53)\nudp,orig=(sport=40001,dport=53)", "udp,orig=(sport=40000,dport=53)"},
	} {
		if normalise(c.x) == normalise(c.y) {
			t.Errorf("normalise hides a real difference:\n%s\n%s", c.x, c.y)
		}
	}
	if got := normalise("tcp,orig=(sport=1,dport=2),timeout=431999,start=5,stop=6"); got != "tcp,orig=(sport=1,dport=2),timeout=T,start=T,stop=T" {
		t.Errorf("normalise: %s", got)
	}
}

func TestNormaliseStats(t *testing.T) {
	got := normaliseStats("udp,orig=(sport=40000,dport=53),timeout=29\ntcp,orig=(sport=40001,dport=80),timeout=431999,protoinfo=(state=ESTABLISHED)\n")
	if len(got) != 2 || got[0].text != "tcp,orig=(sport=E,dport=80),timeout=T,protoinfo=(state=ESTABLISHED)" || got[0].timeout != 431999 || got[1].timeout != 29 {
		t.Errorf("normaliseStats: %+v", got)
	}
}
