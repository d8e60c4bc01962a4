package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// Entry types of the session record (agent-core.md §5.2). An entry of any
// other type (service_tier_change, ttsr_injection, mode_change,
// session_init, ...) is kept opaque: it loads, takes part in the tree and is
// written back unchanged, but contributes nothing to the context.
const (
	EntryMessage             = "message"
	EntryModelChange         = "model_change"
	EntryThinkingLevelChange = "thinking_level_change"
	EntryCompaction          = "compaction"
	EntryBranchSummary       = "branch_summary"
	EntryCustom              = "custom"
	EntryCustomMessage       = "custom_message"
	EntryLabel               = "label"
)

// Entry is one node of the session tree: every change to the session
// record is an appended entry, the child of the current leaf. One struct
// holds the payload of every type (the fields a type does not use stay
// zero) so the record is a plain slice and the common case, a message,
// costs one allocation. Raw JSON fields hold compact JSON, nil when the key
// is absent.
type Entry struct {
	Type      string
	ID        string // 8 hex, unique within the session
	ParentID  string // "" for a root entry (parentId null on the wire)
	Timestamp int64  // Unix milliseconds

	// Message is the payload of EntryMessage.
	Message Message

	// Model ("provider/modelId") and Role (omitted when "", which the
	// original reads as "default") are the payload of EntryModelChange.
	Model string
	Role  string

	// ThinkingLevel is the payload of EntryThinkingLevelChange; "" is null.
	ThinkingLevel ThinkingLevel

	// Summary is the text of EntryCompaction and EntryBranchSummary.
	Summary string
	// ShortSummary (omitted when ""), FirstKeptEntryID, TokensBefore and
	// PreserveData are EntryCompaction's.
	ShortSummary     string
	FirstKeptEntryID string
	TokensBefore     int64
	PreserveData     []byte
	// Details is extension data of EntryCompaction, EntryBranchSummary and
	// EntryCustomMessage (never sent to a model).
	Details []byte
	// FromExtension is written when set (false as well as true).
	FromExtension *bool
	// FromID is EntryBranchSummary's: the entry the branch left, "root"
	// when it left before the first entry.
	FromID string

	// CustomType names the extension of EntryCustom and EntryCustomMessage.
	CustomType string
	// Data is EntryCustom's extension state.
	Data []byte
	// Content (a JSON string when StringContent and a single text block),
	// Display and Attribution (omitted when "") are EntryCustomMessage's.
	Content       []ContentBlock
	StringContent bool
	Display       bool
	Attribution   string

	// TargetID and Label are EntryLabel's; an empty Label clears the label
	// and is omitted, as the original omits an undefined one.
	TargetID string
	Label    string

	// emptyLabel: the decoded label entry had "label":"" (not absent), so
	// it is written back the same way.
	emptyLabel bool
	// rawTimestamp is a decoded timestamp that does not print back the same
	// from Timestamp (not the canonical millisecond form); "" otherwise.
	rawTimestamp string
	// rest holds the payload of an entry of a type this package does not
	// know: its keys other than type/id/parentId/timestamp, in file order.
	rest []rawField
}

// Store receives every entry appended to the session record, in order, on
// the session's executor, before the event that announces it is emitted:
// a file store that has returned has made the entry durable before a host
// can see it. Append must not call back into the session. An error is
// logged and the session goes on in memory (a host must not lose its
// conversation because a disk filled up).
type Store interface {
	Append(ctx context.Context, e *Entry) error
}

// MemoryStore is the Store of a session that is not persisted
// (--no-session, tests): it keeps the entries it was given.
type MemoryStore struct {
	mu      sync.Mutex
	entries []*Entry
}

// Append implements Store.
func (m *MemoryStore) Append(_ context.Context, e *Entry) error {
	m.mu.Lock()
	m.entries = append(m.entries, e)
	m.mu.Unlock()
	return nil
}

// Entries returns the entries appended so far.
func (m *MemoryStore) Entries() []*Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Entry(nil), m.entries...)
}

// ErrNoEntry: a leaf or branch point names no entry of the session.
var ErrNoEntry = errors.New("no such entry")

// transcript is the session record held by the actor: the entries in
// append order, the current leaf, and the model's context derived from the
// branch that ends at the leaf. Appending to the leaf (the common case)
// extends the cached context; moving the leaf rebuilds it. (actor)
type transcript struct {
	entries []*Entry
	index   map[string]int // entry id -> position in entries
	leaf    string         // "" before the first entry
	context []Message      // the branch's messages, root first
	// hidden entries stay in the record but not in the context: a failed
	// assistant message that a retry replaces.
	hidden map[string]bool
}

// hideLast takes the leaf's message out of the context, keeping it in the
// record. (The leaf is the message just appended.)
func (t *transcript) hideLast() {
	i, ok := t.index[t.leaf]
	if !ok || contextMessage(t.entries[i]) == nil || len(t.context) == 0 {
		return
	}
	if t.hidden == nil {
		t.hidden = map[string]bool{}
	}
	t.hidden[t.leaf] = true
	t.context = t.context[:len(t.context)-1]
}

