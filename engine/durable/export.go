package durable

import (
	"math"

	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Exporting a durable session (issue 31: "a session file can be exported
// from the workflow's record at any time"). Each run of the workflow keeps
// its part of the session's record: every message it added, in order
// (failed replies a retry replaced included, as a session file keeps
// them), and each compaction. The context a run starts with is not in
// its record (it is the end of the run before); instead every message of
// a context knows where it came from (a ref), so an export knows the
// first kept entry of each compaction however many runs ago it was
// recorded. The "xcsh.record" query answers a run's part, closed runs
// too; ExportSession walks the runs back (PrevRunID) and assembles the
// entries of a session file (export_read.go). Nothing here issues a
// command: the record changes no history, and recorded histories replay
// as they did.

// QueryRecord is the export's query: a page of the run's record
// (RecordPage), from the item its argument names. A wire name, as those
// of payload.go: never rename it.
const QueryRecord = "xcsh.record"

// noRef is the ref of a message whose origin is not known (none today:
// every message of a context is added, carried or a compaction's).
const noRef = math.MinInt32

// recordPageBytes bounds a page's messages, well under the 4 MB a gRPC
// message of the Temporal service may hold (a run's record holds up to a
// context window of messages, tool outputs included).
const recordPageBytes = 1 << 20

// exportRecord is what a run adds to the session's record. Workflow
// state: touched only by workflow code and the query, which the SDK runs
// one at a time.
type exportRecord struct {
	items []recordItem
	// refs is where each message of the context came from: an item of
	// this record (>= 0), the carried context's message j (-j-1), or
	// noRef. Looked up, never iterated.
	refs map[engine.Message]int
}

// recordItem is a message the run added, or a compaction.
type recordItem struct {
	msg engine.Message
	// A compaction: its auto_compaction_end frame, the summary's time,
	// and the ref of the first message it kept (noRef: none).
	end       []byte
	at        int64
	firstKept int
}

// RecordPage answers QueryRecord: a run's record from an item on, and
// what the next run starts from.
type RecordPage struct {
	SessionID string
	RunID     string
	// PrevRunID is the run this one continued ("" for the first).
	PrevRunID string `json:",omitempty"`
	// Started is this run's start (workflow time, Unix ms).
	Started int64
	// Setup is the worker's configuration (nil before the set-up ran).
	Setup *Setup `json:",omitempty"`
	Items []RecordItem
	// Next is the index of the item after this page; More says a next
	// page holds it.
	Next int
	More bool `json:",omitempty"`
	// Context is the context now, as refs (last page only): what a run
	// continued from this one starts with.
	Context []int `json:",omitempty"`
	// HostTools are the host's tools, offered with the worker's.
	HostTools []HostTool `json:",omitempty"`
}

// RecordItem is one item of a run's record: a message (the engine's
// encoding), or a compaction (its auto_compaction_end frame; At the
// summary's time; FirstKept the ref of the first message it kept, noRef
// for none).
type RecordItem struct {
	Message    []byte `json:",omitempty"`
	Compaction []byte `json:",omitempty"`
	At         int64  `json:",omitempty"`
	FirstKept  int    `json:",omitempty"`
}

// registerExport notes where the carried context came from and installs
// the record's query. It runs before the run adds any message.
func (s *session) registerExport(ctx workflow.Context) error {
	s.noteCarried()
	info := workflow.GetInfo(ctx)
	run, started := info.WorkflowExecution.RunID, info.WorkflowStartTime.UnixMilli()
	return workflow.SetQueryHandler(ctx, QueryRecord, func(from int) (RecordPage, error) {
		p := s.recordPage(from)
		p.RunID, p.Started = run, started
		return p, nil
	})
}

// noteCarried notes the context the run starts with: the carried
// message j has ref -j-1.
func (s *session) noteCarried() {
	s.rec.refs = make(map[engine.Message]int, len(s.messages))
	for j, m := range s.messages {
		s.rec.refs[m] = -j - 1
	}
}

// recordMessage adds a message the run added to the context (add).
func (s *session) recordMessage(m engine.Message) {
	if s.rec.refs == nil {
		s.rec.refs = map[engine.Message]int{}
	}
	s.rec.refs[m] = len(s.rec.items)
	s.rec.items = append(s.rec.items, recordItem{msg: m})
}

// recordCompaction adds a compaction: end is its auto_compaction_end
// frame, next the context that follows it (the summary, then the kept
// messages, which are the current context's last ones). Whatever replaces
// the context with a compaction's calls it first (compact does): else the
// export has no compaction entry there, and the kept messages' copies no
// origin.
func (s *session) recordCompaction(end []byte, next []engine.Message) {
	if len(next) == 0 {
		return
	}
	summary, _ := next[0].(*engine.CompactionSummaryMessage)
	if summary == nil || len(next)-1 > len(s.messages) {
		return
	}
	kept := s.messages[len(s.messages)-(len(next)-1):]
	it := recordItem{end: end, at: summary.Timestamp, firstKept: noRef}
	if len(kept) > 0 {
		it.firstKept = s.ref(kept[0])
	}
	i := len(s.rec.items)
	s.rec.items = append(s.rec.items, it)
	if s.rec.refs == nil {
		s.rec.refs = map[engine.Message]int{}
	}
	// The kept messages were decoded again: each copy has its original's
	// origin.
	s.rec.refs[summary] = i
	for j, m := range next[1:] {
		s.rec.refs[m] = s.ref(kept[j])
	}
}

func (s *session) ref(m engine.Message) int {
	if r, ok := s.rec.refs[m]; ok {
		return r
	}
	return noRef
}

// recordPage answers QueryRecord.
func (s *session) recordPage(from int) RecordPage {
	p := RecordPage{SessionID: s.in.SessionID, PrevRunID: s.in.PrevRunID, HostTools: s.hostTools}
	if s.ready {
		setup := s.setup
		p.Setup = &setup
	}
	from = max(from, 0)
	size := 0
	for i := from; i < len(s.rec.items); i++ {
		if size >= recordPageBytes && len(p.Items) > 0 {
			p.Next, p.More = i, true
			return p
		}
		it := s.rec.items[i]
		var ri RecordItem
		if it.msg != nil {
			ri.Message = encodeMessage(it.msg)
		} else {
			ri.Compaction, ri.At, ri.FirstKept = it.end, it.at, it.firstKept
		}
		size += len(ri.Message) + len(ri.Compaction)
		p.Items = append(p.Items, ri)
	}
	p.Next = len(s.rec.items)
	p.Context = make([]int, len(s.messages))
	for j, m := range s.messages {
		p.Context[j] = s.ref(m)
	}
	return p
}
