package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// ATIFVersion is the Agent Trajectory Interchange Format version WriteATIF
// writes: Harbor's RFC 0001 as its models define it (the schema in
// testdata/atif, with its source).
const ATIFVersion = "ATIF-v1.6"

// ATIFOptions configure WriteATIF.
type ATIFOptions struct {
	// AgentVersion is agent.version (the xcsh that exports).
	AgentVersion string
	// AppendOnly asks for a strictly appending history, as RL training
	// needs (each model call's context is the previous one's plus what
	// followed): a branch whose context was ever rewritten (a compaction,
	// tool output pruned, a branch summary) is refused with
	// ErrNotAppendOnly instead of exported, and the trajectory says it is
	// append-only (extra.append_only, notes).
	AppendOnly bool
}

// ErrNotAppendOnly is why WriteATIF refuses an AppendOnly export.
var ErrNotAppendOnly = errors.New("the history is not strictly appending")

// ErrEmpty is a session with nothing to export.
var ErrEmpty = errors.New("nothing to export")

// The trajectory's JSON, after Harbor's models (field names, what is
// optional); omitempty where a field is optional.
type atifTrajectory struct {
	SchemaVersion string          `json:"schema_version"`
	SessionID     string          `json:"session_id"`
	Agent         atifAgent       `json:"agent"`
	Steps         []*atifStep     `json:"steps"`
	Notes         string          `json:"notes,omitempty"`
	FinalMetrics  *atifFinal      `json:"final_metrics,omitempty"`
	Extra         *trajectoryMeta `json:"extra,omitempty"`
}

type atifAgent struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	ModelName string `json:"model_name,omitempty"`
}

type atifStep struct {
	StepID           int             `json:"step_id"`
	Timestamp        string          `json:"timestamp,omitempty"`
	Source           string          `json:"source"`
	ModelName        string          `json:"model_name,omitempty"`
	Message          string          `json:"message"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []atifToolCall  `json:"tool_calls,omitempty"`
	Observation      *atifObs        `json:"observation,omitempty"`
	Metrics          *atifMetrics    `json:"metrics,omitempty"`
	Extra            map[string]any  `json:"extra,omitempty"`
	calls            map[string]bool // the ids of ToolCalls, to attach results
}

type atifToolCall struct {
	ToolCallID   string          `json:"tool_call_id"`
	FunctionName string          `json:"function_name"`
	Arguments    json.RawMessage `json:"arguments"`
}

type atifObs struct {
	Results []atifResult `json:"results"`
}

type atifResult struct {
	SourceCallID string `json:"source_call_id,omitempty"`
	Content      string `json:"content"`
}

type atifMetrics struct {
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	CachedTokens     int64   `json:"cached_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

type atifFinal struct {
	TotalPromptTokens     int64   `json:"total_prompt_tokens"`
	TotalCompletionTokens int64   `json:"total_completion_tokens"`
	TotalCachedTokens     int64   `json:"total_cached_tokens"`
	TotalCostUSD          float64 `json:"total_cost_usd"`
	TotalSteps            int     `json:"total_steps"`
}

type trajectoryMeta struct {
	AppendOnly  bool     `json:"append_only"`
	Compactions []int    `json:"compactions,omitempty"` // the steps that replaced the context before them
	SessionFile string   `json:"session_file,omitempty"`
	Title       string   `json:"title,omitempty"`
	Cwd         string   `json:"cwd,omitempty"`
	Rewrites    []string `json:"-"`
}

// WriteATIF writes d's current branch (root to leaf) as an ATIF trajectory,
// one line of JSON:
// a user message is a user step; an assistant message an agent step (its
// text, thinking as reasoning_content, tool calls, its model, and its
// token and cost metrics), the tool results that answer its calls are that
// step's observation; a compaction or branch summary is a system step whose
// message is the summary; a shell command the user ran (RPC bash) and an
// extension's message are user steps marked in extra.type. Images are not
// carried (the step's extra counts them). It fails with engine.ErrNoEntry
// when d.Leaf names no entry, ErrNotAppendOnly (AppendOnly) when the
// branch's context was rewritten, and the writer's error.
func WriteATIF(w io.Writer, d Data, o ATIFOptions) error {
	t, err := trajectory(&d, o)
	if err != nil {
		return err
	}
	// One line: a trajectory per line appends to a JSONL data set.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return fmt.Errorf("export atif: %w", err)
	}
	return nil
}

