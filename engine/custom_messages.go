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

// MarshalJSON implements json.Marshaler.
func (m *DeveloperMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *DeveloperMessage) sizeHint() int {
	return 96 + blocksHint(m.Content) + len(m.Attribution) + len(m.ProviderPayload)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *DeveloperMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"developer","content":`...)
	dst = appendContent(dst, m.Content, m.StringContent)
	if m.Attribution != "" {
		dst = appendStringField(dst, "attribution", m.Attribution)
	}
	if m.ProviderPayload != nil {
		dst = appendRawField(dst, "providerPayload", m.ProviderPayload)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *PythonExecutionMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *PythonExecutionMessage) sizeHint() int {
	return 192 + strHint(m.Code) + strHint(m.Output) + len(m.Meta)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *PythonExecutionMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"pythonExecution"`...)
	dst = appendStringField(dst, "code", m.Code)
	dst = appendExecution(dst, m.Output, m.ExitCode, m.Cancelled, m.Truncated, m.Meta, m.Timestamp)
	if m.ExcludeFromContext != nil {
		dst = appendBoolField(dst, "excludeFromContext", *m.ExcludeFromContext)
	}
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *CustomMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *CustomMessage) sizeHint() int {
	return 128 + len(m.CustomType) + blocksHint(m.Content) + len(m.Details) + len(m.Attribution)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *CustomMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":`...)
	dst = AppendJSONString(dst, m.Role())
	dst = appendStringField(dst, "customType", m.CustomType)
	dst = appendContent(appendKey(dst, "content"), m.Content, m.StringContent)
	dst = appendBoolField(dst, "display", m.Display)
	if m.Details != nil {
		dst = appendRawField(dst, "details", m.Details)
	}
	if m.Attribution != "" {
		dst = appendStringField(dst, "attribution", m.Attribution)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
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

// MarshalJSON implements json.Marshaler.
func (m *BranchSummaryMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *BranchSummaryMessage) sizeHint() int { return 96 + strHint(m.Summary) + len(m.FromID) }

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *BranchSummaryMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"branchSummary"`...)
	dst = appendStringField(dst, "summary", m.Summary)
	dst = appendStringField(dst, "fromId", m.FromID)
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
}

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

// MarshalJSON implements json.Marshaler.
func (m *CompactionSummaryMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

func (m *CompactionSummaryMessage) sizeHint() int {
	return 128 + strHint(m.Summary) + strHint(m.ShortSummary) + len(m.ProviderPayload)
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *CompactionSummaryMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"compactionSummary"`...)
	dst = appendStringField(dst, "summary", m.Summary)
	if m.ShortSummary != "" {
		dst = appendStringField(dst, "shortSummary", m.ShortSummary)
	}
	dst = appendIntField(dst, "tokensBefore", m.TokensBefore)
	if m.ProviderPayload != nil {
		dst = appendRawField(dst, "providerPayload", m.ProviderPayload)
	}
	dst = appendIntField(dst, "timestamp", m.Timestamp)
	return append(dst, '}')
}

// FileMention is one file read for an "@path" mention in a prompt.
type FileMention struct {
	Path          string
	Content       string
	LineCount     *int64        // optional; a pointer because 0 is a count
	ByteSize      *int64        // optional; a pointer because 0 is a size
	SkippedReason string        // e.g. "tooLarge"; omitted when empty
	Image         *ContentBlock // an image block; omitted when nil
}

func (f *FileMention) appendJSON(dst []byte) []byte {
	dst = AppendJSONString(append(dst, `{"path":`...), f.Path)
	dst = appendStringField(dst, "content", f.Content)
	if f.LineCount != nil {
		dst = appendIntField(dst, "lineCount", *f.LineCount)
	}
	if f.ByteSize != nil {
		dst = appendIntField(dst, "byteSize", *f.ByteSize)
	}
	if f.SkippedReason != "" {
		dst = appendStringField(dst, "skippedReason", f.SkippedReason)
	}
	if f.Image != nil {
		dst = f.Image.AppendJSON(appendKey(dst, "image"))
	}
	return append(dst, '}')
}

// FileMentionMessage carries the files auto-read for "@path" mentions.
type FileMentionMessage struct {
	Files     []FileMention // nil encodes as []
	Timestamp int64
}

// Role implements Message.
func (*FileMentionMessage) Role() string { return "fileMention" }

// MarshalJSON implements json.Marshaler.
func (m *FileMentionMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, m.sizeHint())), nil
}

// AppendJSON appends the message's encoding (what MarshalJSON returns)
// to dst.
func (m *FileMentionMessage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"fileMention","files":[`...)
	for i := range m.Files {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = m.Files[i].appendJSON(dst)
	}
	dst = appendIntField(append(dst, ']'), "timestamp", m.Timestamp)
	return append(dst, '}')
}

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

func (m *FileMentionMessage) sizeHint() int {
	n := 64
	for i := range m.Files {
		f := &m.Files[i]
		n += 96 + len(f.Path) + strHint(f.Content) + len(f.SkippedReason)
		if f.Image != nil {
			n += 64 + len(f.Image.Data) + len(f.Image.MimeType)
		}
	}
	return n
}

// AppendJSON appends the decoded bytes to dst.
func (m *OpaqueMessage) AppendJSON(dst []byte) []byte { return append(dst, m.raw...) }
