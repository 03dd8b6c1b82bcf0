package xlate

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// Action is an OpenFlow action or instruction (ofproto/ofpact): the
// bridge's rules hand translation their []ofpact.Action unchanged.
type Action = ofpact.Action

// Subvalue is one entry of the push/pop stack: up to 128 bits of a field,
// right-aligned (Open vSwitch's mf_subvalue; Subfield.Read's form).
type Subvalue = mf.Value
