package schema

import (
	"encoding/json"

	"github.com/xcsh-go/xcsh/engine"
)

// The shapes of the frames whose encoding the engine writes by hand
// (AppendJSON): their keys in wire order, the "type" (and a UI request's
// "id" and "method") aside, which the generator adds from the event
// itself. TestShapesMatchEncoders encodes every event of events with its
// fields set and unset through the engine's own encoder and validates the
// frame against the schema (closed objects: a key the shape lacks fails),
// so a shape cannot drift from its encoder unseen.

// AgentStartEvent opens a run.
type agentStart struct{}

// AgentEndEvent closes a run.
type agentEnd struct {
	// Messages are the messages the run added.
	Messages []engine.Message `json:"messages"`
	// StopReason is "budget_reached" when the run stopped on its budget
	// (ours, additive: absent otherwise).
	StopReason AgentEndStopReason `json:"stopReason,omitempty"`
	// Budget is the budget the run stopped on.
	Budget *budgetReached `json:"budget,omitempty"`
}

// AgentEndStopReason is agent_end's stopReason.
type AgentEndStopReason string

// budgetReached is the budget a run stopped on: which, what the run had
// spent and the limit (US dollars, tokens, milliseconds).
type budgetReached struct {
	Name  engine.BudgetKind `json:"name"`
	Spent float64           `json:"spent"`
	Limit float64           `json:"limit"`
}

// TurnStartEvent opens a turn: one model call and its tool round.
type turnStart struct{}

// TurnEndEvent closes a turn.
type turnEnd struct {
	Message     *engine.AssistantMessage    `json:"message"`
	ToolResults []*engine.ToolResultMessage `json:"toolResults"`
}

// MessageStartEvent announces a message.
type messageStart struct {
	Message engine.Message `json:"message"`
}

// MessageEndEvent completes a message.
type messageEnd struct {
	Message engine.Message `json:"message"`
}

// MessageUpdateEvent is one streaming step of the assistant message.
type messageUpdate struct {
	AssistantMessageEvent assistantMessageEvent `json:"assistantMessageEvent"`
	// Message is the assistant message so far (absent with
	// --rpc-updates=delta).
	Message *engine.AssistantMessage `json:"message,omitempty"`
}

// AssistantMessageEvent is the step: a block's start, a delta of it or
// its end.
type assistantMessageEvent struct {
	Type engine.UpdateKind `json:"type"`
	// ContentIndex is the block's index in the message's content.
	ContentIndex int `json:"contentIndex"`
	// Delta is the text added (*_delta).
	Delta string `json:"delta,omitempty"`
	// Content is the block's whole text (text_end, thinking_end).
	Content string `json:"content,omitempty"`
	// ToolCall is the finished tool call (toolcall_end).
	ToolCall *engine.ContentBlock `json:"toolCall,omitempty"`
	// Partial is the assistant message so far (absent with
	// --rpc-updates=delta).
	Partial *engine.AssistantMessage `json:"partial,omitempty"`
}

// ToolExecutionStartEvent announces a tool call's execution.
type toolExecutionStart struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	// Intent is what the model said the call is for.
	Intent string `json:"intent,omitempty"`
}

// ToolExecutionUpdateEvent carries a tool's partial output.
type toolExecutionUpdate struct {
	ToolCallID    string          `json:"toolCallId"`
	ToolName      string          `json:"toolName"`
	Args          json.RawMessage `json:"args"`
	PartialResult json.RawMessage `json:"partialResult"`
}

// ToolExecutionEndEvent carries a tool's result.
type toolExecutionEnd struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Result is {"content":[…],"details"?:…}.
	Result  json.RawMessage `json:"result"`
	IsError bool            `json:"isError"`
	// IsWarning is absent on the placeholder result of a call an abort
	// left unexecuted.
	IsWarning bool `json:"isWarning" schema:"optional"`
}

// AutoRetryStartEvent announces a retry wait after a transient failure.
type autoRetryStart struct {
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
}

// AutoRetryEndEvent closes a retry.
type autoRetryEnd struct {
	Success    bool   `json:"success"`
	Attempt    int    `json:"attempt"`
	FinalError string `json:"finalError,omitempty"`
}

// CompactionReason is why an automatic compaction started.
type CompactionReason string

// AutoCompactionStartEvent opens an automatic compaction.
type autoCompactionStart struct {
	Reason CompactionReason `json:"reason"`
	Action string           `json:"action"`
}

// AutoCompactionEndEvent closes an automatic compaction.
type autoCompactionEnd struct {
	Action string `json:"action"`
	// Result is absent when the compaction failed, was aborted or skipped.
	Result       *compactionResult `json:"result,omitempty"`
	Aborted      bool              `json:"aborted"`
	WillRetry    bool              `json:"willRetry"`
	ErrorMessage string            `json:"errorMessage,omitempty"`
	Skipped      bool              `json:"skipped,omitempty"`
}

