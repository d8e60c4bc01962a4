package client

import "encoding/json"

// Model is a model as the agent reports it (get_state, set_model,
// get_available_models). Raw keeps the whole object for keys not typed here
// (headers, compat, …).
type Model struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	BaseURL       string    `json:"baseUrl"`
	Reasoning     bool      `json:"reasoning"`
	Input         []string  `json:"input"`
	Cost          ModelCost `json:"cost"`
	ContextWindow int       `json:"contextWindow"`
	// MaxContextWindow is how far the window may grow (a local server's
	// model); 0 when it does not.
	MaxContextWindow int             `json:"maxContextWindow,omitempty"`
	MaxTokens        int             `json:"maxTokens"`
	Thinking         *ThinkingRange  `json:"thinking,omitempty"`
	Raw              json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the typed keys and keeps the whole object in Raw.
func (m *Model) UnmarshalJSON(b []byte) error {
	type plain Model
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	m.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// ModelCost is a model's price per million tokens, in dollars.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// ThinkingRange is the range of thinking levels a reasoning model supports.
type ThinkingRange struct {
	MinLevel string `json:"minLevel"`
	MaxLevel string `json:"maxLevel"`
	Mode     string `json:"mode"`
}

// State is get_state's data; every key of docs/rpc.md. The optional keys
// (Model, ThinkingLevel, SessionFile, SessionName) are zero when absent.
type State struct {
	Model                 *Model      `json:"model,omitempty"`
	ThinkingLevel         string      `json:"thinkingLevel,omitempty"`
	IsStreaming           bool        `json:"isStreaming"`
	IsCompacting          bool        `json:"isCompacting"`
	SteeringMode          string      `json:"steeringMode"`
	FollowUpMode          string      `json:"followUpMode"`
	InterruptMode         string      `json:"interruptMode"`
	SessionFile           string      `json:"sessionFile,omitempty"`
	SessionID             string      `json:"sessionId"`
	SessionName           string      `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool        `json:"autoCompactionEnabled"`
	MessageCount          int         `json:"messageCount"`
	QueuedMessageCount    int         `json:"queuedMessageCount"`
	PendingMessageCount   int         `json:"pendingMessageCount"`
	TodoPhases            []TodoPhase `json:"todoPhases"`
	SystemPrompt          string      `json:"systemPrompt"`
	DumpTools             []ToolInfo  `json:"dumpTools"`
	// Budget is the run's budget and spending; nil while no limit is set.
	Budget *BudgetState `json:"budget,omitempty"`
}

// TodoPhase is one phase of the todo list (get_state.todoPhases, set_todos).
type TodoPhase struct {
	ID    string     `json:"id"`
	Name  string     `json:"name"`
	Tasks []TodoItem `json:"tasks"`
}

// TodoItem is one task of a TodoPhase.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
	Notes   string `json:"notes,omitempty"`
	Details string `json:"details,omitempty"` // from todo_write; set_todos drops it
}

// CompactionResult is the compact command's answer and
// auto_compaction_end's result.
type CompactionResult struct {
	Summary          string          `json:"summary"`
	ShortSummary     string          `json:"shortSummary,omitempty"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	TokensBefore     int64           `json:"tokensBefore"`
	Details          json.RawMessage `json:"details,omitempty"`
	PreserveData     json.RawMessage `json:"preserveData,omitempty"`
}

// ToolInfo is an active tool as get_state.dumpTools lists it.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Content is one block of a message: text, thinking, image or toolCall.
type Content struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Data      string          `json:"data,omitempty"`
	MimeType  string          `json:"mimeType,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Image is an image attached to a prompt, steer or follow-up (base64 data).
type Image struct {
	Data     string
	MimeType string
}

// Message is a light typed view of an agent message of any role; Raw keeps
// the whole object (usage, attribution, bashExecution fields, …).
type Message struct {
	Role         string          `json:"role"`
	Content      []Content       `json:"-"`
	Timestamp    int64           `json:"timestamp"`
	StopReason   string          `json:"stopReason,omitempty"`
	ErrorMessage string          `json:"errorMessage,omitempty"`
	Model        string          `json:"model,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	ToolName     string          `json:"toolName,omitempty"`
	IsError      bool            `json:"isError,omitempty"`
	Raw          json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the typed keys and keeps the whole object in Raw.
// content is a string in some roles of the original, so it is read
// leniently: a string becomes one text block.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var aux struct {
		*plain
		Content json.RawMessage `json:"content"`
	}
	aux.plain = (*plain)(m)
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	m.Content = nil
	if len(aux.Content) > 0 && aux.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(aux.Content, &s); err != nil {
			return err
		}
		m.Content = []Content{{Type: "text", Text: s}}
	} else if len(aux.Content) > 0 && string(aux.Content) != "null" {
		if err := json.Unmarshal(aux.Content, &m.Content); err != nil {
			return err
		}
	}
	m.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Text is the message's text blocks concatenated.
func (m *Message) Text() string {
	var s string
	for _, c := range m.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// BashResult is the data of the bash command. ExitCode is nil when the
// command was cancelled or timed out.
type BashResult struct {
	ExitCode    *int   `json:"exitCode,omitempty"`
	Cancelled   bool   `json:"cancelled"`
	NewCwd      string `json:"newCwd,omitempty"`
	Output      string `json:"output"`
	Truncated   bool   `json:"truncated"`
	TotalLines  int    `json:"totalLines"`
	TotalBytes  int    `json:"totalBytes"`
	OutputLines int    `json:"outputLines"`
	OutputBytes int    `json:"outputBytes"`
	ArtifactID  string `json:"artifactId,omitempty"`
}

// CycleModelResult is cycle_model's data.
type CycleModelResult struct {
	Model         Model  `json:"model"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	IsScoped      bool   `json:"isScoped"`
}

// SessionStats is get_session_stats's data.
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            TokenStats    `json:"tokens"`
	Cost              float64       `json:"cost"`
	PremiumRequests   float64       `json:"premiumRequests"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
}

// TokenStats sums token usage over the context.
type TokenStats struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUsage is the last successful assistant message's usage against the
// model's context window.
type ContextUsage struct {
	Tokens        int     `json:"tokens"`
	ContextWindow int     `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// BranchMessage is a user message a branch or fork can start from.
type BranchMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// BranchResult is the data of branch and fork: the chosen message's text,
// for the host to edit and send again.
type BranchResult struct {
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

// PageOptions selects a page of get_messages_page. Zero values are omitted
// (the agent's defaults: 100 messages, oldest first).
type PageOptions struct {
	Limit  int
	Cursor string
	// Order is "asc" or "desc" (from the newest).
	Order string
}

// MessagesPage is get_messages_page's data; NextCursor is empty on the
// last page.
type MessagesPage struct {
	Messages      []Message `json:"messages"`
	TotalMessages int       `json:"totalMessages"`
	NextCursor    string    `json:"nextCursor,omitempty"`
}

// Command is a slash command, prompt template or skill the agent offers
// (get_commands, get_available_commands); Raw keeps the whole object.
type Command struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Raw         json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes the typed keys and keeps the whole object in Raw.
func (c *Command) UnmarshalJSON(b []byte) error {
	type plain Command
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}
