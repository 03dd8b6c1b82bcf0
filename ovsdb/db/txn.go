package db

import (
	"encoding/json"
	"strings"
	"time"

	"gvs/ovsdb/internal/fastjson"
)

// txnRow is one row a transaction touches: old is the committed row (nil
// for an insert), new the transaction's private working copy (nil for a
// delete).
type txnRow struct {
	ts   *tableState
	uuid UUID
	old  *Row
	new  *Row
}

// txn is one transaction being executed, with the write lock held.
type txn struct {
	db       *Database
	env      TxnEnv
	rows     map[rowKey]*txnRow
	order    []*txnRow // rows in the order first touched, for determinism
	symtab   symbolTable
	comments []string
	durable  bool
	// privileged transactions may write reserved ("_...") databases.
	privileged bool
	// timeout is the smallest "wait" timeout seen, in ms; -1 if none.
	timeout int64
}

// Transact executes one RFC 7047 "transact" request's operations (the
// params after the database name) atomically. See TxnResult.
//
// When a "wait" blocks, RetryAt is env.Started plus the smallest "wait"
// timeout of the transaction, or a time a century ahead if no "wait" has a
// timeout.
func (d *Database) Transact(ops []json.RawMessage, env TxnEnv) TxnResult {
	return d.transact(ops, env, false)
}

// TransactPrivileged is Transact without the rule that forbids clients to
// write databases whose names begin with "_": the server uses it to
// maintain its own _Server database.
func (d *Database) TransactPrivileged(ops []json.RawMessage, env TxnEnv) TxnResult {
	return d.transact(ops, env, true)
}

