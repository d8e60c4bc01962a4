package fakeprovider

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// demoGreeting starts every plain demo reply.
const demoGreeting = "Hello! I am the xcsh demo model."

// maxToolLine is how many runes of a tool result's first line the demo quotes.
const maxToolLine = 80

// Demo returns the built-in demo provider (model id "demo"). It needs no
// script: it answers the last message of the request. A user message may
// start with a command (demo:think, demo:error, demo:block, demo:tool,
// demo:echo); any
// other text is echoed, a tool result is summarised, anything else is
// greeted. See docs/fakeprovider.md.
func Demo() *Provider {
	return &Provider{model: defaultModel("demo")}
}

// demo answers call n. Every reply ends with a usage event and StreamDone.
func (p *Provider) demo(e *emitter, n int, req *engine.Request) error {
	var last engine.Message
	if k := len(req.Messages); k > 0 {
		last = req.Messages[k-1]
	}
	stop := engine.StopStop
	var err error
	switch m := last.(type) {
	case *engine.UserMessage:
		stop, err = demoCommand(e, n, commandText(m), req)
	case *engine.ToolResultMessage:
		err = e.text(toolReply(m))
	default:
		err = e.text(demoGreeting)
	}
	if err != nil {
		return err
	}
	u := engine.Usage{Input: int64(contextRunes(req.Messages) / 4), Output: int64(e.runes / 4)}
	u.TotalTokens = u.Input + u.Output
	if err := e.emit(engine.StreamEvent{Kind: engine.StreamUsage, Usage: u}); err != nil {
		return err
	}
	return e.emit(engine.StreamEvent{Kind: engine.StreamDone, StopReason: stop})
}

// demoCommand answers a user message and returns the stop reason.
func demoCommand(e *emitter, n int, text string, req *engine.Request) (engine.StopReason, error) {
	cmd, arg := cutSpace(text)
	switch cmd {
	case "demo:think":
		err := e.block(engine.StreamThinkingStart, engine.StreamThinkingDelta, engine.StreamThinkingEnd,
			splitWords("Thinking about: "+arg), 1, "")
		if err == nil {
			err = e.text("You asked me to think about: " + arg)
		}
		return engine.StopStop, err
	case "demo:error":
		if err := e.ctx.Err(); err != nil {
			return "", err
		}
		status, msg := 0, arg
		if first, rest := cutSpace(arg); first != "" {
			if s, err := strconv.Atoi(first); err == nil && s >= 0 {
				status, msg = s, rest
			}
		}
		if msg == "" {
			msg = "demo error"
		}
		return "", scriptError(status, msg, 0)
	case "demo:block":
		if err := e.emit(engine.StreamEvent{Kind: engine.StreamTextStart}); err != nil {
			return "", err
		}
		for _, d := range splitWords("Working on it") {
			if err := e.emit(engine.StreamEvent{Kind: engine.StreamTextDelta, Delta: d}); err != nil {
				return "", err
			}
		}
		return "", e.wait()
	case "demo:echo":
		if !knownEcho(arg) {
			return "", &engine.ProviderError{Message: "demo: usage: demo:echo " + strings.Join(echoParts, "|")}
		}
		return engine.StopStop, e.whole(echoText(req, arg))
	case "demo:tool":
		name, raw := cutSpace(arg)
		if name == "" {
			return "", &engine.ProviderError{Message: "demo: usage: demo:tool <name> [<json-args>]"}
		}
		if raw == "" {
			raw = "{}"
		}
		args, err := compact([]byte(raw))
		if err == nil && jsonKind(args) != "an object" {
			err = fmt.Errorf("want a JSON object, got %s", jsonKind(args))
		}
		if err != nil {
			return "", &engine.ProviderError{Message: "demo: invalid tool arguments: " + err.Error()}
		}
		id := fmt.Sprintf("call_demo_%d", n)
		return engine.StopToolUse, e.toolCall(id, name, splitBytes(string(args), argPiece), args)
	}
	return engine.StopStop, e.text(demoGreeting + " You said: " + text)
}

// commandText returns the text of the newest user message that a demo
// command is read from. The engine merges consecutive text-only user
// messages before a model call (engine.ConvertToLLM), so after an RPC bash
// the prompt is the last text block behind the bash context: a command
// there wins. Otherwise the whole text is read, which an echo repeats.
func commandText(m *engine.UserMessage) string {
	for i := len(m.Content) - 1; i >= 0; i-- {
		if b := m.Content[i]; b.Type == engine.BlockText {
			if cmd, _ := cutSpace(b.Text); isDemoCommand(cmd) {
				return b.Text
			}
			break
		}
	}
	return m.Text()
}

// isDemoCommand reports whether word is one of the commands demoCommand
// knows.
func isDemoCommand(word string) bool {
	switch word {
	case "demo:think", "demo:error", "demo:block", "demo:tool", "demo:echo":
		return true
	}
	return false
}

// toolReply summarises a tool result by the first line of its text.
func toolReply(m *engine.ToolResultMessage) string {
	line, _, _ := strings.Cut(blockText(m.Content), "\n")
	if utf8.RuneCountInString(line) > maxToolLine {
		line = cutRunes(line, maxToolLine) + "…"
	}
	if line == "" {
		line = "(no output)"
	}
	verb := "returned"
	if m.IsError {
		verb = "failed"
	}
	return fmt.Sprintf("Tool %s %s: %s", m.ToolName, verb, line)
}

// contextRunes counts the text of the context: text blocks of user,
// assistant and tool-result messages, and a bash execution's command and
// output.
func contextRunes(msgs []engine.Message) int {
	n := 0
	for _, m := range msgs {
		switch v := m.(type) {
		case *engine.UserMessage:
			n += utf8.RuneCountInString(blockText(v.Content))
		case *engine.AssistantMessage:
			n += utf8.RuneCountInString(blockText(v.Content))
		case *engine.ToolResultMessage:
			n += utf8.RuneCountInString(blockText(v.Content))
		case *engine.BashExecutionMessage:
			n += utf8.RuneCountInString(v.Command) + utf8.RuneCountInString(v.Output)
		}
	}
	return n
}

// blockText concatenates the text blocks.
func blockText(blocks []engine.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Type == engine.BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// cutSpace splits s at its first run of white space, after trimming it:
// "demo:tool  read {}" gives "demo:tool" and "read {}".
func cutSpace(s string) (head, tail string) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// text sends one text block streamed in word chunks.
func (e *emitter) text(s string) error {
	return e.block(engine.StreamTextStart, engine.StreamTextDelta, engine.StreamTextEnd, splitWords(s), 1, "")
}
