package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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
// record is an appended entry, the child of the current leaf. The payload
// of the common types is inline; each rarer type has its own struct behind
// a pointer, so a message entry stays small (a long session holds a
// hundred thousand of them).
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

	Compaction    *Compaction    // EntryCompaction
	BranchSummary *BranchSummary // EntryBranchSummary
	Custom        *CustomState   // EntryCustom
	// CustomMessage is the payload of EntryCustomMessage; its Timestamp and
	// Legacy are not used (the entry has its own timestamp).
	CustomMessage *CustomMessage
	Label         *Label // EntryLabel

	// wire keeps what a decoded entry needs to be written back unchanged
	// and the fields cannot hold; nil for an entry built in Go.
	wire *entryWire
}

// Compaction is the payload of EntryCompaction: the summary that replaces
// the entries before FirstKeptEntryID in the context.
type Compaction struct {
	Summary          string
	ShortSummary     string // omitted when ""
	FirstKeptEntryID string
	TokensBefore     int64
	Details          []byte // raw JSON, extension data; omitted when nil
	FromExtension    *bool  // omitted when nil
	// PreserveData is raw JSON kept across compactions (an OpenAI remote
	// compaction's replacement history among others); omitted when nil.
	PreserveData []byte
}

// BranchSummary is the payload of EntryBranchSummary: a summary of the
// branch the conversation came back from.
type BranchSummary struct {
	FromID        string // the entry branched from, "root" before the first
	Summary       string
	Details       []byte // raw JSON; omitted when nil
	FromExtension *bool  // omitted when nil
}

// CustomState is the payload of EntryCustom: an extension's state, never
// part of the context.
type CustomState struct {
	CustomType string
	Data       []byte // raw JSON; omitted when nil
}

