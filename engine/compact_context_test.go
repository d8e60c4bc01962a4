package engine

import (
	"context"
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
