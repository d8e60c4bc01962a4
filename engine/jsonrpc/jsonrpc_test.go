package jsonrpc

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	req, err := Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"tool_call","params":{"a":1}}`))
	if r, ok := req.(*Request); err != nil || !ok || !r.IsCall() || string(r.ID) != "7" || r.Method != "tool_call" || string(r.Params) != `{"a":1}` {
		t.Fatalf("request: %#v %v", req, err)
	}
	note, err := Decode([]byte(`{"jsonrpc":"2.0","id":null,"method":"agent_end"}`))
	if r, ok := note.(*Request); err != nil || !ok || r.IsCall() {
		t.Fatalf("an id of null is none: %#v %v", note, err)
	}
	resp, err := Decode([]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"stale"}}`))
	if r, ok := resp.(*Response); err != nil || !ok || string(r.ID) != "3" || r.Error == nil || r.Error.Code != CodeStaleSession {
		t.Fatalf("response: %#v %v", resp, err)
	}
	for _, bad := range []string{`[1]`, `{"jsonrpc":"1.0","method":"x"}`, `{"method":"x"}`, `{"jsonrpc":"2.0"}`, `nope`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// A decoded message owns its fields: the scratch Decode reuses never
// shows through (the pool is reset, and RawMessage copies).
func TestDecodedMessagesDoNotAlias(t *testing.T) {
	t.Parallel()
	a, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":"first"}}`))
	b, _ := Decode([]byte(`{"jsonrpc":"2.0","id":2,"method":"b","params":{"y":"second"}}`))
	if string(a.(*Request).Params) != `{"x":"first"}` || string(b.(*Request).Params) != `{"y":"second"}` {
		t.Fatalf("aliased: %s %s", a.(*Request).Params, b.(*Request).Params)
	}
}

func TestAppendNotification(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method string
		params []byte
		want   string
	}{
		{"agent_end", nil, `{"jsonrpc":"2.0","method":"agent_end"}`},
		{"ui.notify", []byte(`{"a":1}`), `{"jsonrpc":"2.0","method":"ui.notify","params":{"a":1}}`},
		{"a\"b\n", nil, `{"jsonrpc":"2.0","method":"a\"b\n"}`},
	} {
		got := string(AppendNotification(nil, c.method, c.params))
		if !strings.HasSuffix(got, "\n") || strings.TrimSuffix(got, "\n") != c.want {
			t.Errorf("%q: %s", c.method, got)
		}
	}
}