func trajectory(d *Data, o ATIFOptions) (*atifTrajectory, error) {
	byID := make(map[string]*engine.Entry, len(d.Entries))
	for _, e := range d.Entries {
		byID[e.ID] = e
	}
	var branch []*engine.Entry
	if d.Leaf != "" {
		if byID[d.Leaf] == nil {
			return nil, fmt.Errorf("export atif: %w: %s", engine.ErrNoEntry, d.Leaf)
		}
		path := pathToRoot(byID, d.Leaf, nil)
		for i := len(path) - 1; i >= 0; i-- {
			branch = append(branch, path[i])
		}
	}
	t := &atifTrajectory{SchemaVersion: ATIFVersion, SessionID: d.SessionID, Agent: atifAgent{Name: "xcsh", Version: o.AgentVersion},
		Steps: []*atifStep{}, Extra: &trajectoryMeta{AppendOnly: o.AppendOnly, SessionFile: d.SessionFile, Title: d.Title, Cwd: d.Cwd}}
	if t.Agent.Version == "" {
		t.Agent.Version = "unknown"
	}
	b := &builder{t: t, meta: t.Extra}
	for _, e := range branch {
		b.entry(e)
	}
	if len(t.Steps) == 0 {
		return nil, fmt.Errorf("export atif: %w: the branch has no message (a trajectory has at least one step)", ErrEmpty)
	}
	if o.AppendOnly && len(b.meta.Rewrites) > 0 {
		return nil, fmt.Errorf("%w: %s; run with automatic compaction off (set_auto_compaction) for a trajectory to train on",
			ErrNotAppendOnly, strings.Join(b.meta.Rewrites, "; "))
	}
	f := &atifFinal{TotalSteps: len(t.Steps)}
	for _, s := range t.Steps {
		if m := s.Metrics; m != nil {
			f.TotalPromptTokens += m.PromptTokens
			f.TotalCompletionTokens += m.CompletionTokens
			f.TotalCachedTokens += m.CachedTokens
			f.TotalCostUSD += m.CostUSD
		}
	}
	t.FinalMetrics = f
	t.Agent.ModelName = b.model
	switch {
	case o.AppendOnly:
		t.Notes = "Strictly appending: no compaction, pruning or branch summary rewrote the context; each agent step's context is the steps before it."
	case len(b.meta.Rewrites) > 0:
		t.Notes = "Not strictly appending: " + strings.Join(b.meta.Rewrites, "; ") + ". Steps after a compaction saw its summary instead of the steps it replaced."
	}
	return t, nil
}

// builder turns a branch into steps.
type builder struct {
	t     *atifTrajectory
	meta  *trajectoryMeta
	model string // the first agent step's model, the trajectory's default
}

