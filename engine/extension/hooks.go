package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// The Host is the session's engine.Hooks: each hook point asks the
// extensions subscribed to it, in load order, each seeing what the ones
// before it made of the payload. A request that fails (an error answer, a
// malformed result, no answer within the extension's deadline) is
// reported as extension_error and counts as "no change" for that
// extension; the others still run. An extension that has died was already
// reported once and is skipped.
var (
	_ engine.Hooks         = (*Host)(nil)
	_ engine.CommandSource = (*Host)(nil)
)

var hookBits = map[engine.Hook]uint64{
	engine.HookInput:                 bitInput,
	engine.HookBeforeAgentStart:      bitBeforeAgentStart,
	engine.HookContext:               bitContext,
	engine.HookBeforeProviderRequest: bitBeforeProviderRequest,
	engine.HookToolCall:              bitToolCall,
	engine.HookToolResult:            bitToolResult,
	engine.HookUserBash:              bitUserBash,
	engine.HookBeforeSwitch:          bitBeforeSwitch,
	engine.HookBeforeFork:            bitBeforeFork,
	engine.HookCommands:              bitCommands,
}

// Has implements engine.Hooks: one atomic load.
func (h *Host) Has(hook engine.Hook) bool { return h.subs.Load()&hookBits[hook] != 0 }

// ask sends a hook to each extension subscribed to bit, in load order:
// params builds the request for the current state, apply folds an answer
// into it and reports whether the chain stops there. A null result is no
// change. It returns early when ctx ends (the work was aborted).
func (h *Host) ask(ctx context.Context, bit uint64, method string, params func(o *obj), apply func(raw json.RawMessage) (stop bool, err error)) {
	for _, e := range h.live(bit) {
		o := newObj(method, h.currentSession())
		params(o)
		raw, err := e.request(ctx, method, o.bytes(), e.deadline())
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !errors.Is(err, errGone) {
				h.report(engine.ExtensionError{ExtensionPath: e.spec.Path, Event: method, Error: errorText(err)})
			}
			continue
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		stop, err := apply(raw)
		if err != nil {
			h.report(engine.ExtensionError{ExtensionPath: e.spec.Path, Event: method, Error: "malformed result: " + err.Error()})
			continue
		}
		if stop {
			return
		}
	}
}

// errorText is an error as extension_error says it: an extension's own
// error answer is its message alone.
func errorText(err error) string {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Message
	}
	return err.Error()
}

func (h *Host) currentSession() string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.sessionID
}

// Input implements engine.Hooks.
func (h *Host) Input(ctx context.Context, in engine.InputHook) engine.InputResult {
	res := engine.InputResult{Text: in.Text, Images: in.Images}
	changed := false
	h.ask(ctx, bitInput, "input", func(o *obj) {
		o.str("text", res.Text).raw("images", blocks(res.Images)).str("source", in.Source)
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Action string          `json:"action"`
			Text   *string         `json:"text"`
			Images json.RawMessage `json:"images"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		switch r.Action {
		case "", "continue":
			return false, nil
		case "handled":
			res.Action = engine.InputHandled
			return true, nil
		case "transform":
			if r.Text == nil {
				return false, errors.New(`"transform" without "text"`)
			}
			res.Text = *r.Text
			if r.Images != nil {
				imgs, err := decodeBlocks(r.Images)
				if err != nil {
					return false, err
				}
				res.Images = imgs
			}
			changed = true
			return false, nil
		}
		return false, fmt.Errorf("unknown action %q", r.Action)
	})
	if res.Action == "" && changed {
		res.Action = engine.InputTransform
	}
	return res
}

// BeforeAgentStart implements engine.Hooks.
func (h *Host) BeforeAgentStart(ctx context.Context, in engine.AgentStartHook) engine.AgentStartResult {
	var res engine.AgentStartResult
	sp := in.SystemPrompt
	h.ask(ctx, bitBeforeAgentStart, "before_agent_start", func(o *obj) {
		o.str("prompt", in.Prompt).raw("images", blocks(in.Images)).str("systemPrompt", sp)
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Message      *customMessage `json:"message"`
			SystemPrompt *string        `json:"systemPrompt"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Message != nil {
			m, err := r.Message.engine()
			if err != nil {
				return false, err
			}
			res.Messages = append(res.Messages, m)
		}
		if r.SystemPrompt != nil {
			sp = *r.SystemPrompt
			res.SystemPrompt = sp
		}
		return false, nil
	})
	return res
}

