package xlatetest

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
)

// LoadFlows adds the flows of an ovs-ofctl flow file (add-flows syntax
// or dump-flows --no-stats lines: table, cookie, priority, match,
// actions) to b and returns how many.
func LoadFlows(b *Bridge, r io.Reader) (int, error) {
	n := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		head, acts, ok := strings.Cut(line, "actions=")
		if !ok {
			return n, fmt.Errorf("no actions: %s", line)
		}
		m, prio, err := mf.ParseMatch(head)
		if err != nil {
			return n, fmt.Errorf("%s: %w", line, err)
		}
		as, err := ofpact.Parse(acts)
		if err != nil {
			return n, fmt.Errorf("%s: %w", line, err)
		}
		r := &Rule{Prio: uint16(prio), M: m}
		for _, kv := range strings.Split(head, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			switch k {
			case "table":
				t, _ := strconv.Atoi(v)
				r.Table = uint8(t)
			case "cookie":
				r.CookieV, _ = strconv.ParseUint(v, 0, 64)
			}
		}
		for _, a := range as {
			r.Acts = append(r.Acts, xlate.Action(a))
		}
		b.AddRule(r)
		n++
	}
	return n, sc.Err()
}
