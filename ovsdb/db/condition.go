package db

import (
	"encoding/json"
)

// function is a condition function of RFC 7047, plus Open vSwitch's
// boolean literals.
type function int

const (
	fnLT function = iota
	fnLE
	fnEQ
	fnNE
	fnGE
	fnGT
	fnIncludes
	fnExcludes
	fnTrue
	fnFalse
)

var functionNames = map[string]function{
	"<": fnLT, "<=": fnLE, "==": fnEQ, "!=": fnNE, ">=": fnGE, ">": fnGT,
	"includes": fnIncludes, "excludes": fnExcludes,
}

type clause struct {
	fn     function
	column *Column
	arg    Datum
}

// condition is a conjunction of clauses on one table. An empty condition
// matches every row.
type condition struct {
	clauses []clause
}

// ParseCondition parses a JSON "where" array for the table. Besides
// [column, function, value] clauses it accepts the literals true and false
// (as monitor_cond does). Named UUIDs are not allowed here.
func (t *Table) ParseCondition(raw json.RawMessage) (Condition, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, syntaxError("%s", err)
	}
	if _, ok := v.([]any); !ok {
		return nil, syntaxError("Parse error in condition.")
	}
	c, e := parseCondition(t, v.([]any), nil)
	if e != nil {
		return nil, e
	}
	return c, nil
}

func parseCondition(t *Table, clauses []any, st symbolTable) (*condition, *Error) {
	c := &condition{clauses: make([]clause, 0, len(clauses))}
	for _, v := range clauses {
		cl, err := parseClause(t, v, st)
		if err != nil {
			return nil, err
		}
		c.clauses = append(c.clauses, cl)
	}
	return c, nil
}

func parseClause(t *Table, v any, st symbolTable) (clause, *Error) {
	if b, ok := v.(bool); ok {
		if b {
			return clause{fn: fnTrue}, nil
		}
		return clause{fn: fnFalse}, nil
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 3 {
		return clause{}, syntaxError("Parse error in condition.").at(v)
	}
	colName, ok1 := arr[0].(string)
	fnName, ok2 := arr[1].(string)
	if !ok1 || !ok2 {
		return clause{}, syntaxError("Parse error in condition.").at(v)
	}
	col := t.Column(colName)
	if col == nil {
		return clause{}, errorf("unknown column", "No column %s in table %s.", colName, t.Name).at(v)
	}
	fn, ok := functionNames[fnName]
	if !ok {
		return clause{}, errorf("unknown function", "No function named %s.", fnName)
	}
	typ := col.Type
	switch fn {
	case fnLT, fnLE, fnGT, fnGE:
		if !(typ.IsScalar() || typ.isOptionalScalar()) || typ.Key.Type != TypeInteger && typ.Key.Type != TypeReal {
			return clause{}, syntaxError("Type mismatch: \"%s\" operator may not be applied to column %s of type %s.",
				fnName, colName, typ.English()).at(v)
		}
		typ.Min = 1
	case fnExcludes:
		if !typ.IsScalar() {
			typ.Min, typ.Max = 0, Unlimited
		}
	case fnIncludes:
		if !typ.IsScalar() {
			typ.Min = 0
		}
	}
	arg, err := parseDatumValue(arr[2], &typ, st)
	if err != nil {
		return clause{}, err
	}
	return clause{fn: fn, column: col, arg: arg}, nil
}

// Match reports whether row satisfies every clause.
func (c *condition) Match(row *Row) bool {
	for i := range c.clauses {
		if !c.clauses[i].match(row) {
			return false
		}
	}
	return true
}

func (cl *clause) match(row *Row) bool {
	switch cl.fn {
	case fnTrue:
		return true
	case fnFalse:
		return false
	}
	field := row.Datum(cl.column)
	typ := &cl.column.Type
	scalarish := typ.IsScalar() || typ.isOptionalScalar()
	if typ.isOptionalScalar() && len(field.Keys) == 0 && cl.fn <= fnGT && cl.fn != fnEQ && cl.fn != fnNE {
		return false
	}
	if scalarish && len(field.Keys) == 1 && len(cl.arg.Keys) == 1 {
		c := compareAtoms(field.Keys[0], cl.arg.Keys[0])
		switch cl.fn {
		case fnLT:
			return c < 0
		case fnLE:
			return c <= 0
		case fnEQ, fnIncludes:
			return c == 0
		case fnNE, fnExcludes:
			return c != 0
		case fnGE:
			return c >= 0
		case fnGT:
			return c > 0
		}
	}
	switch cl.fn {
	case fnEQ:
		return field.Equal(cl.arg)
	case fnNE:
		return !field.Equal(cl.arg)
	case fnIncludes:
		return includesAll(cl.arg, field, typ.IsMap())
	case fnExcludes:
		return excludesAll(cl.arg, field, typ.IsMap())
	}
	return false
}

// uuidLookup returns the UUID the condition pins the row to with a
// "_uuid == X" clause, so queries can skip the table scan.
func (c *condition) uuidLookup() (UUID, bool) {
	for _, cl := range c.clauses {
		if cl.fn == fnEQ && cl.column.Index == ColumnIndexUUID && len(cl.arg.Keys) == 1 {
			return cl.arg.Keys[0].(UUID), true
		}
	}
	return "", false
}
