package engine

import "bytes"

// The message roles below exist in the original's agent context and session
// file (agent-core.md §1.2, §1.3) but are not produced by this engine yet.
// They are here so that a session written by the original loads and is
// written back unchanged; their encoders follow the original's key order
// and omit optional keys exactly where it does.

// DeveloperMessage is system-like text injected by the harness; providers
// without a developer role see it as a user message.
type DeveloperMessage struct {
	Content         []ContentBlock
	StringContent   bool   // encode a single text block as a JSON string
	Attribution     string // omitted when empty (the original then assumes "agent")
	ProviderPayload []byte // raw JSON; omitted when nil
	Timestamp       int64
}

// Role implements Message.
func (*DeveloperMessage) Role() string { return "developer" }

// PythonExecutionMessage records Python code the user ran; it has the
// shape of BashExecutionMessage with "code" for "command".
type PythonExecutionMessage struct {
	Code      string
	Output    string
	ExitCode  *int
	Cancelled bool
	Truncated bool
	Meta      []byte // raw JSON; omitted when nil
	Timestamp int64
	// ExcludeFromContext is a pointer because the original writes the key
	// with false as well as true.
	ExcludeFromContext *bool
}

// Role implements Message.
func (*PythonExecutionMessage) Role() string { return "pythonExecution" }

// CustomMessage is a message injected by an extension or the harness
// (ttsr-injection, eager-todo-prelude, ...). The model sees it as a user
// message; a host shows it only when Display is set.
type CustomMessage struct {
	// Legacy marks the v2 role name "hookMessage". It is kept, not
	// migrated, so decoding and encoding stay lossless; migrating to
	// "custom" is the session loader's decision.
	Legacy        bool
	CustomType    string
	Content       []ContentBlock
	StringContent bool // encode a single text block as a JSON string
	Display       bool
	Details       []byte // raw JSON; omitted when nil
	Attribution   string // omitted when empty
	Timestamp     int64
}

// Role implements Message.
func (m *CustomMessage) Role() string {
	if m.Legacy {
		return "hookMessage"
	}
	return "custom"
}

// BranchSummaryMessage summarises a tree branch the conversation came back
// from.
type BranchSummaryMessage struct {
	Summary   string
	FromID    string // entry id, "root" when branched before the first entry
	Timestamp int64
}

// Role implements Message.
func (*BranchSummaryMessage) Role() string { return "branchSummary" }

// CompactionSummaryMessage heads the context after a compaction.
type CompactionSummaryMessage struct {
	Summary         string
	ShortSummary    string // omitted when empty
	TokensBefore    int64
	ProviderPayload []byte // raw JSON; omitted when nil
	Timestamp       int64
}

// Role implements Message.
func (*CompactionSummaryMessage) Role() string { return "compactionSummary" }

// FileMention is one file read for an "@path" mention in a prompt.
type FileMention struct {
	Path          string
	Content       string
	LineCount     *int64        // optional; a pointer because 0 is a count
	ByteSize      *int64        // optional; a pointer because 0 is a size
	SkippedReason string        // e.g. "tooLarge"; omitted when empty
	Image         *ContentBlock // an image block; omitted when nil
}

// FileMentionMessage carries the files auto-read for "@path" mentions.
type FileMentionMessage struct {
	Files     []FileMention // nil encodes as []
	Timestamp int64
}

// Role implements Message.
func (*FileMentionMessage) Role() string { return "fileMention" }

// OpaqueMessage is a message whose role this package does not know. A
// session written by a newer original may hold roles we have never seen;
// keeping the decoded bytes and writing them back verbatim lets such a
// session load, be appended to and be saved without losing them. Only
// DecodeMessage makes one.
type OpaqueMessage struct {
	role string
	raw  []byte // compact JSON of the whole message
}

// Role implements Message.
func (m *OpaqueMessage) Role() string { return m.role }

// MarshalJSON implements json.Marshaler; it returns the decoded bytes.
func (m *OpaqueMessage) MarshalJSON() ([]byte, error) { return bytes.Clone(m.raw), nil }

// AppendJSON appends the decoded bytes to dst.
func (m *OpaqueMessage) AppendJSON(dst []byte) []byte { return append(dst, m.raw...) }
