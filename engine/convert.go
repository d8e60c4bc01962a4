package engine

import (
	"fmt"
	"strings"
)

// ConvertToLLM turns the agent context into the messages a provider sees
// (agent-core.md §1.5): LLM roles pass through, a bashExecution becomes a
// user message describing the command and its output, and consecutive
// text-only user messages are merged.
func ConvertToLLM(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch v := m.(type) {
		case *BashExecutionMessage:
			if v.ExcludeFromContext {
				continue
			}
			out = append(out, &UserMessage{Content: []ContentBlock{TextBlock(bashContextText(v))}, Attribution: "user", Timestamp: v.Timestamp})
		default:
			out = append(out, m)
		}
	}
	return mergeUserText(out)
}

func bashContextText(m *BashExecutionMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ran `%s`\n", m.Command)
	if m.Output == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString("```\n")
		b.WriteString(strings.TrimRight(m.Output, "\n"))
		b.WriteString("\n```")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		fmt.Fprintf(&b, "\n\nCommand exited with code %d", *m.ExitCode)
	}
	return b.String()
}

func textOnly(u *UserMessage) bool {
	for _, b := range u.Content {
		if b.Type != BlockText {
			return false
		}
	}
	return true
}

func mergeUserText(msgs []Message) []Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		u, ok := m.(*UserMessage)
		if ok && len(out) > 0 && textOnly(u) {
			if prev, ok := out[len(out)-1].(*UserMessage); ok && textOnly(prev) {
				merged := *prev
				merged.Content = append(append([]ContentBlock(nil), prev.Content...), u.Content...)
				out[len(out)-1] = &merged
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
