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
		case *PythonExecutionMessage:
			if v.ExcludeFromContext != nil && *v.ExcludeFromContext {
				continue
			}
			out = append(out, agentText(pythonContextText(v), v.Timestamp, "user"))
		case *CustomMessage:
			out = append(out, &UserMessage{Content: v.Content, Attribution: v.Attribution, Timestamp: v.Timestamp})
		case *BranchSummaryMessage:
			out = append(out, agentText(branchSummaryPreamble+"<summary>\n"+v.Summary+"\n</summary>", v.Timestamp, "agent"))
		case *CompactionSummaryMessage:
			u := agentText(compactionSummaryPreamble+"<summary>\n"+v.Summary+"\n</summary>", v.Timestamp, "agent")
			u.ProviderPayload = v.ProviderPayload
			out = append(out, u)
		case *FileMentionMessage:
			out = append(out, fileMentionMessage(v))
		case *ToolResultMessage:
			out = append(out, prunedResult(v))
		case *OpaqueMessage:
			// A role written by a newer agent: kept in the record, but no
			// provider could read it.
		default:
			out = append(out, m)
		}
	}
	return mergeUserText(out)
}

// The preambles of summaries in the model's context (agent-core §1.5).
const (
	branchSummaryPreamble     = "The following is a summary of a branch that this conversation came back from:\n"
	compactionSummaryPreamble = "Another model worked on this conversation before you and summarised its work below. " +
		"The state of files and tools it describes is real and available to you; do not redo work it reports as done.\n"
)

func agentText(text string, ts int64, attribution string) *UserMessage {
	return &UserMessage{Content: []ContentBlock{TextBlock(text)}, Attribution: attribution, Timestamp: ts}
}

func pythonContextText(m *PythonExecutionMessage) string {
	var b strings.Builder
	b.WriteString("Ran Python:\n```python\n")
	b.WriteString(strings.TrimRight(m.Code, "\n"))
	b.WriteString("\n```\n")
	if m.Output == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString("Output:\n```\n")
		b.WriteString(strings.TrimRight(m.Output, "\n"))
		b.WriteString("\n```")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(execution cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		fmt.Fprintf(&b, "\n\nExecution failed with code %d", *m.ExitCode)
	}
	return b.String()
}

// fileMentionMessage wraps the mentioned files in a system reminder, with
// their images after it.
func fileMentionMessage(m *FileMentionMessage) *UserMessage {
	parts := make([]string, 0, len(m.Files))
	var images []ContentBlock
	for _, f := range m.Files {
		parts = append(parts, fmt.Sprintf("<file path=%q>\n%s\n</file>", f.Path, f.Content))
		if f.Image != nil {
			images = append(images, *f.Image)
		}
	}
	content := []ContentBlock{TextBlock("<system-reminder>\n" + strings.Join(parts, "\n\n") + "\n</system-reminder>")}
	return &UserMessage{Content: append(content, images...), Attribution: "user", Timestamp: m.Timestamp}
}

// prunedResult replaces a pruned tool result's content with its text (or a
// notice), as the original sends it.
func prunedResult(m *ToolResultMessage) Message {
	if m.PrunedAt == 0 {
		return m
	}
	var texts []string
	for _, b := range m.Content {
		if b.Type == BlockText {
			texts = append(texts, b.Text)
		}
	}
	text := strings.Join(texts, "")
	if text == "" {
		text = "[Output truncated]"
	}
	c := *m
	c.Content = []ContentBlock{TextBlock(text)}
	return &c
}

func bashContextText(m *BashExecutionMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ran `%s`\n", m.Command)
	if m.Output == "" {
		b.WriteString("(no output)")
	} else {
		// The output as it is, trailing newline included, as the family
		// writes it.
		b.WriteString("```\n")
		b.WriteString(m.Output)
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
