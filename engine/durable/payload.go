package durable

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// Names of the workflow, its activities, updates and queries: the wire
// between fronts, workers and the recorded histories. Never rename one:
// a history recorded under the old name would no longer replay.
const (
	WorkflowName = "xcsh.session"

	ActivitySetup = "xcsh.setup"
	ActivityModel = "xcsh.model"
	ActivityTool  = "xcsh.tool"
	// ActivityCompact is an automatic compaction's summary.
	ActivityCompact = "xcsh.compact"
	// ActivityCheck checks a host tool call's arguments against its schema
	// with the worker's Validator.
	ActivityCheck = "xcsh.check"

	UpdatePrompt   = "prompt"
	UpdateSteer    = "steer"
	UpdateFollowUp = "follow_up"
	UpdateAbort    = "abort"
	UpdateAttach   = "attach"
	// UpdateInterruptMode is set_interrupt_mode.
	UpdateInterruptMode = "set_interrupt_mode"
	// Host tools: the front forwards the host's set_host_tools and its
	// replies to a host_tool_call.
	UpdateSetHostTools = "set_host_tools"
	UpdateHostResult   = "host_tool_result"
	UpdateHostPartial  = "host_tool_update"
	// UpdateDialog is the host's extension_ui_response to a dialog.
	UpdateDialog = "extension_ui_response"
	// UpdateCompact is the compact command; UpdateAutoCompaction
	// set_auto_compaction (compact_manual.go).
	UpdateCompact        = "compact"
	UpdateAutoCompaction = "set_auto_compaction"
	// UpdateSetTodos is set_todos: the host's todo list.
	UpdateSetTodos = "set_todos"

	QueryEvents   = "events"
	QueryState    = "get_state"
	QueryMessages = "get_messages"
	QueryStats    = "get_session_stats"
)

// WorkflowID is the workflow id of session id: a front started anywhere
// finds the session by it.
func WorkflowID(session string) string { return "xcsh-session-" + session }

// Start is the workflow's input: a new session has only its id; a session
// that continued as new carries its conversation and its event numbering.
type Start struct {
	SessionID string
	// Messages is the context carried over (engine encoding, one message
	// each): the compaction's summary and the kept messages.
	Messages []json.RawMessage `json:",omitempty"`
	// Seq is the number of the last event emitted before this run.
	Seq int64 `json:",omitempty"`
	// PrevRunID is the run this one continued (its events up to Seq are
	// in its log).
	PrevRunID string `json:",omitempty"`
	// Setup is the worker's configuration as the first run read it.
	Setup *Setup `json:",omitempty"`
	// Stats carries the session's totals.
	Stats Stats
	// RetryBase is the first auto-retry wait (engine.DefaultRetryBase when
	// zero).
	RetryBaseMs int64 `json:",omitempty"`
	// Continue starts this run with the developer message that resumes
	// the work after a compaction the threshold started
	// (engine.ContinueMessage), as in process.
	Continue bool `json:",omitempty"`
	// InterruptMode is set_interrupt_mode's, carried over ("": wait).
	InterruptMode string `json:",omitempty"`
	// HostTools are the host's tools (set_host_tools), carried over.
	HostTools []HostTool `json:",omitempty"`
	// HostCalls and HostCancels number the host tool requests (host_N,
	// host_cancel_N) across runs.
	HostCalls   int `json:",omitempty"`
	HostCancels int `json:",omitempty"`
	// UIRequests numbers the extension UI requests (ui_N) across runs.
	UIRequests int `json:",omitempty"`
	// HeartbeatMs bounds how long a tool call or a model call may go
	// without a heartbeat before it counts as lost (DefaultHeartbeat when
	// zero).
	HeartbeatMs int64 `json:",omitempty"`
	// Compaction is the state of compaction, carried over (compact.go).
	Compaction *CompactionCarry `json:",omitempty"`
	// Steering and FollowUps are the queued messages, carried over (a
	// compaction's continue-as-new may come while some wait).
	Steering  []json.RawMessage `json:",omitempty"`
	FollowUps []json.RawMessage `json:",omitempty"`
	// TTSRInjected names the rules injected so far (a rule fires once per
	// branch); Todos is the todo list, TodoReminders the reminders sent
	// since the last user prompt: carried over.
	TTSRInjected  []string           `json:",omitempty"`
	Todos         []engine.TodoPhase `json:",omitempty"`
	TodoReminders int                `json:",omitempty"`
}

