package db

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// addPortOps builds the transaction ovs-vsctl sends for "add-port br0
// NAME": waits verifying what it read, inserts linked by uuid-name, the
// bridge's whole new ports set, next_cfg bump, select and comment.
func addPortOps(ovs, bridge UUID, ports []UUID, name string) []json.RawMessage {
	set := make([]string, 0, len(ports)+1)
	for _, p := range ports {
		set = append(set, `["uuid","`+string(p)+`"]`)
	}
	set = append(set, `["named-uuid","port"]`)
	ops := fmt.Sprintf(`[
	 {"op":"wait","table":"Open_vSwitch","where":[["_uuid","==",["uuid","%[1]s"]]],"columns":["bridges"],"until":"==","rows":[{"bridges":["uuid","%[2]s"]}],"timeout":0},
	 {"op":"wait","table":"Bridge","where":[["_uuid","==",["uuid","%[2]s"]]],"columns":["name"],"until":"==","rows":[{"name":"br0"}],"timeout":0},
	 {"op":"insert","table":"Interface","row":{"name":"%[3]s"},"uuid-name":"iface"},
	 {"op":"insert","table":"Port","row":{"name":"%[3]s","interfaces":["named-uuid","iface"]},"uuid-name":"port"},
	 {"op":"update","table":"Bridge","where":[["_uuid","==",["uuid","%[2]s"]]],"row":{"ports":["set",[%[4]s]]}},
	 {"op":"mutate","table":"Open_vSwitch","where":[["_uuid","==",["uuid","%[1]s"]]],"mutations":[["next_cfg","+=",1]]},
	 {"op":"select","table":"Open_vSwitch","where":[["_uuid","==",["uuid","%[1]s"]]],"columns":["next_cfg"]},
	 {"op":"comment","comment":"ovs-vsctl: ovs-vsctl add-port br0 %[3]s"}]`, ovs, bridge, name, strings.Join(set, ","))
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(ops), &raws); err != nil {
		panic(err)
	}
	return raws
}

// BenchmarkTransactAddPort measures an ovs-vsctl add-port transaction on a
// bridge that already has about 100 ports.
func BenchmarkTransactAddPort(b *testing.B) {
	schema := vswitchSchema(b)
	const base, perDB = 100, 400
	var d *Database
	var ovs, bridge UUID
	var ports []UUID
	reset := func() {
		d = New(schema, nil)
		r := mustSucceed(b, d, `[{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},
		  {"op":"insert","table":"Bridge","row":{"name":"br0"},"uuid-name":"b"}]`)
		ovs, bridge = insertedUUID(b, r, 0), insertedUUID(b, r, 1)
		ports = ports[:0]
		for i := 0; i < base; i++ {
			ports = addPort(b, d, ovs, bridge, ports, fmt.Sprintf("p%d", i))
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%perDB == 0 {
			b.StopTimer()
			reset()
			b.StartTimer()
		}
		b.StopTimer()
		ops := addPortOps(ovs, bridge, ports, fmt.Sprintf("q%d", n))
		now := time.Now()
		b.StartTimer()
		r := d.Transact(ops, TxnEnv{Started: now, Now: now})
		if r.Commit == nil {
			b.Fatalf("add-port failed: %s", resultsJSON(b, r))
		}
		ports = append(ports, insertedUUID(b, r, 3))
		n++
	}
}

func addPort(b testing.TB, d *Database, ovs, bridge UUID, ports []UUID, name string) []UUID {
	now := time.Now()
	r := d.Transact(addPortOps(ovs, bridge, ports, name), TxnEnv{Started: now, Now: now})
	if r.Commit == nil {
		b.Fatalf("add-port failed: %s", resultsJSON(b, r))
	}
	return append(ports, insertedUUID(b, r, 3))
}

func TestAddPortTransaction(t *testing.T) {
	schema := vswitchSchema(t)
	d := New(schema, nil)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},
	  {"op":"insert","table":"Bridge","row":{"name":"br0"},"uuid-name":"b"}]`)
	ovs, bridge := insertedUUID(t, r, 0), insertedUUID(t, r, 1)
	var ports []UUID
	for i := 0; i < 3; i++ {
		ports = addPort(t, d, ovs, bridge, ports, fmt.Sprintf("p%d", i))
	}
	r = transact(t, d, `[{"op":"select","table":"Open_vSwitch","where":[],"columns":["next_cfg"]}]`)
	if got := resultsJSON(t, r); got != `[{"rows":[{"next_cfg":3}]}]` {
		t.Fatalf("next_cfg: %s", got)
	}
	if countRows(d, "Port") != 3 || countRows(d, "Interface") != 3 {
		t.Fatal("ports not added")
	}
	// ovs-vsctl's waits cover only what it read (bridges, name), so a
	// client working from a stale port list still commits; the ports it
	// left out of the full-set update are then garbage collected with
	// their interfaces.
	r = d.Transact(addPortOps(ovs, bridge, ports[:1], "late"), TxnEnv{})
	if r.Commit == nil {
		t.Fatalf("unexpected failure: %s", resultsJSON(t, r))
	}
	if countRows(d, "Port") != 2 || countRows(d, "Interface") != 2 {
		t.Fatalf("Port/Interface rows = %d/%d, want 2/2 after a full-set update", countRows(d, "Port"), countRows(d, "Interface"))
	}
	checkInvariants(t, d)
}

// BenchmarkTransactLargeDB updates one Interface by UUID in a database of
// 10,000 ports: the cost must not grow with the database.
func BenchmarkTransactLargeDB(b *testing.B) {
	schema := vswitchSchema(b)
	d := New(schema, nil)
	r := mustSucceed(b, d, `[{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}},
	  {"op":"insert","table":"Bridge","row":{"name":"br0"},"uuid-name":"b"}]`)
	bridge := insertedUUID(b, r, 1)
	var iface UUID
	for i := 0; i < 10000; i++ {
		r := mustSucceed(b, d, fmt.Sprintf(`[{"op":"insert","table":"Interface","row":{"name":"i%d"},"uuid-name":"i"},
		  {"op":"insert","table":"Port","row":{"name":"i%d","interfaces":["named-uuid","i"]},"uuid-name":"p"},
		  {"op":"mutate","table":"Bridge","where":[["_uuid","==",["uuid","%s"]]],"mutations":[["ports","insert",["named-uuid","p"]]]}]`, i, i, bridge))
		iface = insertedUUID(b, r, 0)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		ops := mustRaw(fmt.Sprintf(`[{"op":"update","table":"Interface","where":[["_uuid","==",["uuid","%s"]]],"row":{"external_ids":["map",[["n","%d"]]]}}]`, iface, n))
		if r := d.Transact(ops, TxnEnv{}); r.Commit == nil {
			b.Fatalf("update failed: %s", resultsJSON(b, r))
		}
	}
}
