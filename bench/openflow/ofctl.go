package openflow

import (
	"fmt"
	"regexp"
	"strconv"
)

var flowCountRE = regexp.MustCompile(`\bflow_count=(\d+)`)

// ParseFlowCount reads flow_count from `ovs-ofctl dump-aggregate` output.
func ParseFlowCount(out string) (int, error) {
	m := flowCountRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no flow_count in %q", out)
	}
	return strconv.Atoi(m[1])
}

// MemoryPerRule is the RSS growth per rule in bytes; 0 rules give 0.
func MemoryPerRule(before, after int64, rules int) float64 {
	if rules <= 0 {
		return 0
	}
	return float64(after-before) / float64(rules)
}
