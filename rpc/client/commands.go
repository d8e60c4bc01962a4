package client

import (
	"context"
	"encoding/json"
	"fmt"
)

// target is the command surface of one session: the connection's own
// (the commands without a sessionId, as --mode rpc has them) or a session
// by id (every command with its sessionId). Client and Session embed it,
// so both have every typed command; each has its own host tool and
// dialog handlers.
type target struct {
	c *Client
	s *Session // nil for the connection's own session

	// Guarded by c.mu.
	tools     map[string]HostTool // nil: never registered (a session by id then leaves calls to the client that did)
	toolCalls map[string]context.CancelCauseFunc
	ui        UIHandler
	uiCalls   map[string]context.CancelCauseFunc
}

func newTarget(c *Client, s *Session) target {
	return target{c: c, s: s, toolCalls: map[string]context.CancelCauseFunc{}, uiCalls: map[string]context.CancelCauseFunc{}}
}

// Call sends a command of any type with the fields of fields (a struct or
// map that encodes as a JSON object, or nil) and returns its data: nil when
// the response has none, "null" when it is null. On a Session the command
// carries its sessionId. A failure is a *CommandError, also when the agent
// answers without an id: an "Unknown command" frame or a "parse" frame is
// matched to a waiting request by rule (see Client.resolve), so the caller
// does not wait out its timeout. The id and type are written after the
// fields, so a field named "id" or "type" cannot replace them (the agent
// reads a repeated key's last value).
func (t *target) Call(ctx context.Context, typ string, fields any) (json.RawMessage, error) {
	f, _, err := t.c.do(ctx, request{typ: typ, fields: fields, t: t})
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// call sends a typed command and decodes its data into out (when out is
// non-nil and data is present).
func (t *target) call(ctx context.Context, typ string, fields any, out any) error {
	f, _, err := t.c.do(ctx, request{typ: typ, fields: fields, t: t})
	if err != nil {
		return err
	}
	return decodeData(typ, f, out)
}

func decodeData(typ string, f *frame, out any) error {
	if out == nil || len(f.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(f.Data, out); err != nil {
		return fmt.Errorf("xcsh %s: decoding data: %w", typ, err)
	}
	return nil
}

// Timing (docs/rpc.md): most commands are answered at once. These wait for
// their work and may take long; give them a ctx with a longer deadline
// when Options.Timeout is too short:
//   - Abort, AbortAndPrompt: after the aborted run's closing events.
//   - Bash: when the command ends (default bound 310 s, past the agent's
//     own 300 s limit, whatever Options.Timeout says).
//   - NewSession, SwitchSession: after any run has been aborted and wound down.
//   - AbortRetry: after the retry wait's auto_retry_end.
//   - Branch, Fork, Clone, ExportHTML, SetSessionName, SetHostTools: after
//     a file write.
// Prompt's acknowledgement is immediate; the run that follows is observed
// through events, with no bound from the client.

type wireImage struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

func wireImages(in []Image) []wireImage {
	if len(in) == 0 {
		return nil
	}
	out := make([]wireImage, len(in))
	for i, im := range in {
		out[i] = wireImage{"image", im.Data, im.MimeType}
	}
	return out
}

type messageFields struct {
	Message           string          `json:"message"`
	Images            []wireImage     `json:"images,omitempty"`
	StreamingBehavior string          `json:"streamingBehavior,omitempty"`
	OutputSchema      json.RawMessage `json:"outputSchema,omitempty"`
}

// PromptOptions are the optional fields of a prompt.
type PromptOptions struct {
	Images []Image
	// StreamingBehavior is "steer" or "followUp": while a run is active the
	// message is queued instead of refused as busy.
	StreamingBehavior string
	// OutputSchema, if set, is a JSON Schema object the final answer must
	// match (docs/rpc.md "Structured output"): output_schema_end reports
	// the JSON.
	OutputSchema json.RawMessage
}

// PromptHandle is an acknowledged prompt. The agent acknowledges a prompt
// at once and reports a failure to start (busy, no model, no API key) as a
// second response with the same id.
type PromptHandle struct {
	// ID is the request id the client minted.
	ID   string
	late chan error
}

// Late yields the prompt's failure to start (a *CommandError), if any, and
// is closed once the prompt can no longer fail to start: after that
// failure, at the next agent_start or agent_end (the prompt has started or
// been queued; the agent writes a failure right after the acknowledgement),
// or when the connection ends.
func (h *PromptHandle) Late() <-chan error { return h.late }

// Err waits until the prompt is settled and returns its late failure, or
// nil. It returns ctx's error if ctx ends first.
func (h *PromptHandle) Err(ctx context.Context) error {
	select {
	case err, ok := <-h.late:
		if ok {
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *target) prompt(ctx context.Context, typ string, f messageFields) (*PromptHandle, error) {
	_, cl, err := t.c.do(ctx, request{typ: typ, fields: f, t: t, prompt: true})
	if err != nil {
		return nil, err
	}
	return &PromptHandle{ID: cl.id, late: cl.late}, nil
}

// Prompt sends a prompt and returns once it is acknowledged; the run is
// observed through events (Subscribe before calling Prompt) and a failure
// to start through the handle. An acknowledgement that is a failure (bad
// fields) is returned as the error.
func (t *target) Prompt(ctx context.Context, message string, opts PromptOptions) (*PromptHandle, error) {
	return t.prompt(ctx, "prompt", messageFields{message, wireImages(opts.Images), opts.StreamingBehavior, opts.OutputSchema})
}

// AbortAndPrompt aborts the run and, once it has wound down, starts a
// prompt; it returns after the abort, with the prompt's handle.
func (t *target) AbortAndPrompt(ctx context.Context, message string, images ...Image) (*PromptHandle, error) {
	return t.prompt(ctx, "abort_and_prompt", messageFields{Message: message, Images: wireImages(images)})
}

// Steer queues a message for the next turn boundary (also when idle).
func (t *target) Steer(ctx context.Context, message string, images ...Image) error {
	return t.call(ctx, "steer", messageFields{Message: message, Images: wireImages(images)}, nil)
}

// FollowUp queues a message for when the run would stop (also when idle).
func (t *target) FollowUp(ctx context.Context, message string, images ...Image) error {
	return t.call(ctx, "follow_up", messageFields{Message: message, Images: wireImages(images)}, nil)
}

// Abort cancels the run and returns after its closing events (at once when
// idle). Queued messages are kept.
func (t *target) Abort(ctx context.Context) error { return t.call(ctx, "abort", nil, nil) }

// GetState returns the session's state.
func (t *target) GetState(ctx context.Context) (*State, error) {
	var s State
	if err := t.call(ctx, "get_state", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// GetMessages returns the context: every message, the one being streamed
// included.
func (t *target) GetMessages(ctx context.Context) ([]Message, error) {
	var out struct {
		Messages []Message `json:"messages"`
	}
	err := t.call(ctx, "get_messages", nil, &out)
	return out.Messages, err
}

// GetLastAssistantText returns the trimmed text of the last assistant
// message; ok is false when there is none.
func (t *target) GetLastAssistantText(ctx context.Context) (text string, ok bool, err error) {
	var out struct {
		Text *string `json:"text"`
	}
	if err := t.call(ctx, "get_last_assistant_text", nil, &out); err != nil {
		return "", false, err
	}
	if out.Text == nil {
		return "", false, nil
	}
	return *out.Text, true, nil
}

// SetSessionName names the session (cleaned by the agent; empty fails).
func (t *target) SetSessionName(ctx context.Context, name string) error {
	return t.call(ctx, "set_session_name", struct {
		Name string `json:"name"`
	}{name}, nil)
}

type modeFields struct {
	Mode string `json:"mode"`
}

// SetSteeringMode sets how queued steering is delivered: "all" or "one-at-a-time".
func (t *target) SetSteeringMode(ctx context.Context, mode string) error {
	return t.call(ctx, "set_steering_mode", modeFields{mode}, nil)
}

// SetFollowUpMode sets how queued follow-ups are delivered: "all" or "one-at-a-time".
func (t *target) SetFollowUpMode(ctx context.Context, mode string) error {
	return t.call(ctx, "set_follow_up_mode", modeFields{mode}, nil)
}

// SetInterruptMode sets when steering interrupts: "immediate" or "wait".
func (t *target) SetInterruptMode(ctx context.Context, mode string) error {
	return t.call(ctx, "set_interrupt_mode", modeFields{mode}, nil)
}

// Bash runs a command in the session's directory and returns when it ends
// (see the timing note above); its output joins the next model call.
func (t *target) Bash(ctx context.Context, command string) (*BashResult, error) {
	var r BashResult
	if err := t.call(ctx, "bash", struct {
		Command string `json:"command"`
	}{command}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// AbortBash kills running bash commands; their Bash calls return cancelled.
func (t *target) AbortBash(ctx context.Context) error { return t.call(ctx, "abort_bash", nil, nil) }

// SetModel selects a model from the next model call on.
func (t *target) SetModel(ctx context.Context, provider, modelID string) (*Model, error) {
	var m Model
	if err := t.call(ctx, "set_model", struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	}{provider, modelID}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// CycleModel selects the next model; nil when there are fewer than two.
func (t *target) CycleModel(ctx context.Context) (*CycleModelResult, error) {
	var r *CycleModelResult
	if err := t.call(ctx, "cycle_model", nil, &r); err != nil {
		return nil, err
	}
	return r, nil
}

// GetAvailableModels lists the models usable now.
func (t *target) GetAvailableModels(ctx context.Context) ([]Model, error) {
	var out struct {
		Models []Model `json:"models"`
	}
	err := t.call(ctx, "get_available_models", nil, &out)
	return out.Models, err
}

// SetThinkingLevel sets the thinking level (clamped by the agent; "inherit"
// unsets it). It never fails on the value.
func (t *target) SetThinkingLevel(ctx context.Context, level string) error {
	return t.call(ctx, "set_thinking_level", struct {
		Level string `json:"level"`
	}{level}, nil)
}

// CycleThinkingLevel moves to the next thinking level and returns it; ""
// for a model without reasoning.
func (t *target) CycleThinkingLevel(ctx context.Context) (string, error) {
	var out *struct {
		Level string `json:"level"`
	}
	if err := t.call(ctx, "cycle_thinking_level", nil, &out); err != nil || out == nil {
		return "", err
	}
	return out.Level, nil
}

// SetAutoRetry turns automatic retry of transient failures on or off for
// this session.
func (t *target) SetAutoRetry(ctx context.Context, enabled bool) error {
	return t.call(ctx, "set_auto_retry", struct {
		Enabled bool `json:"enabled"`
	}{enabled}, nil)
}

// AbortRetry ends a retry wait; it returns after auto_retry_end (at once
// when none waits).
func (t *target) AbortRetry(ctx context.Context) error { return t.call(ctx, "abort_retry", nil, nil) }

// GetSessionStats returns message, token and cost counts over the context.
func (t *target) GetSessionStats(ctx context.Context) (*SessionStats, error) {
	var s SessionStats
	if err := t.call(ctx, "get_session_stats", nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func (t *target) branchMessages(ctx context.Context, typ string) ([]BranchMessage, error) {
	var out struct {
		Messages []BranchMessage `json:"messages"`
	}
	err := t.call(ctx, typ, nil, &out)
	return out.Messages, err
}

// GetBranchMessages lists every user message of the session file, all
// branches, in file order.
func (t *target) GetBranchMessages(ctx context.Context) ([]BranchMessage, error) {
	return t.branchMessages(ctx, "get_branch_messages")
}

// GetForkMessages lists the user messages of the current branch, oldest first (pi).
func (t *target) GetForkMessages(ctx context.Context) ([]BranchMessage, error) {
	return t.branchMessages(ctx, "get_fork_messages")
}

type cancelledData struct {
	Cancelled bool `json:"cancelled"`
}

// NewSession starts a new session (aborting any run first); parentSession
// is recorded in its header when not empty. cancelled is true when an
// extension vetoed the switch.
func (t *target) NewSession(ctx context.Context, parentSession string) (cancelled bool, err error) {
	var out cancelledData
	err = t.call(ctx, "new_session", struct {
		ParentSession string `json:"parentSession,omitempty"`
	}{parentSession}, &out)
	return out.Cancelled, err
}

// SwitchSession makes the session file at path (relative to the agent's
// directory) the session.
func (t *target) SwitchSession(ctx context.Context, path string) (cancelled bool, err error) {
	var out cancelledData
	err = t.call(ctx, "switch_session", struct {
		SessionPath string `json:"sessionPath"`
	}{path}, &out)
	return out.Cancelled, err
}

func (t *target) branch(ctx context.Context, typ, entryID string) (*BranchResult, error) {
	var r BranchResult
	if err := t.call(ctx, typ, struct {
		EntryID string `json:"entryId"`
	}{entryID}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Branch starts a new session file from before the user message entryID
// and returns that message's text.
func (t *target) Branch(ctx context.Context, entryID string) (*BranchResult, error) {
	return t.branch(ctx, "branch", entryID)
}

// Fork is pi's Branch.
func (t *target) Fork(ctx context.Context, entryID string) (*BranchResult, error) {
	return t.branch(ctx, "fork", entryID)
}

// Clone copies the current branch into a new session file, which becomes
// current (pi).
func (t *target) Clone(ctx context.Context) (cancelled bool, err error) {
	var out cancelledData
	err = t.call(ctx, "clone", nil, &out)
	return out.Cancelled, err
}

// ExportHTML writes the session as one HTML page and returns its path;
// outputPath "" takes the agent's default.
func (t *target) ExportHTML(ctx context.Context, outputPath string) (string, error) {
	var out struct {
		Path string `json:"path"`
	}
	err := t.call(ctx, "export_html", struct {
		OutputPath string `json:"outputPath,omitempty"`
	}{outputPath}, &out)
	return out.Path, err
}

// GetMessagesPage reads the context a page at a time (omp). While a run is
// going on it fails with Code "session_busy".
func (t *target) GetMessagesPage(ctx context.Context, opts PageOptions) (*MessagesPage, error) {
	var p MessagesPage
	if err := t.call(ctx, "get_messages_page", struct {
		Limit  int    `json:"limit,omitempty"`
		Cursor string `json:"cursor,omitempty"`
		Order  string `json:"order,omitempty"`
	}{opts.Limit, opts.Cursor, opts.Order}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func (t *target) commands(ctx context.Context, typ string) ([]Command, error) {
	var out struct {
		Commands []Command `json:"commands"`
	}
	err := t.call(ctx, typ, nil, &out)
	return out.Commands, err
}

// GetCommands lists the slash commands, templates and skills (pi).
func (t *target) GetCommands(ctx context.Context) ([]Command, error) {
	return t.commands(ctx, "get_commands")
}

// GetAvailableCommands is omp's GetCommands.
func (t *target) GetAvailableCommands(ctx context.Context) ([]Command, error) {
	return t.commands(ctx, "get_available_commands")
}

// Compact summarises the context with the current model; the answer
// comes when the summary is in place (an abort cancels it: "Compaction
// cancelled"). Give ctx a bound that leaves the model time to write.
func (t *target) Compact(ctx context.Context, customInstructions string) (*CompactionResult, error) {
	var out CompactionResult
	err := t.call(ctx, "compact", struct {
		CustomInstructions string `json:"customInstructions,omitempty"`
	}{customInstructions}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SetTodos replaces the todo list and returns it as stored (ids, content,
// status and notes; details are dropped).
func (t *target) SetTodos(ctx context.Context, phases []TodoPhase) ([]TodoPhase, error) {
	if phases == nil {
		phases = []TodoPhase{}
	}
	var out struct {
		TodoPhases []TodoPhase `json:"todoPhases"`
	}
	err := t.call(ctx, "set_todos", struct {
		Phases []TodoPhase `json:"phases"`
	}{phases}, &out)
	return out.TodoPhases, err
}

// SetAutoCompaction turns automatic compaction on or off for the session.
func (t *target) SetAutoCompaction(ctx context.Context, enabled bool) error {
	return t.call(ctx, "set_auto_compaction", struct {
		Enabled bool `json:"enabled"`
	}{enabled}, nil)
}
