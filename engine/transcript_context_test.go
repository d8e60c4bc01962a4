package engine

import (
	"strings"
	"testing"
)

// ctxRoles renders a context as "role:text" items for comparison.
func ctxRoles(ms []Message) string {
	var parts []string
	for _, m := range ms {
		s := m.Role()
		switch m := m.(type) {
		case *UserMessage:
			s += ":" + m.Text()
		case *CompactionSummaryMessage:
			s += ":" + m.Summary
		case *BranchSummaryMessage:
			s += ":" + m.Summary
		case *CustomMessage:
			s += ":" + m.CustomType
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func ctxUser(text string) *Entry {
	return &Entry{Type: EntryMessage, Message: &UserMessage{Content: []ContentBlock{TextBlock(text)}}}
}

func ctxAssistant() *Entry { return &Entry{Type: EntryMessage, Message: &AssistantMessage{}} }

// ctxBuild appends the entries with ids e1, e2, ... and returns the transcript.
func ctxBuild(entries ...*Entry) *transcript {
	t := &transcript{}
	for i, e := range entries {
		e.ID = "e" + string(rune('0'+i+1))
		t.append(e)
	}
	return t
}

func TestContextDerivation(t *testing.T) {
	t.Parallel()
	compaction := func(first, summary string) *Entry {
		return &Entry{Type: EntryCompaction, Compaction: &Compaction{Summary: summary, FirstKeptEntryID: first, TokensBefore: 1000}}
	}
	for _, tc := range []struct {
		name    string
		entries []*Entry
		want    string
	}{
		{"plain", []*Entry{ctxUser("a"), ctxAssistant(), {Type: EntryModelChange, Model: "p/m"}, ctxUser("b")},
			"user:a assistant user:b"},
		{"compaction keeps from firstKept", []*Entry{ctxUser("a"), ctxAssistant(), ctxUser("b"), ctxAssistant(), compaction("e3", "S"), ctxUser("c")},
			"compactionSummary:S user:b assistant user:c"},
		{"latest compaction wins", []*Entry{ctxUser("a"), ctxAssistant(), compaction("e2", "S1"), ctxUser("b"), ctxAssistant(), compaction("e4", "S2"), ctxUser("c")},
			"compactionSummary:S2 user:b assistant user:c"},
		{"firstKept not on branch", []*Entry{ctxUser("a"), compaction("zz", "S"), ctxUser("b")},
			"compactionSummary:S user:b"},
		{"remote history replaces kept", []*Entry{ctxUser("a"), ctxAssistant(),
			{Type: EntryCompaction, Compaction: &Compaction{Summary: "S", FirstKeptEntryID: "e1",
				PreserveData: []byte(`{"openaiRemoteCompaction":{"provider":"openai","replacementHistory":[{"type":"message"}]}}`)}},
			ctxUser("b")},
			"compactionSummary:S user:b"},
		{"custom_message and branch_summary", []*Entry{ctxUser("a"),
			{Type: EntryBranchSummary, BranchSummary: &BranchSummary{FromID: "root", Summary: "B"}},
			{Type: EntryBranchSummary, BranchSummary: &BranchSummary{FromID: "root"}}, // no summary: nothing
			{Type: EntryCustomMessage, CustomMessage: &CustomMessage{CustomType: "ttsr-injection", Content: []ContentBlock{TextBlock("r")}}},
			{Type: EntryCustom, Custom: &CustomState{CustomType: "state"}},
			{Type: EntryLabel, Label: &Label{TargetID: "e1", Text: "x"}}},
			"user:a branchSummary:B custom:ttsr-injection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := ctxBuild(tc.entries...)
			if got := ctxRoles(tr.context); got != tc.want {
				t.Fatalf("appended: %s\nwant       %s", got, tc.want)
			}
			// The incremental context equals the one derived from scratch.
			if err := tr.setLeaf(tr.leaf); err != nil {
				t.Fatal(err)
			}
			if got := ctxRoles(tr.context); got != tc.want {
				t.Fatalf("derived: %s\nwant     %s", got, tc.want)
			}
		})
	}
}

func TestContextCompactionDetails(t *testing.T) {
	t.Parallel()
	tr := ctxBuild(ctxUser("a"), ctxAssistant(), &Entry{Type: EntryCompaction, Timestamp: 7, Compaction: &Compaction{
		Summary: "S", ShortSummary: "s", FirstKeptEntryID: "e2", TokensBefore: 42,
		PreserveData: []byte(`{"openaiRemoteCompaction":{"provider":"openai","replacementHistory":[{"a":1}]}}`)}})
	c, ok := tr.context[0].(*CompactionSummaryMessage)
	if !ok || len(tr.context) != 1 {
		t.Fatalf("context %s", ctxRoles(tr.context))
	}
	b, _ := c.MarshalJSON()
	want := `{"role":"compactionSummary","summary":"S","shortSummary":"s","tokensBefore":42,"providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[{"a":1}]},"timestamp":7}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestContextFollowsLeaf(t *testing.T) {
	t.Parallel()
	tr := ctxBuild(ctxUser("a"), ctxAssistant(), ctxUser("b"), ctxAssistant(),
		&Entry{Type: EntryCompaction, Compaction: &Compaction{Summary: "S", FirstKeptEntryID: "e3"}}, ctxUser("c"))
	// Back before the compaction: the whole branch again.
	if err := tr.setLeaf("e4"); err != nil {
		t.Fatal(err)
	}
	if got, want := ctxRoles(tr.context), "user:a assistant user:b assistant"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
	if err := tr.setLeaf(""); err != nil || len(tr.context) != 0 {
		t.Fatalf("empty leaf: %v %s", err, ctxRoles(tr.context))
	}
	// A hidden message stays out after a rebuild across a compaction.
	tr = ctxBuild(ctxUser("a"), ctxAssistant())
	tr.hideLast()
	tr.append(&Entry{ID: "c1", Type: EntryCompaction, Compaction: &Compaction{Summary: "S", FirstKeptEntryID: "e1"}})
	if got, want := ctxRoles(tr.context), "compactionSummary:S user:a"; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}
