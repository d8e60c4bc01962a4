package engine

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Entry types of the session record (agent-core.md §5.2). The sessions
// issue adds the rest (compaction, branch_summary, custom, label, ...);
// each is one more constant and one more case where the context is derived.
const (
	EntryMessage             = "message"
	EntryModelChange         = "model_change"
	EntryThinkingLevelChange = "thinking_level_change"
)

// Entry is one node of the session tree: every change to the session
// record is an appended entry, the child of the current leaf.
type Entry struct {
	Type      string
	ID        string // 8 hex, unique within the session
	ParentID  string // "" for a root entry (parentId null on the wire)
	Timestamp int64  // Unix milliseconds
	// Message is the payload of EntryMessage.
	Message Message
	// Model is the payload of EntryModelChange: "provider/modelId".
	Model string
	// ThinkingLevel is the payload of EntryThinkingLevelChange; "" is null.
	ThinkingLevel ThinkingLevel
}

// AppendJSON appends the entry as a line of a version-3 session file
// (without the newline), in the original's key order.
func (e *Entry) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, e.Type), "id", e.ID)
	if e.ParentID == "" {
		dst = append(appendKey(dst, "parentId"), "null"...)
	} else {
		dst = appendStringField(dst, "parentId", e.ParentID)
	}
	ts := time.UnixMilli(e.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z")
	dst = appendStringField(dst, "timestamp", ts)
	switch e.Type {
	case EntryMessage:
		dst = appendMessage(appendKey(dst, "message"), e.Message)
	case EntryModelChange:
		dst = appendStringField(dst, "model", e.Model)
	case EntryThinkingLevelChange:
		if e.ThinkingLevel == "" {
			dst = append(appendKey(dst, "thinkingLevel"), "null"...)
		} else {
			dst = appendStringField(dst, "thinkingLevel", string(e.ThinkingLevel))
		}
	}
	return append(dst, '}')
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
// be set and unique.
func (t *transcript) append(e *Entry) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	e.ParentID = t.leaf
	t.index[e.ID] = len(t.entries)
	t.entries = append(t.entries, e)
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
	t.context = t.context[:0:0]
	for _, e := range t.branch(id) {
		if m := contextMessage(e); m != nil && !t.hidden[e.ID] {
			t.context = append(t.context, m)
		}
	}
	return nil
}

// contextMessage is what an entry contributes to the model's context.
func contextMessage(e *Entry) Message {
	if e.Type == EntryMessage {
		return e.Message
	}
	return nil
}
