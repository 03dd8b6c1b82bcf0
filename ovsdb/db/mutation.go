package db

import (
	"math"
)

type mutator int

const (
	mAdd mutator = iota
	mSub
	mMul
	mDiv
	mMod
	mInsert
	mDelete
)

var mutatorNames = map[string]mutator{
	"+=": mAdd, "-=": mSub, "*=": mMul, "/=": mDiv, "%=": mMod,
	"insert": mInsert, "delete": mDelete,
}

type mutation struct {
	column   *Column
	mutator  mutator
	name     string
	arg      Datum
	keysOnly bool // "delete" on a map with a set of keys
}

func parseMutations(t *Table, list []any, st symbolTable) ([]mutation, *Error) {
	out := make([]mutation, 0, len(list))
	for _, v := range list {
		m, err := parseMutation(t, v, st)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMutation(t *Table, v any, st symbolTable) (mutation, *Error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 3 {
		return mutation{}, syntaxError("Parse error in mutation.").at(v)
	}
	colName, ok1 := arr[0].(string)
	name, ok2 := arr[1].(string)
	if !ok1 || !ok2 {
		return mutation{}, syntaxError("Parse error in mutation.").at(v)
	}
	col := t.Column(colName)
	if col == nil {
		return mutation{}, errorf("unknown column", "No column %s in table %s.", colName, t.Name).at(v)
	}
	if !col.Mutable || col.Index < 0 {
		return mutation{}, errorf("constraint violation", "Cannot mutate immutable column %s in table %s.", colName, t.Name).at(v)
	}
	mu, ok := mutatorNames[name]
	if !ok {
		return mutation{}, errorf("unknown mutator", "No mutator named %s.", name)
	}
	m := mutation{column: col, mutator: mu, name: name}
	typ := col.Type
	mismatch := func() *Error {
		return syntaxError("Type mismatch: \"%s\" operator may not be applied to column %s of type %s.",
			name, colName, col.Type.English()).at(v)
	}
	var err *Error
	switch mu {
	case mAdd, mSub, mMul, mDiv, mMod:
		if typ.IsMap() || typ.Key.Type != TypeInteger && typ.Key.Type != TypeReal || mu == mMod && typ.Key.Type == TypeReal {
			return mutation{}, mismatch()
		}
		typ = ColumnType{Key: BaseType{Type: typ.Key.Type}, Min: 1, Max: 1}
		m.arg, err = parseDatumValue(arr[2], &typ, st)
	case mInsert, mDelete:
		if typ.IsScalar() {
			return mutation{}, mismatch()
		}
		typ.Min = 0
		if mu == mDelete {
			typ.Max = Unlimited
		}
		m.arg, err = parseDatumValue(arr[2], &typ, st)
		if err != nil && typ.IsMap() && mu == mDelete {
			typ.Value = nil
			m.arg, err = parseDatumValue(arr[2], &typ, st)
			m.keysOnly = true
		}
	}
	if err != nil {
		return mutation{}, err
	}
	return m, nil
}

// apply mutates row (a transaction's private copy) in place.
func (m *mutation) apply(row *Row) *Error {
	col := m.column
	dst := row.Columns[col.Index]
	switch m.mutator {
	case mInsert:
		dst = union(dst, m.arg, col.Type.IsMap())
		row.Columns[col.Index] = dst
		return checkCount(dst, &col.Type)
	case mDelete:
		dst = subtract(dst, m.arg, col.Type.IsMap(), m.keysOnly)
		row.Columns[col.Index] = dst
		return checkCount(dst, &col.Type)
	}
	out := Datum{Keys: make([]Atom, len(dst.Keys))}
	for i, k := range dst.Keys {
		var err *Error
		if out.Keys[i], err = m.scalar(k, m.arg.Keys[0]); err != nil {
			return err
		}
	}
	for _, k := range out.Keys {
		if err := checkAtom(k, &col.Type.Key); err != nil {
			return err
		}
	}
	if out.sort() {
		return errorf("constraint violation", "Result of \"%s\" operation contains duplicates.", m.name)
	}
	row.Columns[col.Index] = out
	return nil
}

func checkCount(d Datum, t *ColumnType) *Error {
	if len(d.Keys) < t.Min || len(d.Keys) > t.Max {
		return errorf("constraint violation", "Attempted to store %d elements in %s.", len(d.Keys), t.English())
	}
	return nil
}

func (m *mutation) rangeError() *Error {
	return errorf("range error", "Result of \"%s\" operation is out of range.", m.name)
}

func (m *mutation) scalar(x, y Atom) (Atom, *Error) {
	if xf, ok := x.(float64); ok {
		yf := y.(float64)
		var r float64
		switch m.mutator {
		case mAdd:
			r = xf + yf
		case mSub:
			r = xf - yf
		case mMul:
			r = xf * yf
		case mDiv:
			if yf == 0 {
				return nil, errorf("domain error", "Division by zero.")
			}
			r = xf / yf
		default:
			return nil, &Error{Name: "ovsdb error", Details: "Operation not supported."}
		}
		if !(r >= -math.MaxFloat64 && r <= math.MaxFloat64) {
			return nil, m.rangeError()
		}
		return r, nil
	}
	a, b := x.(int64), y.(int64)
	switch m.mutator {
	case mAdd:
		if b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b {
			return nil, m.rangeError()
		}
		return a + b, nil
	case mSub:
		if b < 0 && a > math.MaxInt64+b || b > 0 && a < math.MinInt64+b {
			return nil, m.rangeError()
		}
		return a - b, nil
	case mMul:
		r := a * b
		if a != 0 && (r/a != b || a == -1 && b == math.MinInt64 || b == -1 && a == math.MinInt64) {
			return nil, m.rangeError()
		}
		return r, nil
	case mDiv, mMod:
		if b == 0 {
			return nil, errorf("domain error", "Division by zero.")
		}
		if a == math.MinInt64 && b == -1 {
			return nil, m.rangeError()
		}
		if m.mutator == mDiv {
			return a / b, nil
		}
		return a % b, nil
	}
	return nil, &Error{Name: "ovsdb error", Details: "Operation not supported."}
}
