package db

import (
	"encoding/json"
	"regexp"
	"sort"
)

// Column.Index values of the pseudo columns "_uuid" and "_version", which
// are not in Table.Columns. Table.ColumnsByName and Table.Column return
// Columns with these indexes; Row.Datum understands them.
const (
	ColumnIndexUUID    = -1
	ColumnIndexVersion = -2
)

// uuidType is the type of the _uuid and _version pseudo columns.
var uuidType = ColumnType{Key: BaseType{Type: TypeUUID}, Min: 1, Max: 1}

// Column returns the named column, including the pseudo columns "_uuid" and
// "_version" (with Index ColumnIndexUUID / ColumnIndexVersion, immutable),
// or nil.
func (t *Table) Column(name string) *Column {
	switch name {
	case "_uuid":
		return &Column{Name: name, Type: uuidType, Index: ColumnIndexUUID}
	case "_version":
		return &Column{Name: name, Type: uuidType, Index: ColumnIndexVersion, Ephemeral: true}
	}
	return t.ByName[name]
}

// ColumnsByName resolves column names, accepting "_uuid" and "_version" as
// pseudo columns, for select "columns", monitor requests and RowJSON. A nil
// names gives all user columns (without the pseudo columns). Unknown or
// repeated names are an error.
func (t *Table) ColumnsByName(names []string) ([]*Column, error) {
	if names == nil {
		return t.Columns, nil
	}
	cols := make([]*Column, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		c := t.Column(n)
		if c == nil {
			return nil, syntaxError("%s is not a valid column name", n)
		}
		if seen[n] {
			return nil, syntaxError("array of distinct column names expected")
		}
		seen[n] = true
		cols = append(cols, c)
	}
	return cols, nil
}

// Datum returns the row's value for c, including the pseudo columns.
func (r *Row) Datum(c *Column) Datum {
	switch c.Index {
	case ColumnIndexUUID:
		return Datum{Keys: []Atom{r.UUID}}
	case ColumnIndexVersion:
		return Datum{Keys: []Atom{r.Version}}
	}
	return r.Columns[c.Index]
}

var versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// ParseSchema parses an RFC 7047 database schema with Open vSwitch's
// extensions ("cksum", "isRoot", "maxRows", "indexes", "ephemeral",
// "mutable"). If no table says "isRoot": true, every table is a root table.
// Errors are *Error values worded like Open vSwitch's.
func ParseSchema(data []byte) (*Schema, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, syntaxError("schema is not valid JSON: %s", err)
	}
	s, e := parseSchema(v)
	if e != nil {
		return nil, e
	}
	s.Raw = append(json.RawMessage(nil), data...)
	return s, nil
}

