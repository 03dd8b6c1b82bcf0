package schema

// The module version of modelgen comes from go.mod, so no global install and
// no tools.go are needed.
//go:generate go run github.com/ovn-kubernetes/libovsdb/cmd/modelgen -p vswitchd -o vswitchd vswitch.ovsschema
