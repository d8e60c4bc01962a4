package engine

import "encoding/json"

// State is the payload of get_state (rpc-protocol.md §4.7), in wire key
// order. Optional keys are omitted exactly where the original omits them.
type State struct {
	Model                 *Model        `json:"model,omitempty"`
	ThinkingLevel         ThinkingLevel `json:"thinkingLevel,omitempty"`
	IsStreaming           bool          `json:"isStreaming"`
	IsCompacting          bool          `json:"isCompacting"`
	SteeringMode          string        `json:"steeringMode"`
	FollowUpMode          string        `json:"followUpMode"`
	InterruptMode         string        `json:"interruptMode"`
	SessionFile           string        `json:"sessionFile,omitempty"`
	SessionID             string        `json:"sessionId"`
	SessionName           string        `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool          `json:"autoCompactionEnabled"`
	MessageCount          int           `json:"messageCount"`
	QueuedMessageCount    int           `json:"queuedMessageCount"`
	// PendingMessageCount is pi's name for QueuedMessageCount; both are
	// sent so every host's typed state is whole.
	PendingMessageCount int         `json:"pendingMessageCount"`
	TodoPhases          []TodoPhase `json:"todoPhases"`
	SystemPrompt        string      `json:"systemPrompt"`
	DumpTools           []ToolDump  `json:"dumpTools"`
	// Sandbox is the sandbox the agent's commands and file tools run in
	// (docs/sandbox.md); absent when it is off.
	Sandbox *SandboxState `json:"sandbox,omitempty"`
	// SessionSaveError says why the session is not being saved, while it
	// is not (a full or read-only disk); absent when every entry is on
	// disk.
	SessionSaveError string `json:"sessionSaveError,omitempty"`
	// Budget is the run's budget and what it has spent (budget.go);
	// absent while no limit is set.
	Budget *BudgetState `json:"budget,omitempty"`
}

// SandboxState is get_state.sandbox: the mode, whether commands may use
// the network, the roots they and the file tools may write in, and how
// the kernel enforces it.
type SandboxState struct {
	Mode          string             `json:"mode"`
	Network       bool               `json:"network"`
	WritableRoots []string           `json:"writableRoots"`
	Enforcement   SandboxEnforcement `json:"enforcement"`
}

// SandboxEnforcement says how the kernel holds commands to the sandbox:
// filesystem "landlock" or "none", network "namespace", "landlock-tcp",
// "none" or "open".
type SandboxEnforcement struct {
	Filesystem string `json:"filesystem"`
	Network    string `json:"network"`
}

// TodoPhase is a named group of todo tasks (see todo.go).
type TodoPhase struct {
	ID    string     `json:"id,omitempty"`
	Name  string     `json:"name,omitempty"`
	Tasks []TodoItem `json:"tasks"`
}

// TodoItem is one todo task. Details comes only from todo_write (set_todos
// drops it, as the original's projection does).
type TodoItem struct {
	ID      string `json:"id,omitempty"`
	Content string `json:"content,omitempty"`
	Status  string `json:"status,omitempty"`
	Notes   string `json:"notes,omitempty"`
	Details string `json:"details,omitempty"`
}

// ToolDump describes an active tool in get_state.dumpTools.
type ToolDump struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Queue and interrupt modes.
const (
	ModeAll        = "all"
	ModeOneAtATime = "one-at-a-time"
	ModeImmediate  = "immediate"
	ModeWait       = "wait"
)

// stateCache keeps the encodings of the rarely-changing parts of State
// (model, system prompt, tools), so get_state costs a few appends. It is
// actor-owned and keyed by the settings version: any change to the
// settings (a same-size tool set included) re-encodes them.
type stateCache struct {
	version    uint64 // settings version encoded; 0: nothing cached
	modelJSON  []byte
	promptJSON []byte
	toolsJSON  []byte
	// sandbox is State.Sandbox: set once at start-up (SetSandbox), not a
	// cache, kept here so the session's own fields stay as they are.
	sandbox *SandboxState
}

// AppendStateJSON appends the encoding of State() (byte-identical to
// MarshalJSON of it). (actor)
func (s *Session) AppendStateJSON(dst []byte) []byte {
	st := s.State()
	st.Sandbox = s.stateCache.sandbox
	return appendState(dst, st, &s.stateCache, s.set.version)
}

// SetSandbox sets get_state.sandbox; nil omits the key (sandbox off). The
// CLI calls it once, before any command. (actor)
func (s *Session) SetSandbox(sb *SandboxState) { s.stateCache.sandbox = sb }
