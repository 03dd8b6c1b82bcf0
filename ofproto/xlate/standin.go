//go:build !pending

package xlate

// STAND-IN until helper "ofpact" has ofproto/ofpact on main: Action
// becomes an alias of ofpact.Action then, so the bridge's rules hand
// translation their []ofpact.Action unchanged.
type Action = any

// Subvalue is one entry of the push/pop stack: up to 128 bits of a field,
// right-aligned, in network byte order (Open vSwitch's mf_subvalue).
type Subvalue [16]byte