// Context implements engine.Hooks.
func (h *Host) Context(ctx context.Context, msgs []engine.Message) []engine.Message {
	var out []engine.Message
	cur := msgs
	h.ask(ctx, bitContext, "context", func(o *obj) {
		o.raw("messages", engine.AppendMessages(nil, cur))
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Messages == nil {
			return false, nil
		}
		ms, err := decodeMessages(r.Messages)
		if err != nil {
			return false, err
		}
		cur, out = ms, ms
		return false, nil
	})
	return out
}

// BeforeProviderRequest implements engine.Hooks: the payload is the
// provider-neutral request (model, system prompt, the messages as sent,
// the tools' names, the thinking level); an answer may replace its
// systemPrompt and messages.
func (h *Host) BeforeProviderRequest(ctx context.Context, req *engine.Request) {
	h.ask(ctx, bitBeforeProviderRequest, "before_provider_request", func(o *obj) {
		tools := make([]string, 0, len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, t.Name)
		}
		model := openObj().str("provider", req.Model.Provider).str("id", req.Model.ID)
		p := openObj().raw("model", model.bytes()).str("systemPrompt", req.SystemPrompt).
			raw("messages", engine.AppendMessages(nil, req.Messages)).val("tools", tools)
		if req.ThinkingLevel != "" {
			p.str("thinkingLevel", string(req.ThinkingLevel))
		}
		o.raw("payload", p.bytes())
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Payload *struct {
				SystemPrompt *string           `json:"systemPrompt"`
				Messages     []json.RawMessage `json:"messages"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Payload == nil {
			return false, nil
		}
		if r.Payload.Messages != nil {
			ms, err := decodeMessages(r.Payload.Messages)
			if err != nil {
				return false, err
			}
			req.Messages = ms
		}
		if r.Payload.SystemPrompt != nil {
			req.SystemPrompt = *r.Payload.SystemPrompt
		}
		return false, nil
	})
}

// ToolCall implements engine.Hooks.
func (h *Host) ToolCall(ctx context.Context, call engine.ToolCallHook) engine.ToolCallResult {
	var res engine.ToolCallResult
	input := call.Input
	h.ask(withToolCall(ctx, call.ID), bitToolCall, "tool_call", func(o *obj) {
		o.str("toolName", call.Name).str("toolCallId", call.ID).raw("input", input)
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Block  bool            `json:"block"`
			Reason string          `json:"reason"`
			Input  json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Block {
			res = engine.ToolCallResult{Block: true, Reason: r.Reason}
			return true, nil
		}
		if r.Input != nil {
			if !isObject(r.Input) {
				return false, errors.New(`"input" is not an object`)
			}
			input = compact(r.Input)
			res.Input = input
		}
		return false, nil
	})
	return res
}

// ToolResult implements engine.Hooks.
func (h *Host) ToolResult(ctx context.Context, call engine.ToolCallHook, res engine.ToolResult) engine.ToolResult {
	h.ask(withToolCall(ctx, call.ID), bitToolResult, "tool_result", func(o *obj) {
		details := res.Details
		if details == nil {
			details = []byte("{}")
		}
		o.str("toolName", call.Name).str("toolCallId", call.ID).raw("input", call.Input).
			raw("content", blocks(res.Content)).raw("details", details).boolean("isError", res.IsError)
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Content json.RawMessage `json:"content"`
			Details json.RawMessage `json:"details"`
			IsError *bool           `json:"isError"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Content != nil {
			c, err := decodeBlocks(r.Content)
			if err != nil {
				return false, err
			}
			res.Content = c
			res.Raw = nil
		}
		if r.Details != nil {
			res.Details = compact(r.Details)
			res.Raw = nil
		}
		if r.IsError != nil {
			res.IsError = *r.IsError
			res.Raw = nil
		}
		return false, nil
	})
	return res
}

