package openai_test

import (
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/openai"
)

// strictSchema takes every object closed and fully required; loose is
// not (an optional property).
const (
	strictOut = `{"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"],"additionalProperties":false}}},"required":["name","tags"],"additionalProperties":false}`
	looseOut  = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}`
)

func TestChatResponseFormat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		schema string
		strict bool
	}{{strictOut, true}, {looseOut, false}} {
		req := &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}}},
			Output: &engine.OutputFormat{Name: "person", Schema: []byte(c.schema)}}
		b, raw := body(t, keyed(testKey), req)
		want := `{"type":"json_schema","json_schema":{"name":"person","strict":` + map[bool]string{true: "true", false: "false"}[c.strict] + `,"schema":` + c.schema + `}}`
		sameJSON(t, "response_format", b["response_format"], want)
		// The schema goes out byte for byte, key order included.
		if !strings.Contains(string(raw.Body), `"schema":`+c.schema) {
			t.Errorf("schema reordered in %s", raw.Body)
		}
	}
	b, _ := body(t, keyed(testKey), &engine.Request{Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{text("hi")}}}})
	if v, ok := b["response_format"]; ok {
		t.Errorf("response_format without an output schema: %v", v)
	}
}

func TestResponsesTextFormat(t *testing.T) {
	t.Parallel()
	req := &engine.Request{Model: respModel(""), Output: &engine.OutputFormat{Name: "person", Schema: []byte(looseOut)}}
	b, raw := respBody(t, openai.Options{}, req)
	sameJSON(t, "text", b["text"], `{"format":{"type":"json_schema","name":"person","strict":false,"schema":`+looseOut+`}}`)
	if !strings.Contains(string(raw.Body), `"schema":`+looseOut) {
		t.Errorf("schema reordered in %s", raw.Body)
	}
}
