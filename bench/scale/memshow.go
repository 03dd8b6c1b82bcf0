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

// RingBytes finds the receive-ring memory in use among memory/show's
// counters. gvs is gaining such a key; its exact name is not fixed, so any
// counter about rings ("ring" in its name) in kB or bytes counts, except
// limits (budget, max, limit); with several, one saying "total" or "in-use"
// wins, else the largest (a total is at least each of its parts). key is
// the counter used; ok is false when there is none.
func RingBytes(counters map[string]uint64) (bytes int64, key string, ok bool) {
	best, bestScore := "", -1
	var bestBytes int64
	for name, v := range counters {
		lower := strings.ToLower(name)
		if !strings.Contains(lower, "ring") {
			continue
		}
		if strings.Contains(lower, "budget") || strings.Contains(lower, "max") || strings.Contains(lower, "limit") {
			continue
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
		if strings.Contains(lower, "total") || strings.Contains(lower, "in-use") || strings.Contains(lower, "used") {
			score = 1
		}
		if score > bestScore || (score == bestScore && (b > bestBytes || (b == bestBytes && name < best))) {
			best, bestScore, bestBytes = name, score, b
		}
	}
	return bestBytes, best, bestScore >= 0
}
