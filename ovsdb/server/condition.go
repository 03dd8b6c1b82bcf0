package server

import (
	"encoding/json"

	"gvs/ovsdb/db"
)

// monCondition is a monitor_cond "where": unlike a transaction's "where",
// a row is selected when it matches ANY clause, an empty array selects every
// row, and the clauses may include the booleans true and false.
type monCondition struct {
	canonical string // for telling whether a change changed anything
	always    bool   // empty, or has a true clause
	clauses   []db.Condition
}

// trueCondition is what a table monitored without "where" gets.
var trueCondition = &monCondition{canonical: "[]", always: true}

func parseMonCondition(t *db.Table, where json.RawMessage) (*monCondition, error) {
	if where == nil {
		return trueCondition, nil
	}
	clauses, ok := decodeArray(where)
	if !ok {
		return nil, syntaxError(where, "", "array expected")
	}
	c := &monCondition{canonical: canonicalJSON(where), always: len(clauses) == 0}
	for _, clause := range clauses {
		if jsonKind(clause) == 'b' {
			if string(clause) == "true" {
				c.always = true
			}
			continue
		}
		one := make(json.RawMessage, 0, len(clause)+2)
		one = append(append(append(one, '['), clause...), ']')
		parsed, err := t.ParseCondition(one)
		if err != nil {
			return nil, err
		}
		c.clauses = append(c.clauses, parsed)
	}
	return c, nil
}

func (c *monCondition) match(row *db.Row) bool {
	if c.always {
		return true
	}
	for _, clause := range c.clauses {
		if clause.Match(row) {
			return true
		}
	}
	return false
}
