package jsonrpc

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The same input read whole, a line at a time and two bytes at a time
// gives the same lines (as test2json's golden test does).
func TestReaderFraming(t *testing.T) {
	t.Parallel()
	input := "one\r\n\n  \ntwo\n" + strings.Repeat("x", 40) + "\nthree"
	want := []string{"one", "two", "<too long>", "three"}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(input),
		"lines":    iotest.OneByteReader(strings.NewReader(input)),
		"twobytes": &chunks{data: []byte(input), n: 2},
	} {
		lr := NewReader(r, 32)
		var got []string
		for {
			line, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err == ErrLineTooLong {
				got = append(got, "<too long>")
				continue
			}
			if err != nil {
				t.Fatal(name, err)
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q", name, got)
		}
	}
}

type chunks struct {
	data []byte
	n    int
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(c.n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	lines := [][]byte{
		AppendRequest(nil, 7, "tool_call", []byte(`{"a":1}`)),
		AppendNotification(nil, "agent_end", nil),
		AppendResult(nil, []byte(`"x"`), nil),
		AppendError(nil, []byte(`3`), CodeStaleSession, `stale "s"`),
	}
	want := []string{
		`{"jsonrpc":"2.0","id":7,"method":"tool_call","params":{"a":1}}`,
		`{"jsonrpc":"2.0","method":"agent_end"}`,
		`{"jsonrpc":"2.0","id":"x","result":null}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"stale \"s\""}}`,
	}
	for i, l := range lines {
		if got := string(bytes.TrimSuffix(l, []byte("\n"))); got != want[i] {
			t.Errorf("%d: %s", i, got)
		}
		m, err := Decode(bytes.TrimSpace(l))
		if err != nil {
			t.Fatal(err)
		}
		kinds := []bool{m.IsRequest(), m.IsNotification(), m.IsResponse() && m.Error == nil, m.IsResponse() && m.Error != nil}
		if !kinds[i] {
			t.Errorf("%d: wrong kind %+v", i, m)
		}
	}
	for _, bad := range []string{`[1]`, `{"jsonrpc":"1.0","method":"x"}`, `{"jsonrpc":"2.0"}`, `nope`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}
