package schema

import _ "embed"

//go:embed vswitch.ovsschema
var vswitchSchema []byte

// VSwitch returns the Open_vSwitch schema's JSON exactly as Open vSwitch
// ships it. The slice is a copy: callers may modify it.
func VSwitch() []byte {
	return append([]byte(nil), vswitchSchema...)
}
