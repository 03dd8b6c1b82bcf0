package openflow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

var tlvRowRE = regexp.MustCompile(`^\s*(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(\d+)\s+(tun_metadata\d+)\s*$`)

// ParseTLVMap turns `ovs-ofctl dump-tlv-map` output (the saved .tlv file)
// into the argument of `ovs-ofctl add-tlv-map`:
// {class=0x102,type=0x80,len=4}->tun_metadata0, mappings comma-separated.
// An empty mapping table gives "".
func ParseTLVMap(text string) (string, error) {
	var maps []string
	inTable := false
	for _, line := range regexp.MustCompile(`\r?\n`).Split(text, -1) {
		if m := tlvRowRE.FindStringSubmatch(line); m != nil {
			if !inTable {
				return "", fmt.Errorf("mapping row before the mapping table: %q", line)
			}
			maps = append(maps, fmt.Sprintf("{class=%s,type=%s,len=%s}->%s", m[1], m[2], m[3], m[4]))
			continue
		}
		if regexp.MustCompile(`^\s*mapping table:`).MatchString(line) {
			inTable = true
		}
	}
	if !inTable {
		return "", fmt.Errorf("no mapping table in the TLV map")
	}
	return strings.Join(maps, ","), nil
}
