package db

// refChanges reports how the references held by one row change from old to
// new (either may be nil): fn gets each referenced row with +1 or -1 per
// reference added or removed. Only changed columns are looked at, so a
// commit costs what it changes, not the size of the row's sets. Self
// references are left out.
func refChanges(ts *tableState, tables map[string]*tableState, old, new *Row, fn func(target rowKey, c *Column, weak bool, delta int)) {
	var uuid UUID
	if old != nil {
		uuid = old.UUID
	} else if new != nil {
		uuid = new.UUID
	} else {
		return
	}
	emit := func(base *BaseType, c *Column, atoms []Atom, delta int) {
		target := tables[base.RefTable]
		weak := base.RefType == RefWeak
		for _, a := range atoms {
			if u := a.(UUID); u != uuid || weak && target != ts {
				fn(rowKey{target, u}, c, base.RefType == RefWeak, delta)
			}
		}
	}
	for _, c := range ts.schema.Columns {
		keyRef := c.Type.Key.RefTable != ""
		valRef := c.Type.Value != nil && c.Type.Value.RefTable != ""
		if !keyRef && !valRef {
			continue
		}
		var od, nd Datum
		if old != nil {
			od = old.Columns[c.Index]
		}
		if new != nil {
			nd = new.Columns[c.Index]
		}
		if old != nil && new != nil && od.Equal(nd) {
			continue
		}
		if keyRef {
			added, removed := keyDiff(od.Keys, nd.Keys)
			emit(&c.Type.Key, c, removed, -1)
			emit(&c.Type.Key, c, added, +1)
		}
		if valRef {
			emit(c.Type.Value, c, od.Values, -1)
			emit(c.Type.Value, c, nd.Values, +1)
		}
	}
}

// keyDiff returns the keys in b but not a, and in a but not b; both are
// sorted and unique.
func keyDiff(a, b []Atom) (added, removed []Atom) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b):
			removed = append(removed, a[i])
			i++
		case i == len(a):
			added = append(added, b[j])
			j++
		default:
			switch c := compareAtoms(a[i], b[j]); {
			case c < 0:
				removed = append(removed, a[i])
				i++
			case c > 0:
				added = append(added, b[j])
				j++
			default:
				i++
				j++
			}
		}
	}
	return added, removed
}