// Setup is what the worker's configuration offers a session: read once
// by an activity, recorded, so every later decision replays the same.
type Setup struct {
	Model        engine.Model // without headers (they may hold keys)
	SystemPrompt string
	Thinking     engine.ThinkingLevel `json:",omitempty"`
	Tools        []ToolInfo
	Compaction   engine.CompactionSettings
	// TodoClearDelay is how long a finished task stays in the todo list
	// (0: engine.DefaultTodoClearDelay; negative: it stays).
	TodoClearDelay time.Duration `json:",omitempty"`
	// Cwd is the worker's working directory, where the tools run: an
	// exported session file's cwd ("" in runs recorded before it).
	Cwd string `json:",omitempty"`
}

// ToolInfo is a tool as the model is offered it, and whether a call that
// may have started before a crash can run again.
type ToolInfo struct {
	Name        string
	Description string
	Schema      json.RawMessage
	Idempotent  bool `json:",omitempty"`
}

// HostTool is a tool the host registered (engine.HostToolDef in a form
// that encodes its schema as JSON).
type HostTool struct {
	Name, Label, Description string
	Parameters               json.RawMessage
	Hidden                   bool `json:",omitempty"`
}

func hostTools(defs []engine.HostToolDef) []HostTool {
	out := make([]HostTool, 0, len(defs))
	for _, d := range defs {
		out = append(out, HostTool{Name: d.Name, Label: d.Label, Description: d.Description, Parameters: json.RawMessage(d.Parameters), Hidden: d.Hidden})
	}
	return out
}

func hostToolDefs(tools []HostTool) []engine.HostToolDef {
	out := make([]engine.HostToolDef, 0, len(tools))
	for _, t := range tools {
		out = append(out, engine.HostToolDef{Name: t.Name, Label: t.Label, Description: t.Description, Parameters: []byte(t.Parameters), Hidden: t.Hidden})
	}
	return out
}

// CompactInput is a compaction: the context and why ("threshold",
// "overflow", or "manual": the compact command).
type CompactInput struct {
	Messages    []json.RawMessage
	Reason      string
	RetryBaseMs int64 `json:",omitempty"`
	// WillRetry: the failed request is sent again once the summary is in
	// place (an overflow recovery's auto_compaction_end says so).
	WillRetry bool `json:",omitempty"`
	// CustomInstructions are the compact command's.
	CustomInstructions string `json:",omitempty"`
	// Kept is how many messages after the context's summary the latest
	// compaction kept (engine.ContextCompaction.Kept).
	Kept int `json:",omitempty"`
}

// CompactOutput is its outcome: the auto_compaction_end frame the engine
// made of it (an automatic one), or the compact command's result or
// refusal in RPC's words (by hand), and the context that follows (the
// summary and the kept messages; none when it did not succeed).
type CompactOutput struct {
	End      []byte
	Messages []json.RawMessage `json:",omitempty"`
	Result   []byte            `json:",omitempty"`
	Error    string            `json:",omitempty"`
}

// CheckInput is a host tool call to check.
type CheckInput struct {
	Call ToolInput
	Tool HostTool
}

// HostReply is the host's reply to a host_tool_call (UpdateHostResult) or
// a partial result (UpdateHostPartial), read by the RPC server's rule.
type HostReply struct {
	ID     string
	Result ToolOutput
}

// ModelInput is one model call: what the request holds, the step that
// names it (the key of its deltas), and where to push them.
type ModelInput struct {
	Step      string
	Messages  []json.RawMessage
	Endpoints []string `json:",omitempty"`
	// HostTools are the host's tools offered with the worker's.
	HostTools []HostTool `json:",omitempty"`
	// Timestamp is the message's timestamp (workflow time).
	Timestamp int64
	// Injected names the TTSR rules already injected: they are not
	// watched again.
	Injected []string `json:",omitempty"`
}

// ModelOutput is a model call's recorded result.
type ModelOutput struct {
	Message json.RawMessage // the finished assistant message
	// Cut holds the refusal text of each tool call whose arguments were
	// cut off (engine.CutText), by call id: the mark does not survive
	// encoding.
	Cut map[string]string `json:",omitempty"`
	// The provider's failure as recorded facts, so the workflow's retry
	// decision sees the typed error the engine would.
	ErrKind      engine.ErrorKind `json:",omitempty"`
	ErrTyped     bool             `json:",omitempty"`
	RetryAfterMs int64            `json:",omitempty"`
	// Rules are the TTSR rules that cut the call (its message is then
	// aborted); Deferred those that matched without interrupting.
	Rules    []engine.Rule `json:",omitempty"`
	Deferred []engine.Rule `json:",omitempty"`
}

