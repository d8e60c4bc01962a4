package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// CompactContext makes the summary a Session's compaction makes of the
// same messages (TestManualCompaction's), and the context a Session
// derives: the summary message, then the kept messages. Compacted again,
// the earlier summary is merged in.
func TestCompactContext(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400)
	p := &summaryProvider{texts: []string{"## Goal\nparse", "I parsed.", "## Goal\nparse again", "Again."}}
	c := ContextCompaction{Provider: p, Model: Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: 800, MaxTokens: 30000},
		Clock: DeterministicEpoch, RetryBase: 1}
	msgs := []Message{user("q1 " + x), toolCall("write", `{"path":"out.txt"}`), result("ok"), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)}
	res, out, err := CompactContext(context.Background(), c, msgs, "threshold")
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != "## Goal\nparse\n\n<modified-files>\nout.txt\n</modified-files>" || res.ShortSummary != "I parsed." || res.FirstKeptEntryID != "00000005" {
		t.Fatalf("result %s", res.AppendJSON(nil))
	}
	if len(out) != 3 || out[1] != msgs[4] || out[2] != msgs[5] {
		t.Fatalf("context %d messages", len(out))
	}
	cs, ok := out[0].(*CompactionSummaryMessage)
	if !ok || cs.Summary != res.Summary || cs.ShortSummary != "I parsed." || cs.Timestamp != DeterministicEpoch.NowMillis() {
		t.Fatalf("head %#v", out[0])
	}
	more := append(append([]Message{}, out...), user("q3 "+x), reply("a3 "+x))
	res, out, err = CompactContext(context.Background(), c, more, "threshold")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastUserText(p.reqs[2]), "## Goal\nparse") || res.Summary == "" {
		t.Errorf("the second summary does not start from the first:\n%s", lastUserText(p.reqs[2]))
	}
	if _, ok := out[0].(*CompactionSummaryMessage); !ok || out[len(out)-1] != more[len(more)-1] {
		t.Errorf("second context %#v", out)
	}
}

// By hand: a context with nothing after what the latest compaction kept
// is already compacted, as a branch that ends in its compaction entry;
// with more, the summary carries the custom instructions.
func TestCompactContextManual(t *testing.T) {
	t.Parallel()
	x := strings.Repeat("x", 400)
	p := &summaryProvider{texts: []string{"## Goal\nparse", "I parsed.", "## Goal\nlexer", "Lexed."}}
	c := ContextCompaction{Provider: p, Model: Model{ID: "m", API: "fake", Provider: "fake", ContextWindow: 800, MaxTokens: 30000},
		Clock: DeterministicEpoch, RetryBase: 1}
	msgs := []Message{user("q1 " + x), reply("a1 " + x), user("q2 " + x), reply("a2 " + x)}
	_, out, err := CompactContext(context.Background(), c, msgs, "manual")
	if err != nil {
		t.Fatal(err)
	}
	c.Kept = len(out) - 1
	if _, _, err := CompactContext(context.Background(), c, out, "manual"); !errors.Is(err, ErrAlreadyCompacted) {
		t.Fatalf("compacted again with nothing new: %v, want %v", err, ErrAlreadyCompacted)
	}
	c.CustomInstructions = "the lexer"
	more := append(append([]Message{}, out...), user("q3 "+x), reply("a3 "+x))
	res, _, err := CompactContext(context.Background(), c, more, "manual")
	if err != nil {
		t.Fatal(err)
	}
	first := lastUserText(p.reqs[2])
	if !strings.Contains(first, "## Goal\nparse") || !strings.HasSuffix(first, "\n\nAdditional focus: the lexer") || res.Summary != "## Goal\nlexer" {
		t.Fatalf("summary request:\n%s\nresult %s", first, res.AppendJSON(nil))
	}
}

// The decisions the durable session shares: the check before a prompt
// and the overflow recovery after a run.
func TestPromptCompactionDueAndOverflowRecoverable(t *testing.T) {
	t.Parallel()
	cur := Model{ID: "m", Provider: "fake", ContextWindow: 2000} // threshold 1000
	over := &AssistantMessage{Provider: "fake", Model: "m", StopReason: StopError, ErrorMessage: "prompt is too long: 2400 tokens > 2000 maximum"}
	other := &AssistantMessage{Provider: "fake", Model: "m", StopReason: StopError, ErrorMessage: "overloaded"}
	big := &AssistantMessage{Provider: "fake", Model: "m", StopReason: StopStop, Usage: Usage{Input: 1400, Output: 100}}
	silent := &AssistantMessage{Provider: "fake", Model: "m", StopReason: StopStop, Usage: Usage{Input: 2100, Output: 10}}
	small := &AssistantMessage{Provider: "fake", Model: "m", StopReason: StopAborted, Usage: Usage{Input: 400, Output: 10}}
	none := func() int64 { return 0 }
	for _, tc := range []struct {
		name      string
		last      *AssistantMessage
		inContext bool
		saved     func() int64
		reason    string
		grow      int64
	}{
		{"none", nil, false, nil, "", 0},
		{"overflow in context", over, true, nil, "overflow", 0},
		{"overflow recovered before", over, false, nil, "", 0},
		{"other failure", other, true, nil, "", 0},
		{"over the threshold", big, false, none, "threshold", 1500},
		{"pruning saves enough", big, false, func() int64 { return 600 }, "", 0},
		{"silent overflow", silent, false, nil, "threshold", 2110},
		{"aborted, small", small, false, none, "", 0},
	} {
		reason, grow := PromptCompactionDue(tc.last, tc.inContext, cur, CompactionSettings{}, tc.saved)
		if reason != tc.reason || grow != tc.grow {
			t.Errorf("%s: %q %d, want %q %d", tc.name, reason, grow, tc.reason, tc.grow)
		}
	}
	if r, _ := PromptCompactionDue(over, true, Model{ID: "n", Provider: "fake", ContextWindow: 2000}, CompactionSettings{}, none); r != "" {
		t.Errorf("another model's overflow: %q", r)
	}
	typed := &ProviderError{Kind: ErrorContextOverflow, Message: "too big"}
	quiet := &AssistantMessage{StopReason: StopError, ErrorMessage: "too big"}
	for _, tc := range []struct {
		msg       *AssistantMessage
		err       error
		overflows int
		want      bool
	}{
		{over, nil, 0, true},
		{over, nil, 2, true},
		{over, nil, 3, false},
		{quiet, typed, 0, true},
		{quiet, nil, 0, false},
		{other, nil, 0, false},
		{big, nil, 0, false},
		{nil, nil, 0, false},
	} {
		if got := OverflowRecoverable(tc.msg, tc.err, tc.overflows); got != tc.want {
			t.Errorf("OverflowRecoverable(%v, %v, %d) = %v", tc.msg, tc.err, tc.overflows, got)
		}
	}
}
