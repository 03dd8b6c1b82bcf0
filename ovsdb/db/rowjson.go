package db

// RowJSON returns the row as a JSON <row> object: column name to DatumJSON.
// cols nil means all user columns; include the pseudo columns "_uuid" and
// "_version" by passing columns from Table.ColumnsByName or Table.Column.
func (t *Table) RowJSON(row *Row, cols []*Column) map[string]any {
	if cols == nil {
		cols = t.Columns
	}
	out := make(map[string]any, len(cols))
	for _, c := range cols {
		out[c.Name] = DatumJSON(row.Datum(c), &c.Type)
	}
	return out
}
