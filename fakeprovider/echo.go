package fakeprovider

import (
	"fmt"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// What an echo step (and demo:echo) can answer with: a part of the
// request the provider received, so a user can see what the agent sends
// a model (the system prompt with its context files, skills and rules,
// the tools, the context) without an echo server of their own.
const (
	echoSystemPrompt = "systemPrompt"
	echoTools        = "tools"
	echoLastUserText = "lastUserText"
	echoContext      = "context"
	echoOutputSchema = "outputSchema"
)

// echoParts lists the parts an echo can show, in the order the docs give.
var echoParts = []string{echoSystemPrompt, echoTools, echoLastUserText, echoContext, echoOutputSchema}

// knownEcho reports whether part names something echoText can show.
func knownEcho(part string) bool {
	for _, p := range echoParts {
		if p == part {
			return true
		}
	}
	return false
}

// echoText renders a part of req as the text a reply carries: the system
// prompt as sent; the offered tools' names, one a line; the last user
// message's text; the context, one message after another, each headed
// by its role (a tool result also by its tool); or the output schema the
// request asks for natively, "<name> <schema>". An empty part is
// "(empty)", so the reply is never blank.
func echoText(req *engine.Request, part string) string {
	var out string
	switch part {
	case echoSystemPrompt:
		out = req.SystemPrompt
	case echoTools:
		names := make([]string, 0, len(req.Tools))
		for _, t := range req.Tools {
			names = append(names, t.Name)
		}
		out = strings.Join(names, "\n")
	case echoLastUserText:
		out, _ = lastUserText(req.Messages)
	case echoContext:
		var b strings.Builder
		for i, m := range req.Messages {
			if i > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(messageEcho(m))
		}
		out = b.String()
	case echoOutputSchema:
		if o := req.Output; o != nil {
			out = o.Name + " " + string(o.Schema)
		}
	}
	if strings.TrimSpace(out) == "" {
		return "(empty)"
	}
	return out
}

// messageEcho is one message of an echoed context: "[role]" (a tool
// result "[toolResult name]", a failed one "[toolResult name: error]")
// on its own line, then its text.
func messageEcho(m engine.Message) string {
	switch v := m.(type) {
	case *engine.UserMessage:
		return "[user]\n" + blockText(v.Content)
	case *engine.AssistantMessage:
		var b strings.Builder
		b.WriteString("[assistant]\n")
		b.WriteString(blockText(v.Content))
		for _, tc := range v.ToolCalls() {
			fmt.Fprintf(&b, "\n(tool call %s %s)", tc.Name, tc.Arguments)
		}
		return b.String()
	case *engine.ToolResultMessage:
		head := "[toolResult " + v.ToolName
		if v.IsError {
			head += ": error"
		}
		return head + "]\n" + blockText(v.Content)
	case *engine.BashExecutionMessage:
		return "[bashExecution]\n$ " + v.Command + "\n" + v.Output
	}
	return "[" + m.Role() + "]"
}
