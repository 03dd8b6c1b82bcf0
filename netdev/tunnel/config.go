package tunnel

import (
	"errors"
	"net/netip"
	"sort"
	"strings"
)

// PacketType is a tunnel port's packet_type option.
type PacketType uint8

const (
	LegacyL2 PacketType = iota // Ethernet frames (the default where the kind carries them)
	LegacyL3                   // IP packets without an Ethernet header
	PTAP                       // packet-type aware
)

// KeyConfig is one direction's tunnel key (in_key, out_key or key).
type KeyConfig struct {
	Present bool   // a key is set (a value or flow)
	Flow    bool   // key=flow: taken from (out) or given to (in) the flow's tun_id
	Value   uint64 // the fixed key, when Present and not Flow
}

// Config is a tunnel Interface's options, as Open vSwitch's
// set_tunnel_config reads them.
type Config struct {
	Kind Kind

	RemoteFlow bool       // remote_ip=flow
	Remote     netip.Addr // fixed remote_ip (IPv4 or IPv6); invalid when RemoteFlow
	LocalFlow  bool       // local_ip=flow
	Local      netip.Addr // fixed local_ip, if any

	InKey, OutKey KeyConfig

	DstPort      uint16 // UDP destination port (geneve 6081, vxlan 4789 by default)
	Csum         bool   // csum=true: UDP or GRE checksum on encapsulated packets
	Seq          bool   // seq=true (gre): GRE sequence numbers
	TOSInherit   bool   // tos=inherit
	TOS          uint8  // fixed outer DSCP
	TTLInherit   bool   // ttl=inherit
	TTL          uint8  // outer TTL or hop limit (64 unless set)
	DontFragment bool   // df_default (true unless "false")

	SetEgressPktMark bool
	EgressPktMark    uint32

	GBP        bool // vxlan exts=gbp
	GPE        bool // vxlan exts=gpe (parsed; Build refuses it)
	PacketType PacketType
}

// ConfigError is a configuration Open vSwitch rejects; Error is the text
// ovs-vswitchd writes to Interface.error.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// ParseConfig reads the options of Interface name of type typ (geneve,
// vxlan, gre or ip6gre). Like ovs-vswitchd it accepts some bad values
// with a warning (returned in warnings, which ovs-vswitchd logs) and
// rejects others with a *ConfigError whose text includes the warnings
// before it, one per line. Options are read in key order (Open
// vSwitch's order is its hash table's).
func ParseConfig(name, typ string, options map[string]string) (cfg Config, warnings []string, err error) {
	kind := KindOf(typ)
	if kind == KindNone {
		return cfg, nil, &ConfigError{Msg: name + ": unknown tunnel type " + typ}
	}
	cfg.Kind = kind
	switch typ {
	case "geneve":
		cfg.DstPort = GenevePort
	case "vxlan":
		cfg.DstPort = VXLANPort
	}
	needsDstPort := kind.UDP()
	hasSeq := strings.Contains(typ, "gre")
	cfg.DontFragment = true

	var errs []string
	fail := func() (Config, []string, error) {
		return Config{}, errs, &ConfigError{Msg: strings.Join(errs, "\n")}
	}
	var srcFamily, dstFamily int

	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := options[key]
		switch {
		case key == "remote_ip":
			flow, addr, family, perr := parseTunnelIP(value, false)
			switch {
			case errors.Is(perr, errBadIP):
				errs = append(errs, name+": bad "+typ+" 'remote_ip'")
			case errors.Is(perr, errMulticast):
				errs = append(errs, name+": multicast remote_ip="+value+" not allowed")
				return fail()
			default:
				cfg.RemoteFlow, cfg.Remote, dstFamily = flow, addr, family
			}
		case key == "local_ip":
			flow, addr, family, perr := parseTunnelIP(value, true)
			if perr != nil {
				errs = append(errs, name+": bad "+typ+" 'local_ip'")
			} else {
				cfg.LocalFlow, cfg.Local, srcFamily = flow, addr, family
			}
		case key == "tos":
			if value == "inherit" {
				cfg.TOSInherit = true
			} else if tos, ok := strtol(value); ok && tos == tos&0xfc {
				cfg.TOS = uint8(tos)
			} else {
				errs = append(errs, name+": invalid TOS "+value)
			}
		case key == "ttl":
			if value == "inherit" {
				cfg.TTLInherit = true
			} else {
				cfg.TTL = uint8(atoi(value))
			}
		case key == "dst_port" && needsDstPort:
			cfg.DstPort = uint16(atoi(value))
		case key == "csum":
			if value == "true" {
				cfg.Csum = true
			}
		case key == "seq" && hasSeq:
			if value == "true" {
				cfg.Seq = true
			}
		case key == "df_default":
			if value == "false" {
				cfg.DontFragment = false
			}
		case key == "key" || key == "in_key" || key == "out_key" || key == "packet_type":
			// Read below.
		case key == "exts" && typ == "vxlan":
			for _, ext := range strings.Split(value, ",") {
				switch ext {
				case "":
				case "gbp":
					cfg.GBP = true
				case "gpe":
					cfg.GPE = true
				default:
					errs = append(errs, name+": unknown extension '"+ext+"'")
				}
			}
		case key == "egress_pkt_mark":
			cfg.EgressPktMark = uint32(strtoul10(value))
			cfg.SetEgressPktMark = true
		case key == "remote_cert" || key == "remote_name" || key == "psk":
			// IPsec settings, read by ovs-monitor-ipsec.
		default:
			errs = append(errs, name+": unknown "+typ+" argument '"+key+"'")
		}
	}

	l2, l3 := true, kind == GRE
	fullType := typ
	if typ == "vxlan" {
		fullType = "VXLAN (without GPE)"
		if cfg.GPE {
			fullType, l3 = "VXLAN-GPE", true
		}
	}
	switch pt, ok := options["packet_type"]; {
	case !ok:
		if !l2 {
			cfg.PacketType = LegacyL3
		}
	case pt == "legacy_l2":
		if !l2 {
			errs = append(errs, name+": legacy_l2 configured on "+fullType+" tunnel that cannot carry L2 traffic")
			return fail()
		}
	case pt == "legacy_l3":
		cfg.PacketType = LegacyL3
		if !l3 {
			errs = append(errs, name+": legacy_l3 configured on "+fullType+" tunnel that cannot carry L3 traffic")
			return fail()
		}
	case pt == "ptap":
		cfg.PacketType = PTAP
	default:
		errs = append(errs, name+": unknown packet_type '"+pt+"'")
		return fail()
	}

	if !cfg.Remote.IsValid() && !cfg.RemoteFlow {
		errs = append(errs, name+": "+typ+" type requires valid 'remote_ip' argument")
		return fail()
	}
	if cfg.LocalFlow && !cfg.RemoteFlow {
		errs = append(errs, name+": "+typ+" type requires 'remote_ip=flow' with 'local_ip=flow'")
		return fail()
	}
	if srcFamily != 0 && dstFamily != 0 && srcFamily != dstFamily {
		errs = append(errs, name+": 'remote_ip' and 'local_ip' has to be of the same address family")
		return fail()
	}
	if cfg.TTL == 0 {
		cfg.TTL = 64
	}
	cfg.InKey = parseKey(options, "in_key")
	cfg.OutKey = parseKey(options, "out_key")
	return cfg, errs, nil
}

