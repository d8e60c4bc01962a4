package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// Exported is a durable session as a session file holds it: its id, the
// worker's working directory, its start, and its entries (one branch,
// root first: the model, then every message and compaction of every run,
// in order), with what an HTML page shows besides.
type Exported struct {
	SessionID string
	Cwd       string
	Created   int64 // the first run's start, Unix ms
	Entries   []*engine.Entry
	Leaf      string // the last entry's id ("" when none)
	// SystemPrompt and Tools are the worker's and the host's, as the
	// latest run offers them to the model.
	SystemPrompt string
	Tools        []engine.ToolSpec
}

// ErrNoSession: the Temporal service has no workflow for the session.
var ErrNoSession = errors.New("no durable session of that id")

// ExportSession reads the record of a durable session from every run of
// its workflow, the latest first and then each run it continued
// (PrevRunID; closed runs answer queries through a worker of the task
// queue), and assembles it. It reads what the runs have recorded when it
// asks: a session may be running or idle.
func ExportSession(ctx context.Context, c client.Client, session string) (*Exported, error) {
	id := WorkflowID(session)
	x, err := exportRuns(ctx, func(ctx context.Context, runID string, from int) (RecordPage, error) {
		var p RecordPage
		v, err := c.QueryWorkflow(ctx, id, runID, QueryRecord, from)
		if err == nil {
			err = v.Get(&p)
		}
		return p, err
	})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%w: %s", ErrNoSession, session)
	}
	return x, err
}

// recordQuery reads a page of a run's record ("": the latest run).
type recordQuery func(ctx context.Context, runID string, from int) (RecordPage, error)

// exportRuns reads every run's record, the latest first, and assembles
// them oldest first.
func exportRuns(ctx context.Context, query recordQuery) (*Exported, error) {
	var runs []RecordPage
	seen := map[string]bool{}
	for runID := ""; ; {
		r, err := readRun(ctx, query, runID)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
		if r.PrevRunID == "" || seen[r.PrevRunID] {
			break
		}
		seen[r.PrevRunID] = true
		runID = r.PrevRunID
	}
	slices.Reverse(runs)
	return assemble(runs)
}

// readRun reads all pages of a run's record. The pages after the first
// name the run the first answered for, so a continue-as-new meanwhile
// does not mix two runs.
func readRun(ctx context.Context, query recordQuery, runID string) (RecordPage, error) {
	p, err := query(ctx, runID, 0)
	if err != nil {
		return p, err
	}
	if runID == "" {
		runID = p.RunID
	}
	for p.More {
		next, err := query(ctx, runID, p.Next)
		if err != nil {
			return p, err
		}
		next.Items = append(p.Items, next.Items...)
		p = next
	}
	return p, nil
}

// assemble makes the entries of the runs' records, oldest run first: a
// model change (and the thinking level) from the set-up, then each run's
// items; a compaction's first kept entry is found through the refs.
func assemble(runs []RecordPage) (*Exported, error) {
	x := &Exported{}
	if len(runs) == 0 {
		return x, nil
	}
	x.SessionID, x.Created = runs[0].SessionID, runs[0].Started
	var setup *Setup
	for i := len(runs) - 1; i >= 0 && setup == nil; i-- {
		setup = runs[i].Setup
	}
	add := func(e *engine.Entry) string {
		e.ID = fmt.Sprintf("%08x", len(x.Entries)+1)
		if n := len(x.Entries); n > 0 {
			e.ParentID = x.Entries[n-1].ID
		}
		x.Entries = append(x.Entries, e)
		return e.ID
	}
	if setup != nil {
		x.Cwd, x.SystemPrompt = setup.Cwd, setup.SystemPrompt
		for _, t := range setup.Tools {
			x.Tools = append(x.Tools, engine.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Schema})
		}
		for _, t := range runs[len(runs)-1].HostTools {
			x.Tools = append(x.Tools, engine.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		if setup.Model.ID != "" {
			add(&engine.Entry{Type: engine.EntryModelChange, Model: setup.Model.Provider + "/" + setup.Model.ID, Timestamp: x.Created})
		}
		if setup.Thinking != "" {
			add(&engine.Entry{Type: engine.EntryThinkingLevelChange, ThinkingLevel: setup.Thinking, Timestamp: x.Created})
		}
	}
	var carried []string // the entries of the context the run starts with
	for _, r := range runs {
		ids := make([]string, len(r.Items))
		resolve := func(ref int) string {
			switch {
			case ref >= 0 && ref < len(ids):
				return ids[ref]
			case ref < 0 && ref != noRef && -ref-1 < len(carried):
				return carried[-ref-1]
			}
			return ""
		}
		for i, it := range r.Items {
			e, err := recordEntry(it, resolve)
			if err != nil {
				return nil, fmt.Errorf("the record of run %s, item %d: %w", r.RunID, i, err)
			}
			ids[i] = add(e)
		}
		next := make([]string, len(r.Context))
		for j, ref := range r.Context {
			next[j] = resolve(ref)
		}
		carried = next
	}
	if n := len(x.Entries); n > 0 {
		x.Leaf = x.Entries[n-1].ID
	}
	return x, nil
}

// recordEntry is the session file's entry of a record item: a message
// entry (a custom message's own entry, as in process), or a compaction
// entry as the in-process session records one (compact.go
// applyCompaction).
func recordEntry(it RecordItem, resolve func(int) string) (*engine.Entry, error) {
	if it.Message != nil {
		m, err := engine.DecodeMessage(it.Message)
		if err != nil {
			return nil, err
		}
		var ts struct {
			Timestamp int64 `json:"timestamp"`
		}
		_ = json.Unmarshal(it.Message, &ts)
		if c, ok := m.(*engine.CustomMessage); ok {
			return &engine.Entry{Type: engine.EntryCustomMessage, CustomMessage: c, Timestamp: c.Timestamp}, nil
		}
		return &engine.Entry{Type: engine.EntryMessage, Message: m, Timestamp: ts.Timestamp}, nil
	}
	var end struct {
		Result *struct {
			Summary      string          `json:"summary"`
			ShortSummary string          `json:"shortSummary"`
			TokensBefore int64           `json:"tokensBefore"`
			Details      json.RawMessage `json:"details"`
			PreserveData json.RawMessage `json:"preserveData"`
		} `json:"result"`
	}
	if err := json.Unmarshal(it.Compaction, &end); err != nil {
		return nil, err
	}
	if end.Result == nil {
		return nil, errors.New("a compaction without its result")
	}
	r := end.Result
	fromExt := false
	c := &engine.Compaction{Summary: r.Summary, ShortSummary: r.ShortSummary, TokensBefore: r.TokensBefore,
		FirstKeptEntryID: resolve(it.FirstKept), FromExtension: &fromExt}
	if r.Details != nil {
		c.Details = []byte(r.Details)
	}
	if r.PreserveData != nil {
		c.PreserveData = []byte(r.PreserveData)
	}
	return &engine.Entry{Type: engine.EntryCompaction, Compaction: c, Timestamp: it.At}, nil
}

// WriteSessionFile writes x as a version-3 session file: its header (the
// session's id, the worker's cwd, the first run's start), then an entry a
// line. The file resumes in process (--session FILE) like any other.
func (x *Exported) WriteSessionFile(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	h := sessionfile.Header{Version: sessionfile.Version, ID: x.SessionID, Timestamp: x.Created, Cwd: x.Cwd}
	line := append(h.AppendJSON(nil), '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for _, e := range x.Entries {
		line = append(e.AppendJSON(line[:0]), '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
