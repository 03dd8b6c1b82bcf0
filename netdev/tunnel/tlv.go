package tunnel

import (
	"encoding/binary"
	"errors"
)

// TLVMapping is one entry of the bridge's TLV table (ovs-ofctl
// add-tlv-map "{class=0xffff,type=0x80,len=4}->tun_metadata0"): which
// geneve option a tun_metadata field stands for. Len is the option's data
// length in bytes (a multiple of 4, at most 124).
type TLVMapping struct {
	Class uint16
	Type  uint8
	Len   uint8
}

// Errors of MapGeneveOptions: Open vSwitch drops such packets when it
// turns the datapath's raw options into flow fields.
var (
	ErrCriticalOption = errors.New("tunnel: unknown critical geneve option")
	ErrOptionLength   = errors.New("tunnel: geneve option length differs from its TLV mapping")
	ErrOptionList     = errors.New("tunnel: malformed geneve option list")
)

// MapGeneveOptions turns raw geneve options (what Pop leaves in
// Key.TunMetadata with FlagUDPIF) into the mapped form the OpenFlow
// fields read, as Open vSwitch's tun_metadata_from_geneve_udpif does for
// one mapping m (nil: an empty table): the mapped option's data
// right-aligned in value and present = true; unmapped options are
// ignored unless critical. value is zeroed first. It does not allocate.
func MapGeneveOptions(raw []byte, m *TLVMapping, value *[16]byte) (present bool, err error) {
	*value = [16]byte{}
	for len(raw) > 0 {
		if len(raw) < 4 {
			return false, ErrOptionList
		}
		class := binary.BigEndian.Uint16(raw)
		typ := raw[2]
		dataLen := int(raw[3]&0x1f) * 4
		if 4+dataLen > len(raw) {
			return false, ErrOptionList
		}
		switch {
		case m != nil && class == m.Class && typ == m.Type:
			if dataLen != int(m.Len) || dataLen > len(value) {
				return false, ErrOptionLength
			}
			copy(value[len(value)-dataLen:], raw[4:4+dataLen])
			present = true
		case typ&0x80 != 0:
			return false, ErrCriticalOption
		}
		raw = raw[4+dataLen:]
	}
	return present, nil
}

// UnmapGeneveOption writes the geneve option for mapping m holding the
// last m.Len bytes of value (the mapped field) to dst and returns its
// length (4 + m.Len), or 0 if dst is too short or m.Len does not fit:
// what Open vSwitch's tun_metadata_to_geneve_header puts in a tnl_push
// header for a present tun_metadata field. The result goes in
// BuildParams.GeneveOptions.
func UnmapGeneveOption(dst []byte, m TLVMapping, value *[16]byte) int {
	n := int(m.Len)
	if n%4 != 0 || n > len(value) || len(dst) < 4+n {
		return 0
	}
	binary.BigEndian.PutUint16(dst, m.Class)
	dst[2] = m.Type
	dst[3] = byte(n / 4)
	copy(dst[4:4+n], value[len(value)-n:])
	return 4 + n
}
