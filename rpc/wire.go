package rpc

import (
	"encoding/json"
	"slices"

	"github.com/xcsh-go/xcsh/engine"
)

// This file describes the protocol for its schema (rpc/schema, `xcsh
// schema`): each command with the Go type of its fields and of its
// answer's data. The handlers decode into and answer with these types
// (those that read a single field by name read the name the type's tag
// gives); TestWireCoversHandlers holds the list to the handlers map.

// CommandWire is one command of the protocol as the schema describes it.
type CommandWire struct {
	// Type is the command's "type".
	Type string
	// Doc says what the command does, in one sentence.
	Doc string
	// Args is a value of the struct of the command's fields (beside
	// "type" and "id"); nil: it has none.
	Args any
	// Data is a value of the type of a success's "data"; nil: a success
	// has no data key.
	Data any
	// NullData: a success may also carry "data":null.
	NullData bool
	// Reply: the frame answers a request of ours and is never answered.
	Reply bool
	// Unsupported: a command of the family this agent answers with a
	// failure at once (docs/compat.md).
	Unsupported bool
}

// QueueMode is the mode of set_steering_mode and set_follow_up_mode.
type QueueMode string

// InterruptMode is the mode of set_interrupt_mode.
type InterruptMode string

// StreamingBehavior is how a prompt sent during a run is queued.
type StreamingBehavior string

// PageOrder is the order of get_messages_page.
type PageOrder string

// The closed sets of the command fields above, for the schema's enums.
var (
	QueueModes         = []QueueMode{engine.ModeAll, engine.ModeOneAtATime}
	InterruptModes     = []InterruptMode{engine.ModeImmediate, engine.ModeWait}
	StreamingBehaviors = []StreamingBehavior{"steer", "followUp"}
	PageOrders         = []PageOrder{"asc", "desc"}
)

// ImageContent is an image attached to a prompt.
type ImageContent = imageContent

// PromptArgs are the fields of prompt, abort_and_prompt, steer and
// follow_up.
type PromptArgs struct {
	// Message is the user's text.
	Message string `json:"message"`
	// Images are attached to the message.
	Images []imageContent `json:"images,omitempty"`
	// StreamingBehavior queues a prompt sent during a run instead of
	// failing it: "steer" at the next turn boundary, "followUp" when the
	// run would stop.
	StreamingBehavior StreamingBehavior `json:"streamingBehavior,omitempty"`
	// OutputSchema is a JSON Schema the final answer must match
	// (structured output; ours).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// TraceParent is the host's W3C traceparent: the run's spans join its
	// trace when tracing is on (docs/automation.md).
	TraceParent string `json:"traceparent,omitempty"`
}

type queueModeArgs struct {
	Mode QueueMode `json:"mode"`
}

type interruptModeArgs struct {
	Mode InterruptMode `json:"mode"`
}

type nameArgs struct {
	// Name is the session's new name.
	Name string `json:"name"`
}

type bashArgs struct {
	// Command is run with bash -c in the session's directory.
	Command string `json:"command"`
}

type enabledArgs struct {
	Enabled bool `json:"enabled"`
}

type thinkingLevelArgs struct {
	// Level is a thinking level, or "inherit" (or absent) to unset it.
	Level string `json:"level,omitempty"`
}

type setModelArgs struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
}

type sessionPathArgs struct {
	// SessionPath is the session file, relative to the process's
	// directory.
	SessionPath string `json:"sessionPath"`
}

type entryArgs struct {
	// EntryID is the entry id of a user message.
	EntryID string `json:"entryId"`
}

// TodoTaskArg is one task of set_todos.
type TodoTaskArg struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
	Notes   string `json:"notes,omitempty"`
}

// TodoPhaseArg is one phase of set_todos.
type TodoPhaseArg struct {
	ID    string        `json:"id"`
	Name  string        `json:"name"`
	Tasks []TodoTaskArg `json:"tasks"`
}

type setTodosArgs struct {
	Phases []TodoPhaseArg `json:"phases"`
}