// UserBash implements engine.Hooks: the first extension that supplies a
// result wins.
func (h *Host) UserBash(ctx context.Context, command string) *engine.BashResult {
	var out *engine.BashResult
	h.ask(ctx, bitUserBash, "user_bash", func(o *obj) { o.str("command", command) }, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Result *struct {
				Output    string `json:"output"`
				ExitCode  *int   `json:"exitCode"`
				Cancelled bool   `json:"cancelled"`
				Truncated bool   `json:"truncated"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Result == nil {
			return false, nil
		}
		res := engine.BashResult{Output: r.Result.Output, ExitCode: r.Result.ExitCode, Cancelled: r.Result.Cancelled, Truncated: r.Result.Truncated}
		res.TotalBytes, res.OutputBytes = len(res.Output), len(res.Output)
		res.TotalLines = countLines(res.Output)
		res.OutputLines = res.TotalLines
		out = &res
		return true, nil
	})
	return out
}

// BeforeSwitch implements engine.Hooks: the first extension that cancels
// wins.
func (h *Host) BeforeSwitch(ctx context.Context, sw engine.SwitchHook) bool {
	bit, method := bitBeforeSwitch, "session_before_switch"
	if sw.Reason == "fork" || sw.Reason == "clone" {
		bit, method = bitBeforeFork, "session_before_fork"
	}
	cancel := false
	h.ask(ctx, bit, method, func(o *obj) {
		o.str("reason", sw.Reason)
		if sw.Target != "" {
			o.str("targetSessionFile", sw.Target)
		}
		if sw.EntryID != "" {
			o.str("entryId", sw.EntryID)
		}
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Cancel bool `json:"cancel"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		cancel = r.Cancel
		return r.Cancel, nil
	})
	return cancel
}

