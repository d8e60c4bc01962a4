package engine

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestAfterReply(t *testing.T) {
	call := ContentBlock{Type: BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{}`)}
	for _, tc := range []struct {
		name string
		msg  AssistantMessage
		want Next
	}{
		{"text stops", AssistantMessage{Content: []ContentBlock{TextBlock("hi")}, StopReason: StopStop}, NextStop},
		{"tool calls run", AssistantMessage{Content: []ContentBlock{call}, StopReason: StopToolUse}, NextTools},
		{"a failure ends, calls or not", AssistantMessage{Content: []ContentBlock{call}, StopReason: StopError}, NextEnd},
		{"an abort ends", AssistantMessage{StopReason: StopAborted}, NextEnd},
		{"length with a call still runs it (refused by CheckToolCall)", AssistantMessage{Content: []ContentBlock{call}, StopReason: StopLength}, NextTools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AfterReply(&tc.msg); got != tc.want {
				t.Fatalf("AfterReply = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPlaceholderResult(t *testing.T) {
	for _, tc := range []struct {
		msg  AssistantMessage
		want string
	}{
		{AssistantMessage{StopReason: StopAborted, ErrorMessage: AbortedMessage}, "Tool execution was aborted: " + AbortedMessage},
		{AssistantMessage{StopReason: StopError, ErrorMessage: "boom"}, "Tool execution failed due to an error: boom"},
		{AssistantMessage{StopReason: StopError}, "Tool execution failed due to an error."},
	} {
		res := PlaceholderResult(&tc.msg)
		if !res.IsError || len(res.Content) != 1 || res.Content[0].Text != tc.want {
			t.Errorf("PlaceholderResult(%s %q) = %+v, want %q", tc.msg.StopReason, tc.msg.ErrorMessage, res, tc.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	failed := &AssistantMessage{StopReason: StopError, ErrorMessage: "overloaded"}
	base := 2 * time.Second
	for attempt, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second} {
		if got := RetryDelay(DeterministicEpoch, base, attempt, failed, nil); got != want {
			t.Errorf("attempt %d: %v, want %v", attempt, got, want)
		}
	}
	// The backend's longer delay wins; a shorter one does not.
	long := &ProviderError{Kind: ErrorRateLimit, RetryAfter: 30 * time.Second}
	if got := RetryDelay(DeterministicEpoch, base, 1, failed, long); got != 30*time.Second {
		t.Errorf("retry-after 30s: %v", got)
	}
	short := &ProviderError{Kind: ErrorRateLimit, RetryAfter: time.Second}
	if got := RetryDelay(DeterministicEpoch, base, 2, failed, short); got != 4*time.Second {
		t.Errorf("retry-after 1s on attempt 2: %v", got)
	}
	if !Retryable(failed, nil) || Retryable(&AssistantMessage{StopReason: StopError, ErrorMessage: "x"}, &ProviderError{Kind: ErrorAuth}) {
		t.Error("Retryable does not classify as retryable does")
	}
}

func TestCompactionDue(t *testing.T) {
	window := 100_000
	var s CompactionSettings
	_, _, threshold := s.Budgets(window)
	at := func(input int64) *AssistantMessage {
		return &AssistantMessage{StopReason: StopStop, Usage: Usage{Input: input, TotalTokens: input}}
	}
	for _, tc := range []struct {
		name  string
		msg   *AssistantMessage
		saved int64
		want  string
	}{
		{"under", at(threshold - 10), 0, ""},
		{"over", at(threshold + 10), 0, "threshold"},
		{"over but pruned under", at(threshold + 10), 20, ""},
		{"larger than the window", at(int64(window) + 1), 0, "overflow"},
	} {
		if got := CompactionDue(tc.msg, window, s, tc.saved); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := CompactionDue(at(1<<40), 0, s, 0); got != "" {
		t.Errorf("no window: %q", got)
	}
}

type refuseAll struct{}

func (refuseAll) Check([]byte) error            { return nil }
func (refuseAll) Validate(_, _ []byte) []string { return []string{"path: required"} }

type decideTool struct{ name string }

func (t decideTool) Name() string           { return t.name }
func (decideTool) Description() string      { return "" }
func (decideTool) Schema() []byte           { return []byte(`{"type":"object"}`) }
func (decideTool) Concurrency() Concurrency { return Shared }
func (decideTool) Run(context.Context, ToolCall, func(ToolResult)) (ToolResult, error) {
	return ToolResult{}, nil
}

func TestCheckToolCall(t *testing.T) {
	call := ContentBlock{Type: BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{}`)}
	if res := CheckToolCall(call, decideTool{"read"}, nil); res != nil {
		t.Fatalf("a good call was refused: %+v", res)
	}
	if res := CheckToolCall(call, nil, nil); res == nil || res.Content[0].Text != "Tool read not found" {
		t.Fatalf("unknown tool: %+v", res)
	}
	if res := CheckToolCall(call, decideTool{"read"}, refuseAll{}); res == nil || !strings.HasPrefix(res.Content[0].Text, `Validation failed for tool "read"`) {
		t.Fatalf("invalid arguments: %+v", res)
	}
	msg := &AssistantMessage{Content: []ContentBlock{call}, StopReason: StopLength}
	markCutCalls(msg)
	cut := msg.Content[0]
	if res := CheckToolCall(cut, decideTool{"read"}, nil); res == nil || res.Content[0].Text != CutLengthMessage {
		t.Fatalf("a call cut by length ran: %+v", res)
	}
	if CutText(cut) != CutLengthMessage || CutText(call) != "" {
		t.Fatalf("CutText: %q / %q", CutText(cut), CutText(call))
	}
}