// has reports whether id names an entry.
func (t *transcript) has(id string) bool {
	_, ok := t.index[id]
	return ok
}

// append adds e as the child of the leaf and makes it the leaf. e.ID must
// be set and unique. Appending anything but a compaction extends the
// cached context in O(1); a compaction replaces the head of the context,
// so the branch is derived again.
func (t *transcript) append(e *Entry) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	e.ParentID = t.leaf
	t.index[e.ID] = len(t.entries)
	t.entries = append(t.entries, e)
	if e.Type == EntryCompaction {
		_ = t.setLeaf(e.ID) // cannot fail: e was just indexed
		return
	}
	t.leaf = e.ID
	if m := contextMessage(e); m != nil {
		t.context = append(t.context, m)
	}
}

// branch returns the entries from the root to id (root first).
func (t *transcript) branch(id string) []*Entry {
	var rev []*Entry
	for id != "" {
		i, ok := t.index[id]
		if !ok {
			break
		}
		e := t.entries[i]
		rev = append(rev, e)
		id = e.ParentID
	}
	out := make([]*Entry, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// setLeaf moves the leaf ("" is before the first entry) and derives the
// context of the new branch.
func (t *transcript) setLeaf(id string) error {
	if id != "" && !t.has(id) {
		return ErrNoEntry
	}
	t.leaf = id
	t.context = t.deriveContext(t.branch(id))
	return nil
}

// deriveContext is the model's context of a branch (root first), as the
// original's buildSessionContext derives it (agent-core.md §5.3): without
// a compaction, what every entry contributes; with one, a compaction
// summary for the latest compaction, then the entries from its
// firstKeptEntryId up to it (none when the compaction carries a provider's
// replacement history, which stands in for them), then everything after
// it. Hidden entries stay out.
func (t *transcript) deriveContext(branch []*Entry) []Message {
	out := make([]Message, 0, len(branch))
	add := func(e *Entry) {
		if m := contextMessage(e); m != nil && !t.hidden[e.ID] {
			out = append(out, m)
		}
	}
	ci := -1
	for i := len(branch) - 1; i >= 0; i-- {
		if branch[i].Type == EntryCompaction {
			ci = i
			break
		}
	}
	if ci < 0 {
		for _, e := range branch {
			add(e)
		}
		return out
	}
	c := branch[ci]
	payload := remoteHistory(c.PreserveData)
	out = append(out, &CompactionSummaryMessage{
		Summary:         c.Summary,
		ShortSummary:    c.ShortSummary,
		TokensBefore:    c.TokensBefore,
		ProviderPayload: payload,
		Timestamp:       c.Timestamp,
	})
	if payload == nil {
		kept := false
		for _, e := range branch[:ci] {
			kept = kept || e.ID == c.FirstKeptEntryID
			if kept {
				add(e)
			}
		}
	}
	for _, e := range branch[ci+1:] {
		add(e)
	}
	return out
}

// remoteHistory returns the providerPayload of a compaction whose
// preserveData holds an OpenAI remote compaction
// (openaiRemoteCompaction: {provider, replacementHistory}), nil otherwise.
func remoteHistory(preserve []byte) []byte {
	if preserve == nil {
		return nil
	}
	var p struct {
		Remote *struct {
			Provider any             `json:"provider"`
			History  json.RawMessage `json:"replacementHistory"`
		} `json:"openaiRemoteCompaction"`
	}
	if json.Unmarshal(preserve, &p) != nil || p.Remote == nil {
		return nil
	}
	provider, _ := p.Remote.Provider.(string)
	items := rawValue(p.Remote.History)
	if provider == "" || len(items) == 0 || items[0] != '[' {
		return nil
	}
	dst := append([]byte(nil), `{"type":"openaiResponsesHistory","provider":`...)
	dst = AppendJSONString(dst, provider)
	dst = AppendRawJSON(append(dst, `,"items":`...), items)
	return append(dst, '}')
}

// contextMessage is what an entry other than a compaction contributes to
// the model's context: a message entry its message, a custom_message entry
// a custom message, a branch_summary entry with a summary a branchSummary
// message; state entries nothing.
func contextMessage(e *Entry) Message {
	switch e.Type {
	case EntryMessage:
		return e.Message
	case EntryCustomMessage:
		return &CustomMessage{
			CustomType:    e.CustomType,
			Content:       e.Content,
			StringContent: e.StringContent,
			Display:       e.Display,
			Details:       e.Details,
			Attribution:   e.Attribution,
			Timestamp:     e.Timestamp,
		}
	case EntryBranchSummary:
		if e.Summary != "" {
			return &BranchSummaryMessage{Summary: e.Summary, FromID: e.FromID, Timestamp: e.Timestamp}
		}
	}
	return nil
}
