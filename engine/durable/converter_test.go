package durable

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The converter leaves <, > and & alone, in raw JSON too, and reads back
// what it wrote.
func TestDataConverterKeepsHTMLCharacters(t *testing.T) {
	in := ToolInput{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"a < b && c > d"}`)}
	p, err := DataConverter().ToPayload(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p.GetData(), []byte(`"a < b && c > d"`)) {
		t.Fatalf("payload %s", p.GetData())
	}
	var out ToolInput
	if err := DataConverter().FromPayload(p, &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Arguments) != string(in.Arguments) {
		t.Fatalf("read back %s", out.Arguments)
	}
}
