package tools

import (
	"context"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

type askTool struct {
	spec
}

// NewAsk returns the ask tool: a question for the user, with options
// (select), free text (input) or a longer answer (editor). It exists only
// when the host has a UI to show it.
func NewAsk(o Options) engine.Tool {
	return &askTool{spec: spec{
		name: "ask",
		description: "Ask the user a question and wait for the answer. Give options to let them pick one, " +
			"or set multiline for a longer answer; otherwise they type a short reply. Use it when you cannot " +
			"proceed without their decision, not for things you can find out yourself.",
		schema: []byte(`{"type":"object","properties":{` +
			`"question":{"type":"string","description":"The question, shown as the dialog's title"},` +
			`"options":{"type":"array","items":{"type":"string"},"minItems":1,"description":"Answers to choose from"},` +
			`"multiline":{"type":"boolean","description":"Ask for a longer, multi-line answer"},` +
			`"placeholder":{"type":"string","description":"Hint shown in an empty short answer"},` +
			`"prefill":{"type":"string","description":"Initial text of a multi-line answer"}` +
			`},"required":["question"],"additionalProperties":false}`),
		concurrency: engine.Exclusive, // one question at a time
	}}
}

type askArgs struct {
	Question    string   `json:"question"`
	Options     []string `json:"options"`
	Multiline   bool     `json:"multiline"`
	Placeholder string   `json:"placeholder"`
	Prefill     string   `json:"prefill"`
}

// QuestionsFirst says the question comes before anything else the call
// does (it does nothing else): a durable session may stop the call at its
// question and run it again with the answer (engine/durable, dialogs.go).
func (t *askTool) QuestionsFirst() bool { return true }

// Run implements engine.Tool.
func (t *askTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a askArgs
	if res, ok := decodeArgs("ask", call.Arguments, &a); !ok {
		return res, nil
	}
	if strings.TrimSpace(a.Question) == "" {
		return failResult("The question must not be empty."), nil
	}
	req := engine.DialogRequest{Method: engine.DialogInput, Title: a.Question, Placeholder: a.Placeholder}
	switch {
	case len(a.Options) > 0:
		req = engine.DialogRequest{Method: engine.DialogSelect, Title: a.Question, Options: a.Options}
	case a.Multiline:
		req = engine.DialogRequest{Method: engine.DialogEditor, Title: a.Question, Prefill: a.Prefill}
	}
	if call.UI == nil {
		return failResult("No user interface is available to ask the question."), nil
	}
	reply, err := call.UI.Dialog(ctx, req)
	if err != nil {
		return engine.ToolResult{}, err
	}
	if reply.Cancelled || !reply.HasValue {
		return failResult("The user dismissed the question without answering."), nil
	}
	return textResult(reply.Value, mustJSON(struct {
		Kind   string `json:"kind"`
		Answer string `json:"answer"`
	}{req.Method, reply.Value})), nil
}
