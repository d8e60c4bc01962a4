package jsonrpc

import (
	"bytes"
	"testing"
)

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