func (d *Database) transact(ops []json.RawMessage, env TxnEnv, privileged bool) TxnResult {
	if env.Now.IsZero() {
		env.Now = time.Now()
	}
	if env.Started.IsZero() {
		env.Started = env.Now
	}
	// Decode outside the lock: it is the bulk of the work for big sets.
	decoded := make([]any, len(ops))
	var dec fastjson.Decoder
	for i, raw := range ops {
		if v, err := decodeJSONWith(&dec, raw); err == nil {
			decoded[i] = v
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	x := &txn{db: d, env: env, rows: map[rowKey]*txnRow{}, symtab: symbolTable{}, timeout: -1, privileged: privileged}
	results := make([]any, 0, len(ops)+1)
	for i, v := range decoded {
		result, err := x.execute(v, i+1, len(ops))
		if err == nil {
			results = append(results, result)
			continue
		}
		if err.Name == "not supported" && err.Details == "triggers not supported" {
			retry := farFuture(env.Started)
			if x.timeout >= 0 && x.timeout < int64(retry.Sub(env.Started)/time.Millisecond) {
				retry = env.Started.Add(time.Duration(x.timeout) * time.Millisecond)
			}
			return TxnResult{Blocked: true, RetryAt: retry}
		}
		results = append(results, err)
		for len(results) < len(ops) {
			results = append(results, nil)
		}
		return TxnResult{Results: results}
	}
	if len(x.rows) == 0 {
		return TxnResult{Results: results}
	}
	if err := x.precommit(); err != nil {
		return TxnResult{Results: append(results, err)}
	}
	commit := x.buildCommit()
	if commit == nil {
		return TxnResult{Results: results}
	}
	if d.beforeCommit != nil {
		if err := d.beforeCommit(commit); err != nil {
			return TxnResult{Results: append(results, commitError(err))}
		}
	}
	d.apply(x.order)
	for _, s := range d.subscribers {
		s.fn(commit)
	}
	return TxnResult{Results: results, Commit: commit}
}

// operation describes one RFC 7047 operation.
type operation struct {
	readOnly bool
	exec     func(x *txn, p *objectParser) (map[string]any, *Error)
}

var operations = map[string]operation{
	"insert":  {false, (*txn).insert},
	"select":  {true, (*txn).selectOp},
	"update":  {false, (*txn).update},
	"mutate":  {false, (*txn).mutate},
	"delete":  {false, (*txn).delete},
	"wait":    {true, (*txn).wait},
	"commit":  {false, (*txn).commitOp},
	"abort":   {true, (*txn).abort},
	"comment": {true, (*txn).comment},
	"assert":  {true, (*txn).assert},
}

// execute runs one decoded operation (nil if it was not valid JSON).
func (x *txn) execute(v any, i, n int) (map[string]any, *Error) {
	p := &objectParser{opIndex: i, opCount: n}
	p.init(v)
	opV := p.member("op", opID)
	var result map[string]any
	var err *Error
	readOnly := false
	name := ""
	if opV != nil {
		name = opV.(string)
		if op, ok := operations[name]; ok {
			readOnly = op.readOnly
			result, err = op.exec(x, p)
		} else {
			p.raise("No operation \"%s\"", name)
		}
	}
	// A parse error overrides any other error.
	if perr := p.finish(); perr != nil {
		err = perr
	}
	if err == nil && !readOnly && !x.privileged && strings.HasPrefix(x.db.schema.Name, "_") {
		err = errorf("not allowed", "%s operation not allowed on table in reserved database %s", name, x.db.schema.Name)
	}
	if err != nil {
		return nil, err
	}
	if result == nil {
		result = map[string]any{}
	}
	return result, nil
}

// table resolves the operation's "table" member.
func (x *txn) table(p *objectParser) *tableState {
	v := p.member("table", opID)
	if v == nil {
		return nil
	}
	ts := x.db.tables[v.(string)]
	if ts == nil {
		p.raise("No table named %s.", v)
	}
	return ts
}

// get returns the row as the transaction sees it, or nil.
func (x *txn) get(ts *tableState, uuid UUID) *Row {
	if tr := x.rows[rowKey{ts, uuid}]; tr != nil {
		return tr.new
	}
	return ts.rows[uuid]
}

// touch returns the transaction's record of a committed (or already
// touched) row, making a private working copy on first touch. It returns
// nil if the row does not exist at all.
func (x *txn) touch(ts *tableState, uuid UUID) *txnRow {
	key := rowKey{ts, uuid}
	if tr := x.rows[key]; tr != nil {
		return tr
	}
	old := ts.rows[uuid]
	if old == nil {
		return nil
	}
	tr := &txnRow{ts: ts, uuid: uuid, old: old, new: copyRow(old)}
	x.rows[key] = tr
	x.order = append(x.order, tr)
	return tr
}

// modify returns a writable copy of row, which the caller got from this
// transaction's view.
func (x *txn) modify(ts *tableState, row *Row) *Row {
	return x.touch(ts, row.UUID).new
}

func (x *txn) insertRow(ts *tableState, row *Row) {
	tr := &txnRow{ts: ts, uuid: row.UUID, new: row}
	x.rows[rowKey{ts, row.UUID}] = tr
	x.order = append(x.order, tr)
}

func (x *txn) deleteRow(ts *tableState, row *Row) {
	x.touch(ts, row.UUID).new = nil
}

func copyRow(r *Row) *Row {
	c := &Row{UUID: r.UUID, Version: r.Version, Columns: make([]Datum, len(r.Columns))}
	copy(c.Columns, r.Columns)
	return c
}

// query returns the rows of ts that match cond, as the transaction sees
// them.
func (x *txn) query(ts *tableState, cond *condition) []*Row {
	var out []*Row
	if u, ok := cond.uuidLookup(); ok {
		if r := x.get(ts, u); r != nil && cond.Match(r) {
			out = append(out, r)
		}
		return out
	}
	for uuid, r := range ts.rows {
		if tr := x.rows[rowKey{ts, uuid}]; tr != nil {
			r = tr.new
			if r == nil {
				continue
			}
		}
		if cond.Match(r) {
			out = append(out, r)
		}
	}
	for _, tr := range x.order {
		if tr.ts == ts && tr.old == nil && tr.new != nil && cond.Match(tr.new) {
			out = append(out, tr.new)
		}
	}
	return out
}

// elapsedMs is how long the transaction has been waiting.
func (x *txn) elapsedMs() int64 {
	ms := x.env.Now.Sub(x.env.Started).Milliseconds()
	if ms < 0 {
		return 0
	}
	return ms
}
