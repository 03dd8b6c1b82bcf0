package fastjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var samples = []string{
	`null`, `true`, `false`, `0`, `-0`, `12`, `-3.5e+10`, `1E5`, `0.25`, ` 7 `,
	`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\ud83d\ude00"`, `"\ud800"`, `"é ü 日本"`,
	"\"bad \xff utf8\"", `"<&>"`, "\"\u2028\u2029\"",
	`[]`, `{}`, `[1,"x",[true,null],{"a":[]}]`, `{"b":1,"a":2,"a":3}`,
	` { "op" : "wait" , "rows" : [ { "ports" : [ "set" , [ [ "uuid" , "2a1d96b1-08fb-4bd7-a258-81beaaadbe3f" ] ] ] } ] } `,
	// Invalid: every one must be refused.
	``, ` `, `nul`, `tru`, `01`, `-`, `1.`, `.5`, `1e`, `+1`, `[1,]`, `{"a"}`, `{"a":1,}`, `{a:1}`,
	`[1 2]`, `"unterminated`, "\"ctl \x01\"", `"\x"`, `"\u12"`, `[`, `]`, `1 2`, `{"a":1}}`, `'x'`,
}

func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	if _, err := dec.Token(); err == nil {
		return nil, errTrailing
	}
	return v, nil
}

var errTrailing = &json.SyntaxError{}

// checkSame fails unless Decode, SplitArray, SplitObject and AppendValue
// agree with encoding/json on data.
func checkSame(t *testing.T, data []byte) {
	wantCompact, cerr := json.Marshal(json.RawMessage(data))
	gotCompact, err := AppendCompact(nil, data)
	if (err == nil) != (cerr == nil) || !bytes.Equal(gotCompact, wantCompact) {
		t.Fatalf("AppendCompact(%q) = %s, %v; want %s, %v", data, gotCompact, err, wantCompact, cerr)
	}
	want, werr := stdDecode(data)
	if werr == nil && !json.Valid(data) {
		werr = errTrailing
	}
	got, ok := Decode(data)
	if ok != (werr == nil) {
		t.Fatalf("Decode(%q): ok=%v, encoding/json err=%v", data, ok, werr)
	}
	if !ok {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q) = %#v, want %#v", data, got, want)
	}
	wantBytes, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gotBytes, err := Marshal(got)
	if err != nil || !bytes.Equal(gotBytes, wantBytes) {
		t.Fatalf("Marshal(%#v) = %s, %v; want %s", got, gotBytes, err, wantBytes)
	}
	first := bytes.TrimLeft(data, " \t\r\n")
	var wantElems []json.RawMessage
	elems, ok := SplitArray(data)
	if first[0] != '[' {
		if ok {
			t.Fatalf("SplitArray(%q) accepted a non-array", data)
		}
	} else if werr := json.Unmarshal(data, &wantElems); (werr == nil) != ok {
		t.Fatalf("SplitArray(%q): ok=%v, encoding/json err=%v", data, ok, werr)
	} else if ok {
		if len(elems) != len(wantElems) {
			t.Fatalf("SplitArray(%q): %d elements, want %d", data, len(elems), len(wantElems))
		}
		for i := range elems {
			if !bytes.Equal(elems[i], wantElems[i]) {
				t.Fatalf("SplitArray(%q)[%d] = %q, want %q", data, i, elems[i], wantElems[i])
			}
		}
	}
	var wantMembers map[string]json.RawMessage
	members, ok := SplitObject(data)
	if first[0] != '{' {
		if ok {
			t.Fatalf("SplitObject(%q) accepted a non-object", data)
		}
	} else if werr := json.Unmarshal(data, &wantMembers); (werr == nil) != ok {
		t.Fatalf("SplitObject(%q): ok=%v, encoding/json err=%v", data, ok, werr)
	} else if ok {
		if len(members) != len(wantMembers) {
			t.Fatalf("SplitObject(%q): %d members, want %d", data, len(members), len(wantMembers))
		}
		for k, v := range wantMembers {
			if !bytes.Equal(members[k], v) {
				t.Fatalf("SplitObject(%q)[%q] = %q, want %q", data, k, members[k], v)
			}
		}
	}
}

func TestSameAsEncodingJSON(t *testing.T) {
	for _, s := range samples {
		checkSame(t, []byte(s))
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "x", "<a href=\"&\">", "\x00\x1f\x7f", "\xff\xfe", "é\u2028\u2029", "tab\there"} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestMarshalOtherTypes(t *testing.T) {
	for _, v := range []any{
		int64(-5), 42, json.Number(""), []any(nil), map[string]any(nil),
		map[string]any{"z": 1.5, "a": json.RawMessage(` [ 1 , "<" ] `)},
	} {
		want, _ := json.Marshal(v)
		got, err := Marshal(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Marshal(%#v) = %s, %v; want %s", v, got, err, want)
		}
	}
	if _, err := Marshal(json.Number("1x")); err == nil {
		t.Error("Marshal accepted an invalid json.Number")
	}
}

func FuzzSameAsEncodingJSON(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkSame(t, data) })
}

func BenchmarkDecode(b *testing.B) {
	data := []byte(samples[22])
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, ok := Decode(data); !ok {
			b.Fatal("not decoded")
		}
	}
}

func TestAppendCompact(t *testing.T) {
	for _, s := range append(samples, ` [ "a <b> & c" , { "k" : "\u2028`+"\u2028\u2029"+`" } ] `) {
		want, werr := json.Marshal(json.RawMessage(s))
		got, err := AppendCompact(nil, []byte(s))
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Errorf("AppendCompact(%q) = %s, %v; want %s, %v", s, got, err, want, werr)
		}
	}
}

// A Decoder reused after good and bad input decodes as a fresh one.
func TestDecoderReuse(t *testing.T) {
	var d Decoder
	for round := 0; round < 2; round++ {
		for _, s := range samples {
			got, gotOK := d.Decode([]byte(s))
			want, wantOK := Decode([]byte(s))
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("reused Decoder on %q: %#v %v, want %#v %v", s, got, gotOK, want, wantOK)
			}
		}
	}
}
