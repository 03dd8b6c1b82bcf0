package tests

import (
	"encoding/json"
	"testing"
)

// transactCases are RFC 7047 transactions, successful and failing; the
// result arrays must match after UUID normalisation. They run in order.
var transactCases = []struct{ name, txn string }{
	{"insert-and-link", `["Open_vSwitch",
		{"op":"insert","table":"Interface","row":{"name":"t1","type":"internal"},"uuid-name":"i"},
		{"op":"insert","table":"Port","row":{"name":"t1","interfaces":["named-uuid","i"]},"uuid-name":"p"},
		{"op":"insert","table":"Bridge","row":{"name":"bt","ports":["named-uuid","p"],"other_config":["map",[["a","1"]]]},"uuid-name":"b"},
		{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["set",[["named-uuid","b"]]]]]},
		{"op":"select","table":"Bridge","where":[["_uuid","==",["named-uuid","b"]]],"columns":["name","other_config","ports"]},
		{"op":"comment","comment":"gvs e2e"}]`},
	{"select-where", `["Open_vSwitch",
		{"op":"select","table":"Bridge","where":[["name","includes","bt"],["other_config","includes",["map",[["a","1"]]]]],"columns":["name"]},
		{"op":"select","table":"Port","where":[["tag","==",10]],"columns":["name","tag"]},
		{"op":"select","table":"Bridge","where":[["name","!=","bt"]],"columns":["name"]}]`},
	{"update-mutate-count", `["Open_vSwitch",
		{"op":"update","table":"Bridge","where":[["name","==","bt"]],"row":{"external_ids":["map",[["x","y"]]]}},
		{"op":"mutate","table":"Bridge","where":[["name","==","bt"]],"mutations":[["flood_vlans","insert",["set",[1,2,3]]],["other_config","delete",["set",["a"]]]]},
		{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["next_cfg","+=",5]]},
		{"op":"select","table":"Bridge","where":[["name","==","bt"]],"columns":["external_ids","flood_vlans","other_config"]},
		{"op":"select","table":"Open_vSwitch","where":[],"columns":["next_cfg"]}]`},
	{"wait-ok", `["Open_vSwitch",
		{"op":"wait","timeout":0,"table":"Bridge","where":[["name","==","bt"]],"columns":["name"],"until":"==","rows":[{"name":"bt"}]}]`},
	{"wait-timed-out", `["Open_vSwitch",
		{"op":"wait","timeout":0,"table":"Bridge","where":[["name","==","bt"]],"columns":["name"],"until":"!=","rows":[{"name":"bt"}]},
		{"op":"delete","table":"Bridge","where":[]}]`},
	{"constraint-enum", `["Open_vSwitch",
		{"op":"update","table":"Bridge","where":[["name","==","bt"]],"row":{"fail_mode":"bogus"}}]`},
	{"constraint-range", `["Open_vSwitch",
		{"op":"update","table":"Port","where":[["name","==","t1"]],"row":{"tag":5000}}]`},
	{"constraint-mutate-range", `["Open_vSwitch",
		{"op":"mutate","table":"Port","where":[["name","==","p1"]],"mutations":[["tag","+=",4090]]}]`},
	{"constraint-min", `["Open_vSwitch",
		{"op":"update","table":"Port","where":[["name","==","t1"]],"row":{"interfaces":["set",[]]}}]`},
	{"referential-integrity", `["Open_vSwitch",
		{"op":"update","table":"Port","where":[["name","==","t1"]],"row":{"interfaces":["uuid","00000000-0000-0000-0000-000000000001"]}}]`},
	{"index-clash", `["Open_vSwitch",
		{"op":"insert","table":"Bridge","row":{"name":"bt"},"uuid-name":"b"},
		{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["set",[["named-uuid","b"]]]]]}]`},
	{"unknown-table", `["Open_vSwitch",{"op":"select","table":"Nosuch","where":[]}]`},
	{"unknown-column", `["Open_vSwitch",{"op":"select","table":"Bridge","where":[["nosuch","==",1]]}]`},
	{"bad-type", `["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"stp_enable":"yes"}}]`},
	{"unknown-op", `["Open_vSwitch",{"op":"frobnicate"}]`},
	{"duplicate-uuid-name", `["Open_vSwitch",
		{"op":"insert","table":"QoS","row":{},"uuid-name":"q"},
		{"op":"insert","table":"QoS","row":{},"uuid-name":"q"}]`},
	{"unknown-named-uuid", `["Open_vSwitch",
		{"op":"update","table":"Port","where":[["name","==","t1"]],"row":{"qos":["named-uuid","nosuch"]}}]`},
	{"abort", `["Open_vSwitch",
		{"op":"insert","table":"QoS","row":{"type":"x"}},
		{"op":"abort"}]`},
	{"assert-unowned-lock", `["Open_vSwitch",{"op":"assert","lock":"nosuch"}]`},
	{"commit-not-durable", `["Open_vSwitch",{"op":"commit","durable":false}]`},
	{"read-only-column", `["Open_vSwitch",{"op":"update","table":"Bridge","where":[],"row":{"_uuid":["uuid","00000000-0000-0000-0000-000000000001"]}}]`},
	{"delete-referenced", `["Open_vSwitch",
		{"op":"delete","table":"Bridge","where":[["name","==","bt"]]}]`},
	{"garbage-collect", `["Open_vSwitch",
		{"op":"update","table":"Bridge","where":[["name","==","bt"]],"row":{"ports":["set",[]]}},
		{"op":"select","table":"Port","where":[["name","==","t1"]],"columns":["name"]}]`},
	{"after-gc", `["Open_vSwitch",
		{"op":"select","table":"Port","where":[["name","==","t1"]],"columns":["name"]},
		{"op":"select","table":"Interface","where":[["name","==","t1"]],"columns":["name"]}]`},
	{"wrong-db", `["Nosuch",{"op":"select","table":"Bridge","where":[]}]`},
}

func TestClientTransact(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	populate(t, p)
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for _, c := range transactCases {
		t.Run(c.name, func(t *testing.T) {
			txn := compactJSON(t, c.txn)
			ref, ours := p.ref.client(t, nil, "transact", txn), p.ours.client(t, nil, "transact", txn)
			ref.stdout, ours.stdout = sortResultRows(ref.stdout), sortResultRows(ours.stdout)
			compareResults(t, "ovsdb-client transact "+c.name, nref.result(ref), nours.result(ours))
		})
	}
}

func compactJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
