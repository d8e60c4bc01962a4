package engine

import "testing"

// A tool call's signature (Gemini's thought signature of a function call
// part) becomes the block's thoughtSignature, which the next request sends
// back; a call without one has none.
func TestReplyToolCallSignature(t *testing.T) {
	t.Parallel()
	r := NewReply(AssistantMessage{}, ModelCost{})
	emit := func(Event) {}
	for _, ev := range []StreamEvent{
		{Kind: StreamToolCallStart, ToolCallID: "c1", ToolName: "read"},
		{Kind: StreamToolCallEnd, ToolCallID: "c1", ToolName: "read", Arguments: []byte(`{"path":"a"}`), Signature: "CiQB"},
		{Kind: StreamToolCallStart, ToolCallID: "c2", ToolName: "ls"},
		{Kind: StreamToolCallEnd, ToolCallID: "c2", ToolName: "ls", Arguments: []byte(`{}`)},
		{Kind: StreamDone, StopReason: StopToolUse},
	} {
		r.Apply(ev, emit)
	}
	msg := r.Finish(false, false, nil)
	if len(msg.Content) != 2 || msg.Content[0].ThoughtSignature != "CiQB" || msg.Content[1].ThoughtSignature != "" {
		t.Fatalf("content %+v", msg.Content)
	}
	if got := string(msg.Content[0].AppendJSON(nil)); got != `{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"},"thoughtSignature":"CiQB"}` {
		t.Errorf("encoded %s", got)
	}
}
