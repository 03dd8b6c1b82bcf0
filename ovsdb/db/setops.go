package db

// Set and map algebra on sorted data: update2 diffs and the helpers of
// conditions and mutations.

// DiffDatum returns what an update2/update3 "modify" carries for a column
// that changed from old to new: for a type of at most one element (a
// scalar or optional value) the new value; for a set the symmetric
// difference; for a map the pairs whose key was added or removed (with the
// old value) plus, for keys whose value changed, the new pair. This is
// ovsdb_datum_diff.
func DiffDatum(old, new Datum, t *ColumnType) Datum {
	if t.Max <= 1 {
		return new
	}
	var out Datum
	if t.IsMap() {
		out.Values = []Atom{}
	}
	i, j := 0, 0
	for i < len(old.Keys) || j < len(new.Keys) {
		var c int
		switch {
		case i == len(old.Keys):
			c = 1
		case j == len(new.Keys):
			c = -1
		default:
			c = compareAtoms(old.Keys[i], new.Keys[j])
		}
		switch {
		case c < 0: // removed
			out.Keys = append(out.Keys, old.Keys[i])
			if t.IsMap() {
				out.Values = append(out.Values, old.Values[i])
			}
			i++
		case c > 0: // added
			out.Keys = append(out.Keys, new.Keys[j])
			if t.IsMap() {
				out.Values = append(out.Values, new.Values[j])
			}
			j++
		default:
			if t.IsMap() && compareAtoms(old.Values[i], new.Values[j]) != 0 {
				out.Keys = append(out.Keys, new.Keys[j])
				out.Values = append(out.Values, new.Values[j])
			}
			i++
			j++
		}
	}
	return out
}

// ApplyDiff is the inverse of DiffDatum: it applies an update2 "modify"
// diff to old.
func ApplyDiff(old, diff Datum, t *ColumnType) Datum {
	if t.Max <= 1 {
		return diff
	}
	var out Datum
	if t.IsMap() {
		out.Values = []Atom{}
	}
	i, j := 0, 0
	for i < len(old.Keys) || j < len(diff.Keys) {
		var c int
		switch {
		case i == len(old.Keys):
			c = 1
		case j == len(diff.Keys):
			c = -1
		default:
			c = compareAtoms(old.Keys[i], diff.Keys[j])
		}
		switch {
		case c < 0:
			out.Keys = append(out.Keys, old.Keys[i])
			if t.IsMap() {
				out.Values = append(out.Values, old.Values[i])
			}
			i++
		case c > 0:
			out.Keys = append(out.Keys, diff.Keys[j])
			if t.IsMap() {
				out.Values = append(out.Values, diff.Values[j])
			}
			j++
		default:
			// In a set, present in both means removed. In a map, the same
			// pair means removed, a different value means replaced.
			if t.IsMap() && compareAtoms(old.Values[i], diff.Values[j]) != 0 {
				out.Keys = append(out.Keys, diff.Keys[j])
				out.Values = append(out.Values, diff.Values[j])
			}
			i++
			j++
		}
	}
	return out
}

// find returns the index of key k in d.
func (d Datum) find(k Atom) (int, bool) { return searchAtoms(d.Keys, k) }

// contains reports whether d holds element (k[, v]) — for maps the pair
// must match.
func (d Datum) containsElem(k, v Atom, isMap bool) bool {
	i, ok := d.find(k)
	if !ok {
		return false
	}
	return !isMap || compareAtoms(d.Values[i], v) == 0
}

// includesAll reports whether every element of a is in b.
func includesAll(a, b Datum, isMap bool) bool {
	for i, k := range a.Keys {
		var v Atom
		if isMap {
			v = a.Values[i]
		}
		if !b.containsElem(k, v, isMap) {
			return false
		}
	}
	return true
}

// excludesAll reports whether no element of a is in b.
func excludesAll(a, b Datum, isMap bool) bool {
	for i, k := range a.Keys {
		var v Atom
		if isMap {
			v = a.Values[i]
		}
		if b.containsElem(k, v, isMap) {
			return false
		}
	}
	return true
}

// union returns a plus the elements of b whose keys a lacks (existing map
// keys keep their values), as ovsdb_datum_union.
func union(a, b Datum, isMap bool) Datum {
	out := Datum{Keys: make([]Atom, 0, len(a.Keys)+len(b.Keys))}
	if isMap {
		out.Values = make([]Atom, 0, len(a.Keys)+len(b.Keys))
	}
	i, j := 0, 0
	for i < len(a.Keys) || j < len(b.Keys) {
		var c int
		switch {
		case i == len(a.Keys):
			c = 1
		case j == len(b.Keys):
			c = -1
		default:
			c = compareAtoms(a.Keys[i], b.Keys[j])
		}
		if c <= 0 {
			out.Keys = append(out.Keys, a.Keys[i])
			if isMap {
				out.Values = append(out.Values, a.Values[i])
			}
			i++
			if c == 0 {
				j++
			}
		} else {
			out.Keys = append(out.Keys, b.Keys[j])
			if isMap {
				out.Values = append(out.Values, b.Values[j])
			}
			j++
		}
	}
	return out
}

// subtract removes from a the elements of b. If a is a map and b is a set
// (keysOnly), keys are removed whatever their value; if both are maps only
// matching pairs are removed.
func subtract(a, b Datum, isMap, keysOnly bool) Datum {
	out := Datum{Keys: make([]Atom, 0, len(a.Keys))}
	if isMap {
		out.Values = make([]Atom, 0, len(a.Keys))
	}
	for i, k := range a.Keys {
		if j, ok := b.find(k); ok && (!isMap || keysOnly || compareAtoms(a.Values[i], b.Values[j]) == 0) {
			continue
		}
		out.Keys = append(out.Keys, k)
		if isMap {
			out.Values = append(out.Values, a.Values[i])
		}
	}
	return out
}
