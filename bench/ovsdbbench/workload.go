package ovsdbbench

import (
	"encoding/json"
	"errors"
	"fmt"
)

// workload alternately adds port p to br0 and removes it, each as one
// transaction shaped like ovs-vsctl's add-port/del-port: a wait on what it
// read, inserts linked by uuid-name, the whole Bridge.ports set,
// next_cfg += 1 and a comment.
type workload struct {
	c          *client
	root       string
	bridge     string
	bridgePort string
	added      string // p's Port row while on br0
	adding     bool   // the transaction in flight adds p
}

type opResult struct {
	UUID  []string `json:"uuid"`
	Error string   `json:"error"`
}

func uuidRef(u string) []any   { return []any{"uuid", u} }
func named(n string) []any     { return []any{"named-uuid", n} }
func whereUUID(u string) []any { return []any{[]any{"_uuid", "==", uuidRef(u)}} }

func newWorkload(c *client) (*workload, error) {
	raw, err := c.call("transact", "Open_vSwitch",
		map[string]any{"op": "insert", "table": "Open_vSwitch", "row": map[string]any{"bridges": named("br")}, "uuid-name": "root"},
		map[string]any{"op": "insert", "table": "Interface", "row": map[string]any{"name": "br0", "type": "internal"}, "uuid-name": "i"},
		map[string]any{"op": "insert", "table": "Port", "row": map[string]any{"name": "br0", "interfaces": named("i")}, "uuid-name": "p"},
		map[string]any{"op": "insert", "table": "Bridge", "row": map[string]any{"name": "br0", "ports": named("p")}, "uuid-name": "br"},
	)
	if err != nil {
		return nil, err
	}
	res, err := parseTransact(raw, 4)
	if err != nil {
		return nil, err
	}
	return &workload{c: c, root: res[0].UUID[1], bridgePort: res[2].UUID[1], bridge: res[3].UUID[1]}, nil
}

func parseTransact(raw json.RawMessage, want int) ([]opResult, error) {
	var res []opResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	for i, r := range res {
		if r.Error != "" {
			return nil, fmt.Errorf("operation %d: %s", i, r.Error)
		}
	}
	if len(res) < want {
		return nil, fmt.Errorf("%d results, want %d", len(res), want)
	}
	for i := range want {
		if res[i].UUID != nil && len(res[i].UUID) != 2 {
			return nil, errors.New("malformed uuid")
		}
	}
	return res, nil
}

// next returns the params of the next transaction.
func (w *workload) next() []any {
	current := []any{uuidRef(w.bridgePort)}
	if w.added != "" {
		current = append(current, uuidRef(w.added))
	}
	ops := []any{"Open_vSwitch",
		map[string]any{"op": "wait", "timeout": 0, "table": "Bridge", "where": whereUUID(w.bridge),
			"columns": []string{"ports"}, "until": "==", "rows": []any{map[string]any{"ports": []any{"set", current}}}},
	}
	comment := "ovs-vsctl: ovs-vsctl del-port br0 p"
	w.adding = w.added == ""
	if w.adding {
		comment = "ovs-vsctl: ovs-vsctl add-port br0 p"
		ops = append(ops,
			map[string]any{"op": "insert", "table": "Interface", "row": map[string]any{"name": "p"}, "uuid-name": "ri"},
			map[string]any{"op": "insert", "table": "Port", "row": map[string]any{"name": "p", "interfaces": named("ri")}, "uuid-name": "rp"},
			map[string]any{"op": "update", "table": "Bridge", "where": whereUUID(w.bridge),
				"row": map[string]any{"ports": []any{"set", []any{uuidRef(w.bridgePort), named("rp")}}}})
	} else {
		ops = append(ops, map[string]any{"op": "update", "table": "Bridge", "where": whereUUID(w.bridge),
			"row": map[string]any{"ports": []any{"set", []any{uuidRef(w.bridgePort)}}}})
	}
	return append(ops,
		map[string]any{"op": "mutate", "table": "Open_vSwitch", "where": whereUUID(w.root), "mutations": []any{[]any{"next_cfg", "+=", 1}}},
		map[string]any{"op": "comment", "comment": comment})
}

// finish records the outcome of the transaction next() built.
func (w *workload) finish(raw json.RawMessage) error {
	res, err := parseTransact(raw, 3)
	if err != nil {
		return err
	}
	if w.adding {
		if len(res[2].UUID) != 2 {
			return errors.New("no uuid for the inserted Port")
		}
		w.added = res[2].UUID[1]
	} else {
		w.added = ""
	}
	return nil
}

func (w *workload) toggle() error {
	raw, err := w.c.call("transact", w.next()...)
	if err != nil {
		return err
	}
	return w.finish(raw)
}
