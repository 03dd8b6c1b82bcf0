package bridge

import (
	"fmt"
	"math/bits"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"gvs/netdev"
	"gvs/schema/vswitchd"
)

// Statistics intervals, as Open vSwitch's other_config:stats-update-interval
// (milliseconds, at least 5000).
const (
	DefaultStatsInterval = 5 * time.Second
	minStatsInterval     = 5 * time.Second
	maxPMDMaxSleep       = 10 * time.Millisecond // pmd-maxsleep caps at 10000 µs
)

// RxRingBudgetKey is the Open_vSwitch other_config key (gvs's own) that
// bounds the memory of all receive rings together, in bytes; unset or 0
// takes netdev.DefaultRxRingBudget.
const RxRingBudgetKey = "gvs-rx-ring-budget"

// globalConfig is Open_vSwitch.other_config as parsed for this pass, with
// the warnings the parse produced (logged once per distinct text).
type globalConfig struct {
	dp            DatapathConfig
	sockBuf       int // clamped bytes, 0 when not set
	statsInterval time.Duration
	warnings      []string
}

func parseGlobalConfig(oc map[string]string, minStats time.Duration) globalConfig {
	g := globalConfig{statsInterval: DefaultStatsInterval}
	if v, ok := oc["userspace-sock-buf-size"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err != nil:
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:userspace-sock-buf-size %q is not a number; using the kernel's socket buffer sizes", v))
		case n < 0:
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:userspace-sock-buf-size %q is below zero; using the kernel's socket buffer sizes", v))
		case n == 0:
			// explicit-only: 0 means "not set"
		default:
			g.sockBuf = netdev.ClampSocketBuffer(n)
			if g.sockBuf != n {
				g.warnings = append(g.warnings, fmt.Sprintf("other_config:userspace-sock-buf-size %d clamped to %d", n, g.sockBuf))
			}
		}
	}
	if v, ok := oc[RxRingBudgetKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:%s %q is not a number of bytes; using the default (1/16 of the machine's memory, 64 MiB to 4 GiB)", RxRingBudgetKey, v))
		} else {
			g.dp.RxRingBudget = n
		}
	}
	if v, ok := oc["pmd-cpu-mask"]; ok && v != "" {
		if mask, err := parseCPUMask(v); err != nil {
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:pmd-cpu-mask %q: %v; PMD threads are not pinned", v, err))
		} else {
			g.dp.PMDCPUMask = mask
		}
	}
	if v, ok := oc["pmd-maxsleep"]; ok {
		us, err := strconv.Atoi(v)
		if err != nil || us < 0 {
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:pmd-maxsleep %q is not a number of microseconds; ignored", v))
		} else {
			g.dp.PMDMaxSleep = min(time.Duration(us)*time.Microsecond, maxPMDMaxSleep)
		}
	}
	if v, ok := oc["pmd-rxq-assign"]; ok {
		switch v {
		case "roundrobin", "cycles", "group":
			g.dp.RxqAssign = v
		default:
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:pmd-rxq-assign %q is not roundrobin, cycles or group; using the default", v))
		}
	}
	if v, ok := oc["stats-update-interval"]; ok {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			g.warnings = append(g.warnings, fmt.Sprintf("other_config:stats-update-interval %q is not a number of milliseconds; ignored", v))
		} else {
			g.statsInterval = max(time.Duration(ms)*time.Millisecond, minStats)
		}
	}
	return g
}

// parseCPUMask checks a hex CPU mask ("0x6" or "6") and returns it in a
// canonical form: lower case, without the prefix.
func parseCPUMask(s string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(s))
	h = strings.TrimPrefix(h, "0x")
	if h == "" {
		return "", fmt.Errorf("empty mask")
	}
	set := 0
	for _, c := range h {
		d, err := strconv.ParseUint(string(c), 16, 8)
		if err != nil {
			return "", fmt.Errorf("invalid hex digit %q", c)
		}
		set += bits.OnesCount64(d)
	}
	if set == 0 {
		return "", fmt.Errorf("no CPU set")
	}
	return strings.TrimLeft(h, "0"), nil
}

// bridgeSettings is Bridge.other_config as parsed.
type bridgeSettings struct {
	cfg      BridgeConfig
	hwaddr   net.HardwareAddr
	warnings []string
}

func parseBridgeConfig(br *vswitchd.Bridge) bridgeSettings {
	var s bridgeSettings
	oc := br.OtherConfig
	if v, ok := oc["hwaddr"]; ok {
		mac, err := net.ParseMAC(v)
		if err != nil || len(mac) != 6 || mac[0]&1 != 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("bridge %s: other_config:hwaddr %q is not a unicast Ethernet address; ignored", br.Name, v))
		} else {
			s.hwaddr = mac
		}
	}
	if v, ok := oc["mac-table-size"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("bridge %s: other_config:mac-table-size %q is not a positive number; using the default", br.Name, v))
		} else {
			s.cfg.MACTableSize = n
		}
	}
	if v, ok := oc["mac-aging-time"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			s.warnings = append(s.warnings, fmt.Sprintf("bridge %s: other_config:mac-aging-time %q is not a positive number of seconds; using the default", br.Name, v))
		} else {
			s.cfg.MACAgingTime = time.Duration(n) * time.Second
		}
	}
	if v, ok := oc["forward-bpdu"]; ok {
		s.cfg.ForwardBPDU = v == "true"
	}
	s.cfg.DatapathType = br.DatapathType
	return s
}

func vlanConfig(p *vswitchd.Port) VLANConfig {
	v := VLANConfig{Trunks: slices.Sorted(slices.Values(p.Trunks))}
	if p.Tag != nil {
		v.Tag = *p.Tag
	}
	if p.VLANMode != nil {
		v.Mode = *p.VLANMode
	}
	return v
}

// ifaceType normalises Interface.type: "" is "system".
func ifaceType(t string) string {
	if t == "" {
		return "system"
	}
	return t
}
