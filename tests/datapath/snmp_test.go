package datapathtest

import (
	"fmt"
	"strconv"
	"strings"
)

// snmp reads one protocol's line pair ("Udp", "Icmp", ...) of
// /proc/net/snmp inside ns, by counter name.
func snmp(ns, proto string) (map[string]int64, error) {
	out, err := runCmd("ip", "netns", "exec", ns, "cat", "/proc/net/snmp")
	if err != nil {
		return nil, err
	}
	var names []string
	counters := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != proto+":" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i < len(names) {
				counters[names[i]], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return counters, nil
}

// delta returns after[k] - before[k] for every k in after that changed.
func delta(before, after map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