// providerError rebuilds the typed error of a failed call, or nil.
func (o ModelOutput) providerError(msg *engine.AssistantMessage) error {
	if !o.ErrTyped || msg.StopReason != engine.StopError {
		return nil
	}
	return &engine.ProviderError{Kind: o.ErrKind, Message: msg.ErrorMessage, RetryAfter: msToDuration(o.RetryAfterMs)}
}

// ToolInput is one tool call.
type ToolInput struct {
	ID        string
	Name      string
	Arguments json.RawMessage
	// Answers are the call's questions answered so far, in order
	// (dialogs.go): the call runs again with them after each question.
	Answers []DialogAnswer `json:",omitempty"`
	// Todos is the session's todo list, sent with a todo_write call (its
	// ops change the list as it stands).
	Todos []engine.TodoPhase `json:",omitempty"`
}

// ToolOutput is a tool call's recorded result.
type ToolOutput struct {
	Content   []engine.ContentBlock
	Details   json.RawMessage `json:",omitempty"`
	IsError   bool            `json:",omitempty"`
	IsWarning bool            `json:",omitempty"`
	// Raw is a host tool's result object as the host sent it
	// (engine.ToolResult.Raw).
	Raw json.RawMessage `json:",omitempty"`
	// Ask is the question the call stopped at, not answered yet
	// (dialogs.go): the rest is empty.
	Ask *engine.DialogRequest `json:",omitempty"`
}

func (o ToolOutput) result() engine.ToolResult {
	return engine.ToolResult{Content: o.Content, Details: o.Details, IsError: o.IsError, IsWarning: o.IsWarning, Raw: o.Raw}
}

// Frame is one numbered event of the session, its RPC encoding.
type Frame struct {
	Seq int64
	// Data is bytes, not raw JSON: the data converter would escape <, >
	// and & in raw JSON, which RPC's frames never do.
	Data []byte
}

// EventsResult answers the events query: the frames after the cursor, and
// whether the cursor was older than the log keeps (Lost: the front must
// read the messages instead).
type EventsResult struct {
	Frames []Frame
	Last   int64 // the last event's number, whatever the cursor
	First  int64 // the first event the log still keeps
	Lost   bool  `json:",omitempty"`
	Busy   bool  `json:",omitempty"`
	// Base is the last event of the earlier runs, which the run PrevRunID
	// answers for (a front whose cursor is before Base asks it first).
	Base      int64  `json:",omitempty"`
	PrevRunID string `json:",omitempty"`
	// Ready: the session's set-up (the worker's configuration: its system
	// prompt, tools, model) is known.
	Ready bool `json:",omitempty"`
}

// PromptInput is the prompt, steer and follow_up updates' argument.
type PromptInput struct {
	Message string
	// StreamingBehavior is the RPC prompt's: "steer" or "followUp" queue a
	// prompt sent while the session is busy; "" refuses it.
	StreamingBehavior string `json:",omitempty"`
}

// Stats are the session's totals (get_session_stats).
type Stats struct {
	UserMessages      int          `json:"userMessages"`
	AssistantMessages int          `json:"assistantMessages"`
	ToolCalls         int          `json:"toolCalls"`
	ToolResults       int          `json:"toolResults"`
	Tokens            engine.Usage `json:"tokens"`
}

func encodeMessage(m engine.Message) json.RawMessage {
	b, err := engine.MarshalJSON(m)
	if err != nil {
		panic(fmt.Sprintf("durable: encode %s message: %v", m.Role(), err))
	}
	return b
}

func encodeMessages(ms []engine.Message) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = encodeMessage(m)
	}
	return out
}

func decodeMessages(raw []json.RawMessage) ([]engine.Message, error) {
	out := make([]engine.Message, 0, len(raw))
	for _, r := range raw {
		m, err := engine.DecodeMessage(r)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func decodeAssistant(raw json.RawMessage) (*engine.AssistantMessage, error) {
	m, err := engine.DecodeMessage(raw)
	if err != nil {
		return nil, err
	}
	a, ok := m.(*engine.AssistantMessage)
	if !ok {
		return nil, fmt.Errorf("durable: model call returned a %s message", m.Role())
	}
	return a, nil
}