var (
	errBadIP     = errors.New("bad address")
	errMulticast = errors.New("multicast")
)

// parseTunnelIP reads remote_ip or local_ip: "flow", an IPv4 or an IPv6
// address (family 4 or 6; 0 for flow).
func parseTunnelIP(s string, acceptMulticast bool) (flow bool, addr netip.Addr, family int, err error) {
	if s == "flow" {
		return true, addr, 0, nil
	}
	a, perr := netip.ParseAddr(s)
	if perr != nil || a.Zone() != "" {
		return false, addr, 0, errBadIP
	}
	isV6 := strings.Contains(s, ":")
	if isV6 != a.Is6() {
		return false, addr, 0, errBadIP
	}
	if !acceptMulticast && a.IsMulticast() {
		return false, addr, 0, errMulticast
	}
	if a.Is4() {
		return false, a, 4, nil
	}
	return false, a, 6, nil
}

// parseKey reads in_key or out_key, falling back to key, as Open
// vSwitch's parse_key: "flow" or a number (strtoull, base 0, no check).
func parseKey(options map[string]string, name string) KeyConfig {
	s, ok := options[name]
	if !ok {
		if s, ok = options["key"]; !ok {
			return KeyConfig{}
		}
	}
	if s == "flow" {
		return KeyConfig{Present: true, Flow: true}
	}
	v, _ := strtoull0(s)
	return KeyConfig{Present: true, Value: v}
}

// atoi is C's atoi: optional space and sign, then the leading digits; 0
// if there are none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<40; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// strtoul10 is strtoul(s, NULL, 10) without error checks.
func strtoul10(s string) uint64 {
	n := atoi(s)
	return uint64(n)
}

// strtol is strtol(s, &end, 0) that also requires the whole string to be
// consumed (*end == '\0').
func strtol(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	v, rest, ok := parseBase0(t)
	if !ok || rest != "" {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// strtoull0 is strtoull(s, NULL, 0): the leading number, 0 if none.
func strtoull0(s string) (uint64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	v, _, ok := parseBase0(t)
	if neg {
		v = -v
	}
	return v, ok
}

// parseBase0 reads digits in C's base-0 convention (0x hex, 0 octal,
// else decimal) and returns the value, the rest and whether any digit
// was read. Overflow saturates.
func parseBase0(t string) (uint64, string, bool) {
	base := uint64(10)
	switch {
	case len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && hexDigit(t[2]) >= 0:
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base = 8
	}
	var v uint64
	i := 0
	for ; i < len(t); i++ {
		d := hexDigit(t[i])
		if d < 0 || uint64(d) >= base {
			break
		}
		if v > (^uint64(0)-uint64(d))/base {
			v = ^uint64(0)
		} else {
			v = v*base + uint64(d)
		}
	}
	return v, t[i:], i > 0
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