// CompactionResult is the outcome of a compaction: compact's answer and
// auto_compaction_end's result.
type compactionResult struct {
	Summary          string `json:"summary"`
	ShortSummary     string `json:"shortSummary,omitempty"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int64  `json:"tokensBefore"`
	// Details is {readFiles, modifiedFiles}.
	Details      json.RawMessage `json:"details,omitempty"`
	PreserveData json.RawMessage `json:"preserveData,omitempty"`
}

// BudgetState is the budget as get_state and set_budget show it: the
// limits set, and what the current run, or the last, has spent.
type budgetState struct {
	MaxCost   float64     `json:"maxCost,omitempty"`
	MaxTokens int64       `json:"maxTokens,omitempty"`
	MaxTimeMs int64       `json:"maxTimeMs,omitempty"`
	Spent     budgetSpent `json:"spent"`
}

// BudgetSpent is what a run has spent.
type budgetSpent struct {
	Cost   float64 `json:"cost"`
	Tokens int64   `json:"tokens"`
	TimeMs int64   `json:"timeMs"`
}

// QueueUpdateEvent shows the steering and follow-up queues whenever
// either changes.
type queueUpdate struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// OutputSchemaRetryEvent: the answer did not match the output schema,
// the model is asked again.
type outputSchemaRetry struct {
	Attempt     int      `json:"attempt"`
	MaxAttempts int      `json:"maxAttempts"`
	Errors      []string `json:"errors"`
}

// OutputSchemaEndEvent: the answer matched (output) or, after the
// retries, did not (errors).
type outputSchemaEnd struct {
	Success bool            `json:"success"`
	Retries int             `json:"retries"`
	Output  json.RawMessage `json:"output,omitempty"`
	Errors  []string        `json:"errors,omitempty"`
}

// TodoReminderEvent: the run would stop with tasks open.
type todoReminder struct {
	Todos       []todoRef `json:"todos"`
	Attempt     int       `json:"attempt"`
	MaxAttempts int       `json:"maxAttempts"`
}

// TodoRef is an open task of a todo reminder.
type todoRef struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// TodoAutoClearEvent: a finished task left the list.
type todoAutoClear struct{}

// TtsrTriggeredEvent: rules cut the stream.
type ttsrTriggered struct {
	Rules []rule `json:"rules"`
}

// Rule is a rule as ttsr_triggered shows it.
type rule struct {
	Name          string   `json:"name"`
	Path          string   `json:"path"`
	Content       string   `json:"content"`
	Globs         []string `json:"globs,omitempty"`
	AlwaysApply   bool     `json:"alwaysApply,omitempty"`
	Description   string   `json:"description,omitempty"`
	Condition     []string `json:"condition"`
	Scope         []string `json:"scope,omitempty"`
	InterruptMode string   `json:"interruptMode,omitempty"`
}

// ExtensionErrorEvent: an extension failed while handling an event.
type extensionError struct {
	ExtensionPath string `json:"extensionPath"`
	// Event is the event it was handling ("command" for a slash command).
	Event string `json:"event"`
	Error string `json:"error"`
}

// HostToolCallFrame asks the host to run one of its tools.
type hostToolCall struct {
	// ID is the request's id, which the host's replies carry.
	ID         string          `json:"id"`
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments"`
}

// HostToolCancelFrame withdraws a host tool call.
type hostToolCancel struct {
	ID string `json:"id"`
	// TargetID is the withdrawn call's id.
	TargetID string `json:"targetId"`
}

// NotifyType is the kind of a notify request.
type NotifyType string

// UiNotify shows a message to the host's user.
type uiNotify struct {
	Message    string     `json:"message"`
	NotifyType NotifyType `json:"notifyType,omitempty"`
}

// UiSelect asks the user to pick one of the options.
type uiSelect struct {
	Title   string   `json:"title"`
	Options []string `json:"options"`
	// Timeout (ms) resolves the dialog to its default.
	Timeout int64 `json:"timeout,omitempty"`
}

// UiConfirm asks the user to confirm.
type uiConfirm struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	Timeout int64  `json:"timeout,omitempty"`
}

// UiInput asks the user for a line of text.
type uiInput struct {
	Title       string `json:"title"`
	Placeholder string `json:"placeholder,omitempty"`
	Timeout     int64  `json:"timeout,omitempty"`
}

// UiEditor asks the user for text in an editor.
type uiEditor struct {
	Title   string `json:"title"`
	Prefill string `json:"prefill,omitempty"`
}

// UiCancel withdraws a dialog (timed out, or its call aborted).
type uiCancel struct {
	TargetID string `json:"targetId"`
}

// UiSetTitle names the host's window.
type uiSetTitle struct {
	Title string `json:"title"`
}

// UiSetStatus sets (or, without statusText, clears) a keyed status line.
type uiSetStatus struct {
	StatusKey  string `json:"statusKey"`
	StatusText string `json:"statusText,omitempty"`
}

// UiSetWidget shows keyed lines above or below the host's editor.
type uiSetWidget struct {
	WidgetKey       string   `json:"widgetKey"`
	WidgetLines     []string `json:"widgetLines,omitempty"`
	WidgetPlacement string   `json:"widgetPlacement,omitempty"`
}

// UiSetEditorText puts text in the host's input box.
type uiSetEditorText struct {
	Text string `json:"text"`
}