func (b *builder) add(s *atifStep, ts int64) *atifStep {
	s.StepID = len(b.t.Steps) + 1
	if ts > 0 {
		s.Timestamp = time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	b.t.Steps = append(b.t.Steps, s)
	return s
}

func (b *builder) entry(e *engine.Entry) {
	switch e.Type {
	case engine.EntryMessage:
		b.message(e.Message, e.Timestamp)
	case engine.EntryCustomMessage:
		if m := e.CustomMessage; m != nil {
			b.add(&atifStep{Source: "user", Message: textOf(m.Content), Extra: map[string]any{"type": "custom", "custom_type": m.CustomType}}, e.Timestamp)
		}
	case engine.EntryCompaction:
		if c := e.Compaction; c != nil {
			s := b.add(&atifStep{Source: "system", Message: c.Summary, Extra: map[string]any{"type": "compaction", "tokens_before": c.TokensBefore}}, e.Timestamp)
			b.meta.Compactions = append(b.meta.Compactions, s.StepID)
			b.meta.Rewrites = append(b.meta.Rewrites, fmt.Sprintf("step %d is a compaction", s.StepID))
		}
	case engine.EntryBranchSummary:
		if bs := e.BranchSummary; bs != nil {
			s := b.add(&atifStep{Source: "system", Message: bs.Summary, Extra: map[string]any{"type": "branch_summary"}}, e.Timestamp)
			b.meta.Rewrites = append(b.meta.Rewrites, fmt.Sprintf("step %d summarises an abandoned branch", s.StepID))
		}
	}
}

func (b *builder) message(m engine.Message, ts int64) {
	switch m := m.(type) {
	case *engine.UserMessage:
		s := &atifStep{Source: "user", Message: textOf(m.Content)}
		if n := images(m.Content); n > 0 {
			s.Extra = map[string]any{"images": n}
		}
		b.add(s, ts)
	case *engine.AssistantMessage:
		b.assistant(m, ts)
	case *engine.ToolResultMessage:
		b.result(m, ts)
	case *engine.BashExecutionMessage:
		text := "$ " + m.Command
		if m.Output != "" {
			text += "\n" + m.Output
		}
		extra := map[string]any{"type": "bash_execution"}
		if m.ExitCode != nil {
			extra["exit_code"] = *m.ExitCode
		}
		b.add(&atifStep{Source: "user", Message: text, Extra: extra}, ts)
	case *engine.CustomMessage:
		b.add(&atifStep{Source: "user", Message: textOf(m.Content), Extra: map[string]any{"type": "custom", "custom_type": m.CustomType}}, ts)
	case *engine.BranchSummaryMessage:
		b.add(&atifStep{Source: "system", Message: m.Summary, Extra: map[string]any{"type": "branch_summary"}}, ts)
	}
}

func (b *builder) assistant(m *engine.AssistantMessage, ts int64) {
	model := m.Model
	if m.Provider != "" && model != "" {
		model = m.Provider + "/" + model
	}
	if b.model == "" {
		b.model = model
	}
	s := &atifStep{Source: "agent", ModelName: model, calls: map[string]bool{}}
	var text, thinking []string
	for _, c := range m.Content {
		switch c.Type {
		case engine.BlockText:
			text = append(text, c.Text)
		case engine.BlockThinking:
			thinking = append(thinking, c.Thinking)
		case engine.BlockToolCall:
			s.ToolCalls = append(s.ToolCalls, atifToolCall{ToolCallID: c.ID, FunctionName: c.Name, Arguments: objectArgs(c.Arguments)})
			s.calls[c.ID] = true
		}
	}
	s.Message = strings.Join(text, "\n")
	s.ReasoningContent = strings.Join(thinking, "\n")
	u := m.Usage
	s.Metrics = &atifMetrics{PromptTokens: u.Input + u.CacheRead + u.CacheWrite, CompletionTokens: u.Output, CachedTokens: u.CacheRead, CostUSD: u.Cost.Total}
	s.Extra = map[string]any{"stop_reason": string(m.StopReason)}
	if m.ErrorMessage != "" {
		s.Extra["error"] = m.ErrorMessage
	}
	b.add(s, ts)
}

// result attaches a tool result to the agent step whose call it answers
// (ATIF keeps a step's observation on the step that acted); one that
// answers no call on the branch becomes a system step's observation.
func (b *builder) result(m *engine.ToolResultMessage, ts int64) {
	r := atifResult{SourceCallID: m.ToolCallID, Content: textOf(m.Content)}
	if m.PrunedAt > 0 {
		b.meta.Rewrites = append(b.meta.Rewrites, fmt.Sprintf("the output of tool call %s was pruned", m.ToolCallID))
	}
	for i := len(b.t.Steps) - 1; i >= 0; i-- {
		s := b.t.Steps[i]
		if s.calls[m.ToolCallID] {
			if s.Observation == nil {
				s.Observation = &atifObs{}
			}
			s.Observation.Results = append(s.Observation.Results, r)
			if m.IsError {
				errs, _ := s.Extra["tool_errors"].([]string)
				s.Extra["tool_errors"] = append(errs, m.ToolCallID)
			}
			return
		}
	}
	r.SourceCallID = ""
	b.add(&atifStep{Source: "system", Message: "", Observation: &atifObs{Results: []atifResult{r}},
		Extra: map[string]any{"type": "tool_result", "tool_call_id": m.ToolCallID, "tool_name": m.ToolName}}, ts)
}

// objectArgs is a call's arguments as the JSON object ATIF asks for: a
// call cut off or not an object is kept whole as {"_raw": "<text>"}.
func objectArgs(a []byte) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(a) > 0 && json.Unmarshal(a, &obj) == nil && obj != nil {
		return json.RawMessage(a)
	}
	raw, _ := json.Marshal(map[string]string{"_raw": string(a)})
	return raw
}

func textOf(blocks []engine.ContentBlock) string {
	var parts []string
	for _, c := range blocks {
		if c.Type == engine.BlockText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func images(blocks []engine.ContentBlock) int {
	n := 0
	for _, c := range blocks {
		if c.Type == engine.BlockImage {
			n++
		}
	}
	return n
}