func parseSchema(v any) (*Schema, *Error) {
	p := newObjectParser(v, "database schema")
	name := p.member("name", opID)
	version := p.member("version", opString|opOptional)
	cksum := p.member("cksum", opString|opOptional)
	tables := p.member("tables", opObject)
	if err := p.finish(); err != nil {
		return nil, err
	}
	s := &Schema{Name: name.(string), Tables: map[string]*Table{}}
	if version != nil {
		s.Version = version.(string)
		if !versionPattern.MatchString(s.Version) {
			return nil, syntaxError("schema version \"%s\" not in format x.y.z", s.Version)
		}
	}
	if cksum != nil {
		s.Cksum = cksum.(string)
	}
	tableObjs := tables.(map[string]any)
	for _, tname := range sortedKeys(tableObjs) {
		switch {
		case tname[0] == '_':
			return nil, syntaxError("names beginning with \"_\" are reserved")
		case !isID(tname):
			return nil, syntaxError("name must be a valid id")
		}
		t, err := parseTable(tname, tableObjs[tname])
		if err != nil {
			return nil, err
		}
		s.Tables[tname] = t
	}
	anyRoot := false
	for _, t := range s.Tables {
		anyRoot = anyRoot || t.IsRoot
	}
	for _, t := range s.Tables {
		if !anyRoot {
			t.IsRoot = true
		}
	}
	for _, tname := range sortedKeys(s.Tables) {
		for _, c := range s.Tables[tname].Columns {
			for _, b := range []*BaseType{&c.Type.Key, c.Type.Value} {
				if b == nil || b.RefTable == "" {
					continue
				}
				which := "key"
				if b != &c.Type.Key {
					which = "value"
				}
				if s.Tables[b.RefTable] == nil {
					return nil, syntaxError("column %s %s refers to undefined table %s", c.Name, which, b.RefTable)
				}
			}
		}
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func parseTable(name string, v any) (*Table, *Error) {
	p := newObjectParser(v, "table schema for table "+name)
	columns := p.member("columns", opObject)
	p.member("mutable", opBoolean|opOptional)
	maxRows := p.member("maxRows", opInteger|opOptional)
	isRoot := p.member("isRoot", opBoolean|opOptional)
	indexes := p.member("indexes", opArray|opOptional)
	if err := p.finish(); err != nil {
		return nil, err
	}
	t := &Table{Name: name, ByName: map[string]*Column{}}
	if maxRows != nil {
		n, _ := jsonInteger(maxRows)
		if n <= 0 {
			return nil, syntaxError("maxRows must be at least 1")
		}
		if n < uint32Max {
			t.MaxRows = int(n)
		}
	}
	if isRoot != nil {
		t.IsRoot = isRoot.(bool)
	}
	colObjs := columns.(map[string]any)
	if len(colObjs) == 0 {
		return nil, syntaxError("table must have at least one column")
	}
	for _, cname := range sortedKeys(colObjs) {
		switch {
		case cname[0] == '_':
			return nil, syntaxError("names beginning with \"_\" are reserved")
		case !isID(cname):
			return nil, syntaxError("name must be a valid id")
		}
		c, err := parseColumn(cname, colObjs[cname])
		if err != nil {
			return nil, err
		}
		c.Index = len(t.Columns)
		t.Columns = append(t.Columns, c)
		t.ByName[cname] = c
	}
	if indexes != nil {
		for _, iv := range indexes.([]any) {
			names, ok := stringArray(iv)
			if !ok {
				return nil, syntaxError("array of distinct column names expected")
			}
			cols, err := t.ColumnsByName(names)
			if err != nil {
				return nil, err.(*Error)
			}
			if len(cols) == 0 {
				return nil, syntaxError("index must have at least one column")
			}
			for _, c := range cols {
				if c.Ephemeral {
					return nil, syntaxError("ephemeral columns (such as %s) may not be indexed", c.Name)
				}
			}
			t.Indexes = append(t.Indexes, cols)
		}
	}
	return t, nil
}

// stringArray converts a JSON array of strings; a non-nil empty slice for [].
func stringArray(v any) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func parseColumn(name string, v any) (*Column, *Error) {
	p := newObjectParser(v, "schema for column "+name)
	mutable := p.member("mutable", opBoolean|opOptional)
	ephemeral := p.member("ephemeral", opBoolean|opOptional)
	typ := p.member("type", opString|opObject)
	if err := p.finish(); err != nil {
		return nil, err
	}
	ct, err := parseColumnType(typ)
	if err != nil {
		return nil, err
	}
	c := &Column{Name: name, Type: *ct, Mutable: true}
	if mutable != nil {
		c.Mutable = mutable.(bool)
	}
	// A weak reference must stay mutable: deleting its target changes it.
	if ct.Key.RefTable != "" && ct.Key.RefType == RefWeak || ct.Value != nil && ct.Value.RefTable != "" && ct.Value.RefType == RefWeak {
		c.Mutable = true
	}
	if ephemeral != nil {
		c.Ephemeral = ephemeral.(bool)
	}
	return c, nil
}

func parseColumnType(v any) (*ColumnType, *Error) {
	t := &ColumnType{Min: 1, Max: 1}
	switch v.(type) {
	case string:
		b, err := parseBaseType(v)
		if err != nil {
			return nil, err
		}
		t.Key = *b
		return t, nil
	case map[string]any:
	default:
		return nil, syntaxError("ovsdb type expected")
	}
	p := newObjectParser(v, "ovsdb type")
	key := p.member("key", opString|opObject)
	value := p.member("value", opString|opObject|opOptional)
	minV := p.member("min", opInteger|opOptional)
	maxV := p.member("max", opInteger|opString|opOptional)
	if err := p.finish(); err != nil {
		return nil, err
	}
	b, err := parseBaseType(key)
	if err != nil {
		return nil, err
	}
	t.Key = *b
	if value != nil {
		if t.Value, err = parseBaseType(value); err != nil {
			return nil, err
		}
	}
	if minV != nil {
		n, _ := jsonInteger(minV)
		if n < 0 || n >= uint32Max {
			return nil, syntaxError("bad min or max value")
		}
		t.Min = int(n)
	}
	if s, ok := maxV.(string); ok && s == "unlimited" {
		t.Max = Unlimited
	} else if maxV != nil {
		n, ok := jsonInteger(maxV)
		if !ok || n < 0 || n >= uint32Max {
			return nil, syntaxError("bad min or max value")
		}
		t.Max = int(n)
	}
	if t.Min > 1 || t.Max < 1 {
		return nil, syntaxError("ovsdb type fails constraint checks")
	}
	return t, nil
}

func parseBaseType(v any) (*BaseType, *Error) {
	if s, ok := v.(string); ok {
		at, ok := atomicTypeFromString(s)
		if !ok {
			return nil, syntaxError("\"%s\" is not an atomic-type", s)
		}
		return &BaseType{Type: at}, nil
	}
	p := newObjectParser(v, "ovsdb type")
	typ := p.member("type", opString)
	if p.err != nil {
		return nil, p.finish()
	}
	at, ok := atomicTypeFromString(typ.(string))
	if !ok {
		return nil, syntaxError("\"%s\" is not an atomic-type", typ)
	}
	b := &BaseType{Type: at}
	var err *Error
	if enum := p.member("enum", opAny|opOptional); enum != nil {
		et := ColumnType{Key: BaseType{Type: at}, Min: 1, Max: Unlimited}
		var d Datum
		if d, err = parseDatumValue(enum, &et, nil); err == nil {
			b.Enum = d.Keys
		}
	} else {
		switch at {
		case TypeInteger:
			if lo, ok := jsonInteger(p.member("minInteger", opInteger|opOptional)); ok {
				b.MinInteger = &lo
			}
			if hi, ok := jsonInteger(p.member("maxInteger", opInteger|opOptional)); ok {
				b.MaxInteger = &hi
			}
			if b.MinInteger != nil && b.MaxInteger != nil && *b.MinInteger > *b.MaxInteger {
				err = syntaxError("minInteger exceeds maxInteger")
			}
		case TypeReal:
			if lo, ok := jsonReal(p.member("minReal", opNumber|opOptional)); ok {
				b.MinReal = &lo
			}
			if hi, ok := jsonReal(p.member("maxReal", opNumber|opOptional)); ok {
				b.MaxReal = &hi
			}
			if b.MinReal != nil && b.MaxReal != nil && *b.MinReal > *b.MaxReal {
				err = syntaxError("minReal exceeds maxReal")
			}
		case TypeString:
			b.MinLength, err = optionalLength(p, "minLength")
			if err == nil {
				b.MaxLength, err = optionalLength(p, "maxLength")
			}
			if err == nil && b.MinLength != nil && b.MaxLength != nil && *b.MinLength > *b.MaxLength {
				err = syntaxError("minLength exceeds maxLength")
			}
		case TypeUUID:
			if ref := p.member("refTable", opID|opOptional); ref != nil {
				b.RefTable = ref.(string)
				if rt := p.member("refType", opID|opOptional); rt != nil {
					switch rt.(string) {
					case "strong":
					case "weak":
						b.RefType = RefWeak
					default:
						err = syntaxError("refType must be \"strong\" or \"weak\" (not \"%s\")", rt)
					}
				}
			}
		}
	}
	if perr := p.finish(); err == nil {
		err = perr
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func optionalLength(p *objectParser, name string) (*int64, *Error) {
	v := p.member(name, opInteger|opOptional)
	if v == nil {
		return nil, nil
	}
	n, _ := jsonInteger(v)
	if n < 0 || n > uint32Max {
		return nil, syntaxError("%s out of valid range 0 to %d", name, int64(uint32Max))
	}
	return &n, nil
}