// compactionHook is the session's compaction hook (Attach registers it
// with Session.AddCompactionHook when an extension subscribed to
// session_before_compact): it asks the subscribed extensions in load
// order, after the compaction's preparation and before any model call.
// The first that cancels, or that supplies the compaction (its summary,
// short summary and details: the entry is then marked fromExtension),
// decides; lines of additionalContext from the others are added to the
// summary prompt.
func (h *Host) compactionHook(ctx context.Context, req *engine.CompactionRequest) engine.CompactionVerdict {
	var v engine.CompactionVerdict
	var tokens int64
	var first string
	if req.Preparation != nil {
		tokens, first = req.Preparation.TokensBefore, req.Preparation.FirstKeptEntryID
	}
	h.ask(ctx, bitBeforeCompact, "session_before_compact", func(o *obj) {
		o.str("reason", req.Reason).val("tokensBefore", tokens).str("firstKeptEntryId", first)
		if req.CustomInstructions != "" {
			o.str("customInstructions", req.CustomInstructions)
		}
	}, func(raw json.RawMessage) (bool, error) {
		var r struct {
			Cancel     bool `json:"cancel"`
			Compaction *struct {
				Summary      string          `json:"summary"`
				ShortSummary string          `json:"shortSummary"`
				Details      json.RawMessage `json:"details"`
			} `json:"compaction"`
			AdditionalContext []string `json:"additionalContext"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return false, err
		}
		if r.Cancel {
			v.Cancel = true
			return true, nil
		}
		if c := r.Compaction; c != nil {
			if c.Summary == "" {
				return false, errors.New(`"compaction" without a "summary"`)
			}
			res := &engine.CompactionResult{Summary: c.Summary, ShortSummary: c.ShortSummary}
			if c.Details != nil && string(c.Details) != "null" {
				if !isObject(c.Details) {
					return false, errors.New(`"details" is not an object`)
				}
				res.Details = compact(c.Details)
			}
			v.Result = res
			return true, nil
		}
		v.AdditionalContext = append(v.AdditionalContext, r.AdditionalContext...)
		return false, nil
	})
	return v
}

// Observe implements engine.Hooks: on the executor, it only queues.
func (h *Host) Observe(ev engine.SessionEvent) {
	switch ev.Kind {
	case engine.SessionStart:
		var id, file string
		if sess := h.session(); sess != nil {
			id, file, _ = sess.Identity()
		}
		h.mu.Lock()
		h.sessionID = id
		begun := h.begun
		h.mu.Unlock()
		if begun {
			h.notify(bitSessionStart, "session_start", sessionStartParams(ev.Reason, id, file, ev.PreviousFile))
		}
	case engine.SessionShutdown:
		h.notify(bitSessionShutdown, "session_shutdown", sessionShutdownParams(h.currentSession()))
	case engine.ModelSelect:
		if len(h.live(bitModelSelect)) == 0 {
			return
		}
		o := newObj("model_select", h.currentSession()).val("model", ev.Model)
		if ev.Previous != nil {
			o.val("previousModel", ev.Previous)
		}
		h.notify(bitModelSelect, "model_select", o.str("source", ev.Source).bytes())
	case engine.ThinkingSelect:
		o := newObj("thinking_level_select", h.currentSession()).str("level", string(ev.Level)).str("previousLevel", string(ev.PreviousLevel))
		h.notify(bitThinkingSelect, "thinking_level_select", o.bytes())
	}
}

func (h *Host) session() *engine.Session {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.sess
}

// Commands implements engine.CommandSource (Config.Commands): the live
// extensions' commands, in load order.
func (h *Host) Commands() []engine.SlashCommand {
	var out []engine.SlashCommand
	for _, e := range h.live(bitCommands) {
		for _, c := range e.commands {
			out = append(out, engine.SlashCommand{Name: c.Name, Description: c.Description, Source: engine.CommandExtension})
		}
	}
	return out
}

// Expand implements engine.CommandSource: an extension command is run
// (RunCommand), never expanded.
func (h *Host) Expand(name, args string) (string, bool) { return "", false }

// RunCommand implements engine.Hooks: the extension that offers name runs
// it (command/run, no deadline); a failure is reported as the original
// reports it, extensionPath "command:<name>", event "command".
func (h *Host) RunCommand(ctx context.Context, name, args string) {
	for _, e := range h.live(bitCommands) {
		for _, c := range e.commands {
			if c.Name != name {
				continue
			}
			params := newObj("command", h.currentSession()).str("name", name).str("args", args).bytes()
			_, err := e.request(ctx, "command/run", params, 0)
			if err != nil && ctx.Err() == nil && !errors.Is(err, errGone) {
				h.report(engine.ExtensionError{ExtensionPath: "command:" + name, Event: "command", Error: errorText(err)})
			}
			return
		}
	}
}

func sessionStartParams(reason, id, file, previous string) []byte {
	o := newObj("session_start", id).str("reason", reason)
	if file != "" {
		o.str("sessionFile", file)
	}
	if previous != "" {
		o.str("previousSessionFile", previous)
	}
	return o.bytes()
}

func sessionShutdownParams(id string) []byte { return newObj("session_shutdown", id).bytes() }

// toolCallKey marks the work of a tool_call or tool_result hook with the
// call's id, so a dialog the extension opens during it belongs to that call
// (ACP ties its permission request to the call the editor already shows).
type toolCallKey struct{}

func withToolCall(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, toolCallKey{}, id)
}

// toolCallOf is the tool call whose hook ctx serves, "" outside one.
func toolCallOf(ctx context.Context) string {
	id, _ := ctx.Value(toolCallKey{}).(string)
	return id
}
