package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestReadConcatenatedMessages(t *testing.T) {
	in := `{"method":"echo","params":[],"id":0}{"id":0,"result":[],"error":null}` + "\n" +
		`{"method":"update","params":[null,{}],"id":null}`
	r := NewReader(strings.NewReader(in))
	m, err := r.Read()
	if err != nil || !m.IsRequest() || m.Method != "echo" {
		t.Fatalf("first: %+v %v", m, err)
	}
	m, err = r.Read()
	if err != nil || !m.IsResponse() || string(m.Result) != "[]" {
		t.Fatalf("second: %+v %v", m, err)
	}
	m, err = r.Read()
	if err != nil || !m.IsNotification() || m.Method != "update" {
		t.Fatalf("third: %+v %v", m, err)
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestReadRejectsBadShapes(t *testing.T) {
	for _, in := range []string{`[1,2]`, `{"method":1,"id":1}`, `{"method":"x","params":{},"id":1}`, `{"result":1}`, `{"id":1}`, `"str"`} {
		if _, err := NewReader(strings.NewReader(in)).Read(); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}

func TestReadTooLarge(t *testing.T) {
	big := `{"method":"echo","params":["` + strings.Repeat("x", MaxMessageSize) + `"],"id":1}`
	if _, err := NewReader(strings.NewReader(big)).Read(); err != ErrTooLarge {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
}

func TestWriteShapes(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	req, _ := NewRequest("echo", []any{}, "echo")
	note, _ := NewRequest("update3", []any{nil}, nil)
	res, _ := NewResult(json.RawMessage(`7`), []string{"a"})
	er, _ := NewError(json.RawMessage(`8`), map[string]string{"error": "unknown method"})
	for _, m := range []*Message{req, note, res, er} {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"method":"echo","params":[],"id":"echo"}` +
		`{"method":"update3","params":[null],"id":null}` +
		`{"result":["a"],"error":null,"id":7}` +
		`{"result":null,"error":{"error":"unknown method"},"id":8}`
	if buf.String() != want {
		t.Fatalf("got  %s\nwant %s", buf.String(), want)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"method":"transact","params":["Open_vSwitch",{"op":"select","table":"Bridge","where":[]}],"id":3}`))
	f.Add([]byte(`{"id":1,"result":null,"error":{"error":"x"}}`))
	f.Add([]byte(`{"method":"echo","params":null,"id":null}{"id":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		for i := 0; i < 16; i++ {
			m, err := r.Read()
			if err != nil {
				return
			}
			// Whatever we accept must re-encode and parse back the same way.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", m, err)
			}
			m2, err := Parse(b)
			if err != nil {
				t.Fatalf("re-parse %s: %v", b, err)
			}
			if m2.Method != m.Method || m2.IsRequest() != m.IsRequest() || m2.IsResponse() != m.IsResponse() {
				t.Fatalf("round trip changed %s into %s", data, b)
			}
		}
	})
}

// decoderReads is what the Reader returned when it ran every message
// through json.Decoder: the reference the framing Reader must match.
func decoderReads(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	for i := 0; i < 16; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return append(out, "error: "+err.Error())
		}
		m, err := Parse(raw)
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, describe(m))
	}
	return out
}

func describe(m *Message) string {
	return fmt.Sprintf("method=%q params=%s result=%s error=%s id=%s", m.Method, m.Params, m.Result, m.Error, m.ID)
}

func readerReads(data []byte, chunk int) []string {
	r := NewReader(&chunkReader{data: data, n: chunk})
	var out []string
	for i := 0; i < 16; i++ {
		m, err := r.Read()
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, describe(m))
	}
	return out
}

// chunkReader returns at most n bytes per Read, as a socket may.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.n, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

var streamSamples = []string{
	`{"method":"echo","params":[],"id":0} {"id":0,"result":[],"error":null}` + "\n",
	`{"method":"x","params":["a\"}{","\\"],"id":[1, {"b":2}]}`,
	`{"a" x}`, `{"a" x`, `{"method":"e"`, `{]`, `{"id":1,"result":1}]`, `[1]{"id":1}`, `"s"`, `nul`, `  `, ``,
	`{"method":"e","params":[1 2],"id":1}`, `{"id":1,"result":"<\u2028>"}` + "\t" + `{"id":2,"error":{}}`,
}

func TestReaderMatchesDecoder(t *testing.T) {
	big := `{"method":"x","params":["` + strings.Repeat("y", 100<<10) + `"],"id":1}`
	samples := append(streamSamples, big+` {"id":2,"result":3}`+big, big+big[:1000])
	for _, s := range samples {
		want := strings.Join(decoderReads([]byte(s)), "\n")
		for _, chunk := range []int{1, 3, 5000, 1 << 20} {
			if got := strings.Join(readerReads([]byte(s), chunk), "\n"); got != want {
				t.Errorf("%q in chunks of %d:\ngot  %s\nwant %s", s, chunk, got, want)
			}
		}
	}
}

func FuzzReaderMatchesDecoder(f *testing.F) {
	for _, s := range streamSamples {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		want := strings.Join(decoderReads(data), "\n")
		if got := strings.Join(readerReads(data, int(chunk)+1), "\n"); got != want {
			t.Fatalf("%q in chunks of %d:\ngot  %s\nwant %s", data, int(chunk)+1, got, want)
		}
	})
}
