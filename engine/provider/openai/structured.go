package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/xcsh-go/xcsh/engine"
)

// Native structured output: a request whose prompt asked for an output
// schema (engine.Request.Output) carries it as the chat API's
// response_format and the Responses API's text.format, json_schema both.
// The schema goes out byte for byte. strict is set when OpenAI's strict
// mode takes the schema (strictSchema); a schema it would refuse goes
// with strict false, the model following it as best it can, and the
// engine checks the answer either way.

// chatResponseFormat sets p.ResponseFormat from req.Output.
func chatResponseFormat(req *engine.Request, p *sdk.ChatCompletionNewParams) {
	o := req.Output
	if o == nil {
		return
	}
	p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: o.Name, Strict: param.NewOpt(strictSchema(o.Schema)),
			Schema: json.RawMessage(o.Schema)}}}
}

// responsesTextFormat sets p.Text.Format from req.Output.
func responsesTextFormat(req *engine.Request, p *responses.ResponseNewParams) {
	o := req.Output
	if o == nil {
		return
	}
	f := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: o.Name, Strict: param.NewOpt(strictSchema(o.Schema))}
	// Schema is a map, which would reorder the schema's keys.
	f.SetExtraFields(map[string]any{"schema": json.RawMessage(o.Schema)})
	p.Text.Format = responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: f}
}

// strictSchema reports whether OpenAI's strict structured outputs take
// schema: every object schema in it lists all its properties as required
// and forbids any other (additionalProperties false).
func strictSchema(schema []byte) bool {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return false
	}
	return strictNode(v)
}

func strictNode(v any) bool {
	switch n := v.(type) {
	case []any:
		for _, e := range n {
			if !strictNode(e) {
				return false
			}
		}
		return true
	case map[string]any:
		props, hasProps := n["properties"].(map[string]any)
		if n["type"] == "object" || hasProps {
			if n["additionalProperties"] != false {
				return false
			}
			req := map[string]bool{}
			list, _ := n["required"].([]any)
			for _, r := range list {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
			for k := range props {
				if !req[k] {
					return false
				}
			}
		}
		for _, k := range []string{"items", "prefixItems", "anyOf", "allOf", "oneOf", "not"} {
			if c, ok := n[k]; ok && !strictNode(c) {
				return false
			}
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			if m, ok := n[k].(map[string]any); ok {
				for _, c := range m {
					if !strictNode(c) {
						return false
					}
				}
			}
		}
		return true
	}
	return true
}