// HostToolArg is one tool of set_host_tools.
type HostToolArg struct {
	Name        string          `json:"name"`
	Label       string          `json:"label,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Hidden registers the tool without offering it to the model.
	Hidden bool `json:"hidden,omitempty"`
}

type setHostToolsArgs struct {
	Tools []HostToolArg `json:"tools"`
}

type budgetArgs struct {
	// MaxCost is the run's limit in US dollars; 0 or null removes it.
	MaxCost *float64 `json:"maxCost,omitempty"`
	// MaxTokens is the run's limit in tokens; 0 or null removes it.
	MaxTokens *int64 `json:"maxTokens,omitempty"`
	// MaxTimeMs is the run's limit in milliseconds; 0 or null removes it.
	MaxTimeMs *int64 `json:"maxTimeMs,omitempty"`
}

// UIResponse is the host's answer to a dialog (extension_ui_request).
type UIResponse struct {
	// ID is the request's id.
	ID string `json:"id"`
	// Value answers a select, input or editor.
	Value *string `json:"value,omitempty"`
	// Confirmed answers a confirm.
	Confirmed *bool `json:"confirmed,omitempty"`
	// Cancelled dismisses the dialog: its default.
	Cancelled *bool `json:"cancelled,omitempty"`
}

// HostToolContent is the content of a host tool's result.
type HostToolContent struct {
	Content []engine.ContentBlock `json:"content"`
	Details json.RawMessage       `json:"details,omitempty"`
	IsError bool                  `json:"isError,omitempty"`
}

// HostToolResult is the host's result of a host_tool_call.
type HostToolResult struct {
	// ID is the call's id (host_tool_call's "id").
	ID     string          `json:"id"`
	Result HostToolContent `json:"result"`
}

// HostToolUpdate is the host's partial result of a host_tool_call.
type HostToolUpdate struct {
	ID            string          `json:"id"`
	PartialResult HostToolContent `json:"partialResult"`
}

type textData struct {
	// Text is the last assistant message's text; absent when there is
	// none (the handler answers {} then: an empty text is still sent).
	Text string `json:"text" schema:"optional"`
}

type levelData struct {
	Level engine.ThinkingLevel `json:"level"`
}

type modelsData struct {
	Models []engine.Model `json:"models"`
}

type messagesData struct {
	Messages []engine.Message `json:"messages"`
}

type entryTextsData struct {
	Messages []engine.EntryText `json:"messages"`
}

type messagesPageArgs struct {
	Limit  *int      `json:"limit,omitempty"`
	Cursor *string   `json:"cursor,omitempty"`
	Order  PageOrder `json:"order,omitempty"`
}

type messagesPageData struct {
	Messages      []engine.Message `json:"messages"`
	TotalMessages int              `json:"totalMessages"`
	NextCursor    string           `json:"nextCursor,omitempty"`
}

type piCommandsData struct {
	Commands []piCommand `json:"commands"`
}

type ompCommandsData struct {
	Commands []ompCommand `json:"commands"`
}

type mcpServersData struct {
	Servers []mcpServer `json:"servers"`
}

type newSessionArgs struct {
	ParentSession *string `json:"parentSession,omitempty"`
}

type switchData struct {
	// Cancelled: an extension's hook cancelled the switch.
	Cancelled bool `json:"cancelled"`
}

type branchData struct {
	// Text is the text of the user message branched from.
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

type exportArgs struct {
	OutputPath *string `json:"outputPath,omitempty"`
}

type exportData struct {
	Path string `json:"path"`
}

type toolNamesData struct {
	ToolNames []string `json:"toolNames"`
}

type todosData struct {
	TodoPhases []engine.TodoPhase `json:"todoPhases"`
}

type compactArgs struct {
	CustomInstructions *string `json:"customInstructions,omitempty"`
}

// Commands lists every command of the protocol, in the order of docs/rpc.md.
func Commands() []CommandWire {
	return []CommandWire{
		{Type: "prompt", Doc: "Sends a user message; answered at once, then the run's events.", Args: PromptArgs{}},
		{Type: "abort", Doc: "Cancels the run; answered after its closing events."},
		{Type: "abort_and_prompt", Doc: "abort, then prompt.", Args: PromptArgs{}},
		{Type: "steer", Doc: "Queues a message for the next turn boundary.", Args: PromptArgs{}},
		{Type: "follow_up", Doc: "Queues a message for when the run would stop.", Args: PromptArgs{}},
		{Type: "set_steering_mode", Doc: "Sets how many steering messages a turn takes.", Args: queueModeArgs{}},
		{Type: "set_follow_up_mode", Doc: "Sets how many follow-ups a run takes.", Args: queueModeArgs{}},
		{Type: "set_interrupt_mode", Doc: "Sets whether steering interrupts the running tools.", Args: interruptModeArgs{}},
		{Type: "bash", Doc: "Runs a shell command; answered when it ends.", Args: bashArgs{}, Data: engine.BashResult{}},
		{Type: "abort_bash", Doc: "Kills running bash commands."},
		{Type: "get_state", Doc: "The session's state.", Data: engine.State{}},
		{Type: "get_messages", Doc: "The context's messages.", Data: messagesData{}},
		{Type: "get_last_assistant_text", Doc: "The text of the last assistant message.", Data: textData{}},
		{Type: "set_session_name", Doc: "Names the session.", Args: nameArgs{}},
		{Type: "get_available_models", Doc: "The models with a key.", Data: modelsData{}},
		{Type: "set_model", Doc: "Selects a model.", Args: setModelArgs{}, Data: engine.Model{}},
		{Type: "cycle_model", Doc: "Selects the next model of the scope.", Data: engine.ModelCycle{}, NullData: true},
		{Type: "set_thinking_level", Doc: "Sets the thinking level.", Args: thinkingLevelArgs{}},
		{Type: "cycle_thinking_level", Doc: "Selects the next thinking level.", Data: levelData{}, NullData: true},
		{Type: "set_auto_retry", Doc: "Turns automatic retry on or off.", Args: enabledArgs{}},
		{Type: "abort_retry", Doc: "Ends a retry wait."},
		{Type: "new_session", Doc: "Starts a new session.", Args: newSessionArgs{}, Data: switchData{}},
		{Type: "switch_session", Doc: "Resumes a session file.", Args: sessionPathArgs{}, Data: switchData{}},
		{Type: "branch", Doc: "Starts a new session file from before a user message.", Args: entryArgs{}, Data: branchData{}},
		{Type: "fork", Doc: "branch, in pi's words.", Args: entryArgs{}, Data: branchData{}},
		{Type: "clone", Doc: "Copies the current branch into a new session file.", Data: switchData{}},
		{Type: "export_html", Doc: "Writes the session as one HTML page.", Args: exportArgs{}, Data: exportData{}},
		{Type: "get_branch_messages", Doc: "Every user message of the session, all branches.", Data: entryTextsData{}},
		{Type: "get_fork_messages", Doc: "The user messages of the current branch.", Data: entryTextsData{}},
		{Type: "get_session_stats", Doc: "Counts and usage of the context.", Data: engine.SessionStats{}},
		{Type: "get_messages_page", Doc: "One page of the context's messages.", Args: messagesPageArgs{}, Data: messagesPageData{}},
		{Type: "get_commands", Doc: "The slash commands (pi's shape).", Data: piCommandsData{}},
		{Type: "get_available_commands", Doc: "The slash commands (omp's shape).", Data: ompCommandsData{}},
		{Type: "get_mcp_servers", Doc: "The MCP servers and their tools.", Data: mcpServersData{}},
		{Type: "set_fast_mode", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "get_subagents", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "get_subagent_messages", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "set_subagent_subscription", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "get_login_providers", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "login", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "handoff", Doc: "omp's; not supported.", Unsupported: true},
		{Type: "set_host_tools", Doc: "Replaces the host's tools.", Args: setHostToolsArgs{}, Data: toolNamesData{}},
		{Type: "extension_ui_response", Doc: "Answers a dialog.", Args: UIResponse{}, Reply: true},
		{Type: "host_tool_result", Doc: "The result of a host tool call.", Args: HostToolResult{}, Reply: true},
		{Type: "host_tool_update", Doc: "A partial result of a host tool call.", Args: HostToolUpdate{}, Reply: true},
		{Type: "compact", Doc: "Compacts the context.", Args: compactArgs{}, Data: engine.CompactionResult{}},
		{Type: "set_auto_compaction", Doc: "Turns automatic compaction on or off.", Args: enabledArgs{}},
		{Type: "set_budget", Doc: "Sets the run's budget (ours).", Args: budgetArgs{}, Data: engine.BudgetState{}},
		{Type: "continue", Doc: "Runs the agent again from the context as it stands (ours)."},
		{Type: "set_todos", Doc: "Replaces the todo list.", Args: setTodosArgs{}, Data: todosData{}},
	}
}

// ErrorCodes are the machine-readable codes a failed response may carry
// beside its text ("code"), sorted.
func ErrorCodes() []string {
	var out []string
	for _, c := range wireCodes {
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
