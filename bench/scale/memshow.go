package scale

import (
	"strconv"
	"strings"
)

// ParseMemoryShow parses `ovs-appctl memory/show` output: "name:count"
// pairs separated by spaces or lines, as Open vSwitch and gvs print them.
// Anything else is ignored.
func ParseMemoryShow(s string) map[string]uint64 {
	out := map[string]uint64{}
	for _, field := range strings.Fields(s) {
		name, num, ok := strings.Cut(field, ":")
		if !ok || name == "" {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// GVSRingKey is gvs's memory/show counter of the receive-ring memory of
// all ports, in kB (beside rx-rings, rx-ring-kB(PORT) for the largest
// rings, rx-ring-budget-kB and rx-ring-reserved-kB).
const GVSRingKey = "rx-ring-kB"

// RingBytes finds the receive-ring memory in use among memory/show's
// counters: GVSRingKey when present; otherwise, tolerant of another
// naming, any counter about rings ("ring" in its name) whose name has a
// word kB, KiB, MB, MiB or bytes, except the budget's (budget, max,
// limit, reserved); with several, one saying "total" or "in-use" wins,
// else the largest (a total is at least each of its parts). Per-port
// counters, "rx-ring-kB(p0)", have no such word on their own and do not
// count. key is the counter used; ok is false when there is none.
func RingBytes(counters map[string]uint64) (bytes int64, key string, ok bool) {
	best, bestScore := "", -1
	var bestBytes int64
	for name, v := range counters {
		lower := strings.ToLower(name)
		if !strings.Contains(lower, "ring") {
			continue
		}
		if strings.Contains(lower, "budget") || strings.Contains(lower, "max") || strings.Contains(lower, "limit") || strings.Contains(lower, "reserved") {
			continue // the budget's side, not the rings'
		}
		unit := int64(0) // a count of rings, not their size, unless a word says
		for _, word := range strings.FieldsFunc(lower, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			switch word {
			case "kb", "kib":
				unit = 1 << 10
			case "mb", "mib":
				unit = 1 << 20
			case "bytes":
				unit = 1
			}
		}
		if unit == 0 {
			continue
		}
		b := int64(v) * unit
		score := 0
		switch {
		case name == GVSRingKey:
			score = 2
		case strings.Contains(lower, "total") || strings.Contains(lower, "in-use") || strings.Contains(lower, "used"):
			score = 1
		}
		if score > bestScore || (score == bestScore && (b > bestBytes || (b == bestBytes && name < best))) {
			best, bestScore, bestBytes = name, score, b
		}
	}
	return bestBytes, best, bestScore >= 0
}