// Label is the payload of EntryLabel: a bookmark on an entry. An empty
// Text clears the label and is omitted, as the original omits an
// undefined one.
type Label struct {
	TargetID string
	Text     string
	// emptyText: a decoded entry had "label":"" (not absent); it is
	// written back the same way.
	emptyText bool
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

// transcript is the session record held by the actor: the entries in
// append order, the current leaf, and the model's context derived from the
// branch that ends at the leaf. Appending to the leaf (the common case)
// extends the cached context; moving the leaf rebuilds it. (actor)
type transcript struct {
	// store receives every appended entry (appendEntry); it belongs to the
	// record and is replaced with it (install).
	store   Store
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

// entryOf returns the id of the branch entry that records m, walking back
// from the leaf ("" when none does).
func (t *transcript) entryOf(m Message) string {
	for id := t.leaf; id != ""; {
		i, ok := t.index[id]
		if !ok {
			break
		}
		e := t.entries[i]
		if e.Type == EntryMessage && e.Message == m {
			return id
		}
		id = e.ParentID
	}
	return ""
}

// hide takes m's entry out of the context, keeping it in the record (a
// failed request that an overflow recovery sends again).
func (t *transcript) hide(m Message) {
	id := t.entryOf(m)
	if id == "" || t.hidden[id] {
		return
	}
	if t.hidden == nil {
		t.hidden = map[string]bool{}
	}
	t.hidden[id] = true
	if n := len(t.context); n > 0 && t.context[n-1] == m {
		t.context = t.context[:n-1]
		return
	}
	t.context = t.deriveContext(t.branch(t.leaf))
}

// hideFrom takes m's entry and every entry after it on the branch out of
// the context, keeping them in the record (a response a rule cut, and
// its placeholder results).
func (t *transcript) hideFrom(m Message) {
	id := t.entryOf(m)
	if id == "" {
		return
	}
	if t.hidden == nil {
		t.hidden = map[string]bool{}
	}
	for cur := t.leaf; cur != ""; {
		t.hidden[cur] = true
		if cur == id {
			break
		}
		cur = t.entries[t.index[cur]].ParentID
	}
	t.context = t.deriveContext(t.branch(t.leaf))
}

// inContext reports whether m is recorded on the branch and not hidden.
func (t *transcript) inContext(m Message) bool {
	id := t.entryOf(m)
	return id != "" && !t.hidden[id]
}

// record is what a session's record is installed from: a new session, a
// file loaded at start-up or by switch_session, a branch, a fork or a
// clone.
type record struct {
	id, file string
	name     string // "" for none
	store    Store  // nil: a MemoryStore
	// entries are the record (file order) and leaf its current leaf; nil
	// and "" for an empty session.
	entries []*Entry
	leaf    string
}

// newTranscript indexes entries (the first entry of an id wins: a damaged
// file may repeat one) and derives the context of leaf's branch.
func newTranscript(entries []*Entry, leaf string, store Store) (transcript, error) {
	if store == nil {
		store = &MemoryStore{}
	}
	t := transcript{store: store, index: make(map[string]int, len(entries)), entries: make([]*Entry, 0, len(entries))}
	for _, e := range entries {
		if _, dup := t.index[e.ID]; dup {
			continue
		}
		t.index[e.ID] = len(t.entries)
		t.entries = append(t.entries, e)
	}
	if err := t.setLeaf(leaf); err != nil {
		return transcript{}, err
	}
	return t, nil
}

// install makes the session r: a new record, store and identity. Queues
// and deferred bash records are cleared, and each feature forgets or
// re-reads its state (onInstall, features.go: no retry in progress, the
// todo list and the TTSR injections the new branch last wrote, as the
// original does on a switch). It returns the previous store, for the
// caller to close. (actor)
func (s *Session) install(r record) (old Store, err error) {
	t, err := newTranscript(r.entries, r.leaf, r.store)
	if err != nil {
		return nil, err
	}
	old, s.rec = s.rec.store, t
	s.saveErr = ""
	s.set.id, s.set.file, s.set.name = r.id, r.file, r.name
	s.set.version++
	queued := len(s.steering)+len(s.followUps) > 0
	s.steering, s.followUps, s.deferredBash = nil, nil, nil
	if queued {
		s.queueChanged()
	}
	s.installed()
	return old, nil
}

// appendEntry is the only mutation of the session record: it mints the
// entry's id and timestamp, makes it the child of the leaf, derives the
// context and hands it to the store, before any event announces it.
// (actor)
func (s *Session) appendEntry(e *Entry) {
	e.ID = s.cfg.IDs.NewID("entry")
	for s.rec.has(e.ID) { // 8 hex digits: collisions are rare, not impossible
		e.ID = s.cfg.IDs.NewID("entry")
	}
	if e.Timestamp == 0 {
		e.Timestamp = s.now()
	}
	s.rec.append(e)
	// The store runs on the executor, so entries reach it in record order;
	// persisting must happen even when the run that produced it was aborted.
	if err := s.rec.store.Append(s.storeCtx(), e); err != nil {
		fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
		s.saveFailed(err)
	} else if s.saveErr != "" {
		s.saveResumed()
	}
}

// saveFailed tells the host, the moment it happens, that the session
// stopped being saved (an error-level notify, and get_state's
// sessionSaveError while it lasts): a host must not believe saved what
// was not. The entries wait in the store and are written when it can.
// (actor)
func (s *Session) saveFailed(err error) {
	if s.saveErr != "" {
		return
	}
	s.saveErr = err.Error()
	s.set.version++
	s.notify("error", "The session is not being saved: "+s.saveErr+". The conversation goes on; what is not on disk is kept and written as soon as the file can be written again.")
}

// saveResumed tells the host that every entry is on disk again. (actor)
func (s *Session) saveResumed() {
	s.saveErr = ""
	s.set.version++
	s.notify("info", "The session is being saved again: every entry is in "+s.set.file+".")
}

// appendMessage records a finished message: a custom message as a
// custom_message entry, as the original records it, any other as a
// message entry. (actor)
func (s *Session) appendMessage(m Message) {
	if c, ok := m.(*CustomMessage); ok {
		s.appendEntry(&Entry{Type: EntryCustomMessage, CustomMessage: c, Timestamp: c.Timestamp})
		return
	}
	s.appendEntry(&Entry{Type: EntryMessage, Message: m})
}

// storeCtx is the context persistence runs under: never cancelled, so an
// abort still records what the aborted run produced.
func (s *Session) storeCtx() context.Context { return context.Background() }

// Entries returns the session record in append order; the entries must
// not be modified. (actor)
func (s *Session) Entries() []*Entry { return append([]*Entry(nil), s.rec.entries...) }

// Leaf returns the id of the current leaf entry ("" when empty). (actor)
func (s *Session) Leaf() string { return s.rec.leaf }

// CloseStore makes the current store durable and releases it (on exit),
// when it can be closed. (actor)
func (s *Session) CloseStore() {
	if c, ok := s.rec.store.(io.Closer); ok {
		if err := c.Close(); err != nil {
			fmt.Fprintf(s.cfg.Log, "xcsh: session store: %v\n", err)
		}
	}
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
	c := branch[ci].Compaction
	if c == nil {
		c = &Compaction{}
	}
	payload := remoteHistory(c.PreserveData)
	out = append(out, &CompactionSummaryMessage{
		Summary:         c.Summary,
		ShortSummary:    c.ShortSummary,
		TokensBefore:    c.TokensBefore,
		ProviderPayload: payload,
		Timestamp:       branch[ci].Timestamp,
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
		if e.CustomMessage != nil {
			m := *e.CustomMessage
			m.Legacy, m.Timestamp = false, e.Timestamp
			return &m
		}
	case EntryBranchSummary:
		if b := e.BranchSummary; b != nil && b.Summary != "" {
			return &BranchSummaryMessage{Summary: b.Summary, FromID: b.FromID, Timestamp: e.Timestamp}
		}
	}
	return nil
}
