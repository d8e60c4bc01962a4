package extension

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// What an extension may ask of the agent. Each call is a session verb.
//
// Quick calls are handled on the extension's reader goroutine, one after
// the other, in the order they were sent, so what they show the host (a
// status, a notice, a message) comes in that order. Calls that wait (a
// dialog for the user, a shell command, an abort winding down, a rename)
// run on goroutines of their own, at most maxAsync at once per extension:
// beyond that the extension is answered CodeTooMany at once, so a flood
// is bounded and never queued.
//
// Every call may carry "sessionId": a call naming a session that is no
// longer current (the session was switched meanwhile) fails with
// CodeStaleSession. A call may carry "during": the id of one of our
// requests it is handling; it then belongs to that work (an abort of the
// run cancels a dialog its tool_call hook opened) and a dialog it opens
// holds that request's deadline while the user is asked.

// common are the fields every call may carry.
type common struct {
	SessionID string `json:"sessionId"`
	During    *int64 `json:"during"`
}

// quickCall handles a call at once and returns its result (nil: null).
type quickCall func(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error)

// slowCall handles a call that waits, under ctx; parent is the request
// the call is made during (nil for none).
type slowCall func(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error)

// quickCalls are served on the reader, in order.
var quickCalls = map[string]quickCall{
	"ui.notify":        callNotify,
	"ui.setStatus":     callSetStatus,
	"ui.setWidget":     callSetWidget,
	"ui.setTitle":      callSetTitle,
	"ui.setEditorText": callSetEditorText,
	"sendMessage":      callSendMessage,
	"sendUserMessage":  callSendUserMessage,
	"appendEntry":      callAppendEntry,
	"setLabel":         callSetLabel,
	"getSessionName":   callGetSessionName,
	"getSystemPrompt":  callGetSystemPrompt,
	"getActiveTools":   callGetActiveTools,
	"getAllTools":      callGetAllTools,
	"setActiveTools":   callSetActiveTools,
	"setModel":         callSetModel,
	"getModel":         callGetModel,
	"setThinkingLevel": callSetThinkingLevel,
	"getThinkingLevel": callGetThinkingLevel,
	"getContextUsage":  callGetContextUsage,
	"isIdle":           callIsIdle,
}

// slowCalls wait, each on a goroutine of its own.
var slowCalls = map[string]slowCall{
	"ui.select":      dialogCall(engine.DialogSelect),
	"ui.confirm":     dialogCall(engine.DialogConfirm),
	"ui.input":       dialogCall(engine.DialogInput),
	"ui.editor":      dialogCall(engine.DialogEditor),
	"exec":           callExec,
	"abort":          callAbort,
	"setSessionName": callSetSessionName,
	"compact":        callCompact,
}

// failed is a call's failure with its code, answered as it is.
func failed(code int, msg string) error { return &jsonrpc.Error{Code: code, Message: msg} }

func invalid(err error) error {
	return failed(jsonrpc.CodeInvalidParams, "invalid params: "+strings.TrimPrefix(err.Error(), "json: "))
}

// decodeParams reads params into v (absent params are {}).
func decodeParams(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalid(err)
	}
	return nil
}

// handleRequest serves one request of e, on its reader goroutine: a quick
// call is answered at once; a waiting one runs on a goroutine of its own
// and is answered from there (jsonrpc.ErrAsync). ctx ends when the
// extension withdraws the request ($/cancelRequest).
func (h *Host) handleRequest(ctx context.Context, e *ext, req *jsonrpc.Request) (any, error) {
	sess := h.session()
	if sess == nil && !(h.opts.Sessionless && dialogMethods[req.Method]) {
		return nil, failed(jsonrpc.CodeFailed, "the agent is starting: calls are served once the handshake is over")
	}
	var c common
	_ = json.Unmarshal(req.Params, &c)
	if cur := h.currentSession(); c.SessionID != "" && c.SessionID != cur {
		return nil, failed(jsonrpc.CodeStaleSession, "stale session: "+c.SessionID+" is no longer the current session ("+cur+")")
	}
	if fn := quickCalls[req.Method]; fn != nil {
		res, err := fn(h, e, sess, req.Params)
		return json.RawMessage(res), err
	}
	fn := slowCalls[req.Method]
	if fn == nil {
		return nil, failed(jsonrpc.CodeMethodNotFound, "unknown method: "+req.Method)
	}
	select {
	case e.async <- struct{}{}:
	default:
		return nil, failed(jsonrpc.CodeTooMany, "too many requests in flight (at most "+strconv.Itoa(maxAsync)+")")
	}
	var parent *call
	base := e.ctx
	if c.During != nil {
		if parent = e.during(*c.During); parent != nil {
			base = parent.ctx
		}
	}
	// The call's context: the work it belongs to, ended by the
	// extension's withdrawal (the request's ctx) and by its death.
	cctx, cancel := context.WithCancel(base)
	stopWithdrawn := context.AfterFunc(ctx, cancel)
	stopDead := context.AfterFunc(e.ctx, cancel) // it died: what it asked for ends
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer func() { <-e.async }()
		defer stopDead()
		defer stopWithdrawn()
		defer cancel()
		res, err := fn(cctx, h, e, sess, req.Params, parent)
		if err == nil && cctx.Err() != nil {
			err = failed(jsonrpc.CodeCancelled, "cancelled")
		}
		e.conn.Respond(req, json.RawMessage(res), err)
	}()
	return nil, jsonrpc.ErrAsync
}

// handleNotification serves one notification of e: streamed tool output,
// a withdrawn request, a log line, or a fire-and-forget quick call.
func (h *Host) handleNotification(e *ext, m *jsonrpc.Request) {
	switch m.Method {
	case "tool/update":
		var p struct {
			ToolCallID    string          `json:"toolCallId"`
			PartialResult json.RawMessage `json:"partialResult"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		e.mu.Lock()
		update := e.updates[p.ToolCallID]
		e.mu.Unlock()
		if update == nil || p.PartialResult == nil {
			return
		}
		if res, err := decodeResult(p.PartialResult); err == nil {
			update(res)
		}
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		e.conn.Cancel(compact(p.ID))
	case "log":
		var p struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			h.logf("extension %s: %s%s", e.spec.Path, levelPrefix(p.Level), p.Message)
		}
	default:
		sess := h.session()
		if fn := quickCalls[m.Method]; fn != nil && sess != nil {
			var c common
			_ = json.Unmarshal(m.Params, &c)
			if c.SessionID == "" || c.SessionID == h.currentSession() {
				_, _ = fn(h, e, sess, m.Params)
			}
		}
	}
}

func levelPrefix(level string) string {
	if level == "" || level == "info" {
		return ""
	}
	return level + ": "
}

func callNotify(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	switch p.Type {
	case "", "info", "warning", "error":
	default:
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "type" must be "info", "warning" or "error"`)
	}
	sess.Post(func() { sess.UINotify(p.Type, p.Message) })
	return nil, nil
}

func callSetStatus(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Key  string `json:"key"`
		Text string `json:"text"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	sess.Post(func() { sess.UISetStatus(p.Key, p.Text) })
	return nil, nil
}

func callSetWidget(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Key       string   `json:"key"`
		Lines     []string `json:"lines"`
		Placement string   `json:"placement"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Placement != "" && p.Placement != "aboveEditor" && p.Placement != "belowEditor" {
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "placement" must be "aboveEditor" or "belowEditor"`)
	}
	sess.Post(func() { sess.UISetWidget(p.Key, p.Lines, p.Placement) })
	return nil, nil
}

func callSetTitle(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Title string `json:"title"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	sess.Post(func() { sess.UISetTitle(p.Title) })
	return nil, nil
}

func callSetEditorText(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Text string `json:"text"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	sess.Post(func() { sess.UISetEditorText(p.Text) })
	return nil, nil
}

func callSendMessage(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		customMessage
		TriggerTurn bool   `json:"triggerTurn"`
		DeliverAs   string `json:"deliverAs"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	switch p.DeliverAs {
	case "", engine.DeliverSteer, engine.DeliverFollowUp, engine.DeliverNextTurn:
	default:
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "deliverAs" must be "steer", "followUp" or "nextTurn"`)
	}
	m, err := p.customMessage.engine()
	if err != nil {
		return nil, failed(jsonrpc.CodeInvalidParams, "invalid params: "+err.Error())
	}
	sess.Call(func() {
		err = sess.SendMessage(m, engine.SendOptions{TriggerTurn: p.TriggerTurn, DeliverAs: p.DeliverAs})
	})
	if err != nil {
		return nil, failed(jsonrpc.CodeFailed, err.Error())
	}
	return nil, nil
}

// callSendUserMessage is a prompt from the extension (source
// "extension"): while a run is active it needs deliverAs ("steer" or
// "followUp"), as a host's prompt needs streamingBehavior. A failure found
// after the input hook is reported as extension_error.
func callSendUserMessage(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Content   json.RawMessage `json:"content"`
		DeliverAs string          `json:"deliverAs"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Content == nil {
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "content" is required`)
	}
	content, err := decodeBlocks(p.Content)
	if err != nil {
		return nil, invalid(err)
	}
	var text []string
	var images []engine.ContentBlock
	for _, b := range content {
		switch b.Type {
		case engine.BlockText:
			text = append(text, b.Text)
		case engine.BlockImage:
			images = append(images, b)
		}
	}
	path := e.spec.Path
	opts := engine.PromptOptions{Images: images, StreamingBehavior: p.DeliverAs, Source: "extension",
		Failed: func(err error) {
			sess.ReportExtensionError(engine.ExtensionError{ExtensionPath: path, Event: "sendUserMessage", Error: err.Error()})
		}}
	sess.Call(func() { err = sess.Prompt(strings.Join(text, "\n"), opts) })
	if err != nil {
		return nil, failed(jsonrpc.CodeFailed, err.Error())
	}
	return nil, nil
}

func callAppendEntry(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		CustomType string          `json:"customType"`
		Data       json.RawMessage `json:"data"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.CustomType) == "" {
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "customType" is required`)
	}
	var data []byte
	if p.Data != nil && string(p.Data) != "null" {
		data = compact(p.Data)
	}
	sess.Post(func() { sess.AppendCustomEntry(p.CustomType, data) })
	return nil, nil
}

func callSetLabel(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		EntryID string `json:"entryId"`
		Label   string `json:"label"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var err error
	sess.Call(func() { err = sess.SetLabel(p.EntryID, p.Label) })
	if err != nil {
		return nil, failed(jsonrpc.CodeFailed, "no entry "+strconv.Quote(p.EntryID))
	}
	return nil, nil
}

func callGetSessionName(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var name string
	sess.Call(func() { _, _, name = sess.Identity() })
	return openObj().str("name", name).bytes(), nil
}

func callGetSystemPrompt(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var sp string
	sess.Call(func() { sp = sess.SystemPrompt() })
	return openObj().str("systemPrompt", sp).bytes(), nil
}

func toolNames(tools []engine.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name())
	}
	return out
}

func callGetActiveTools(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var names []string
	sess.Call(func() { names = toolNames(sess.Tools()) })
	return openObj().val("tools", names).bytes(), nil
}

// allTools are the tools setActiveTools may pick from: the session's at
// load and the extensions' (the universe), and the host's current ones.
func (h *Host) allTools(sess *engine.Session) []engine.Tool {
	h.mu.RLock()
	all := append([]engine.Tool(nil), h.universe...)
	h.mu.RUnlock()
	seen := map[string]bool{}
	for _, t := range all {
		seen[t.Name()] = true
	}
	for _, t := range sess.Tools() {
		if !seen[t.Name()] {
			all = append(all, t)
		}
	}
	return all
}

func callGetAllTools(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	type info struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	var list []info
	sess.Call(func() {
		for _, t := range h.allTools(sess) {
			list = append(list, info{t.Name(), t.Description()})
		}
	})
	if list == nil {
		list = []info{}
	}
	return openObj().val("tools", list).bytes(), nil
}

// callSetActiveTools offers the named tools, in the order of all tools;
// unknown names are ignored, as the original ignores them. The answer
// lists the tools now active.
func callSetActiveTools(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Tools []string `json:"tools"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range p.Tools {
		want[n] = true
	}
	var names []string
	sess.Call(func() {
		var tools []engine.Tool
		for _, t := range h.allTools(sess) {
			if want[t.Name()] {
				tools = append(tools, t)
			}
		}
		sess.SetActiveTools(tools)
		names = toolNames(tools)
	})
	return openObj().val("tools", names).bytes(), nil
}

func callSetModel(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var m engine.Model
	var err error
	sess.Call(func() { m, err = sess.SelectModel(p.Provider, p.ModelID) })
	if err != nil {
		return nil, failed(jsonrpc.CodeFailed, err.Error())
	}
	return openObj().val("model", m).bytes(), nil
}

func callGetModel(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var m *engine.Model
	sess.Call(func() { m = sess.Model() })
	if m == nil {
		return []byte(`{"model":null}`), nil
	}
	return openObj().val("model", m).bytes(), nil
}

func callSetThinkingLevel(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var p struct {
		Level string `json:"level"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var l engine.ThinkingLevel
	sess.Call(func() { l = sess.SetThinkingLevel(engine.ThinkingLevel(p.Level)) })
	return openObj().str("level", string(l)).bytes(), nil
}

func callGetThinkingLevel(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var l engine.ThinkingLevel
	sess.Call(func() { l = sess.ThinkingLevel() })
	return openObj().str("level", string(l)).bytes(), nil
}

func callGetContextUsage(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var cu *engine.ContextUsage
	sess.Call(func() { cu = sess.Stats().ContextUsage })
	if cu == nil {
		return nil, nil
	}
	return engine.MarshalJSON(cu)
}

func callIsIdle(h *Host, e *ext, sess *engine.Session, params json.RawMessage) ([]byte, error) {
	var idle bool
	sess.Call(func() { idle = sess.Phase() == engine.PhaseIdle && !sess.IsStreaming() })
	return openObj().boolean("idle", idle).bytes(), nil
}

// dialogCall asks the host's user (an extension_ui_request) and answers
// {"value"} (select, input, editor) or {"confirmed"} (confirm), with
// "cancelled" (and "timedOut") when the user dismissed it, its timeout
// passed, or the work it belongs to was aborted (the host is then told to
// close it).
func dialogCall(method string) slowCall {
	return func(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error) {
		var p struct {
			Title       string   `json:"title"`
			Message     string   `json:"message"`
			Options     []string `json:"options"`
			Placeholder string   `json:"placeholder"`
			Prefill     string   `json:"prefill"`
			Timeout     int64    `json:"timeout"`
		}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		if method == engine.DialogSelect && len(p.Options) == 0 {
			return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "options" must be a non-empty array of strings`)
		}
		if p.Timeout < 0 {
			return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "timeout" must not be negative`)
		}
		resume := e.pause(parent)
		defer resume()
		// Without a session (Options.Sessionless) nobody can answer: the
		// dialog is dismissed at once, as a session without a UI does.
		reply, err := engine.DialogReply{Cancelled: true}, error(nil)
		if sess != nil {
			reply, err = sess.Dialog(ctx, engine.DialogRequest{Method: method, Title: p.Title, Message: p.Message, Options: p.Options,
				Placeholder: p.Placeholder, Prefill: p.Prefill, Timeout: time.Duration(p.Timeout) * time.Millisecond,
				ToolCallID: toolCallOf(ctx)})
		}
		o := openObj()
		switch {
		case method == engine.DialogConfirm:
			o.boolean("confirmed", reply.Confirmed && !reply.Cancelled)
		case reply.HasValue && !reply.Cancelled:
			o.str("value", reply.Value)
		}
		if reply.Cancelled || err != nil {
			o.boolean("cancelled", true)
		}
		if reply.TimedOut {
			o.boolean("timedOut", true)
		}
		return o.bytes(), nil
	}
}

// dialogMethods are the calls that ask the user: a sessionless host
// serves them (dismissed), and no other.
var dialogMethods = map[string]bool{"ui.select": true, "ui.confirm": true, "ui.input": true, "ui.editor": true}

// callExec runs a command under the agent's shell rules (the RPC bash
// command's: combined output, the last 50 KB kept, the process group
// killed on abort or timeout). args are quoted for the shell.
func callExec(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error) {
	var p struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Timeout int64    `json:"timeout"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Command) == "" {
		return nil, failed(jsonrpc.CodeInvalidParams, `invalid params: "command" is required`)
	}
	line := p.Command
	for _, a := range p.Args {
		line += " " + shellQuote(a)
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.Timeout)*time.Millisecond)
		defer cancel()
	}
	res, err := sess.Exec(ctx, line)
	if err != nil {
		return nil, failed(jsonrpc.CodeFailed, err.Error())
	}
	o := openObj().str("output", res.Output)
	if res.ExitCode != nil {
		o.val("exitCode", *res.ExitCode)
	}
	return o.boolean("cancelled", res.Cancelled).boolean("truncated", res.Truncated).bytes(), nil
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '@' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// callAbort aborts the run and answers once it has wound down.
func callAbort(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error) {
	done := make(chan struct{})
	sess.Post(func() { sess.Abort(func() { close(done) }) })
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil, nil
}

func callSetSessionName(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error) {
	var p struct {
		Name string `json:"name"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	errc := make(chan error, 1)
	sess.Post(func() { sess.SetSessionName(p.Name, func(err error) { errc <- err }) })
	select {
	case err := <-errc:
		if err != nil {
			return nil, failed(jsonrpc.CodeFailed, err.Error())
		}
	case <-ctx.Done():
	}
	return nil, nil
}

// callCompact compacts the session (the compact command's verb: a run is
// aborted first) and answers the compaction's result.
func callCompact(ctx context.Context, h *Host, e *ext, sess *engine.Session, params json.RawMessage, parent *call) ([]byte, error) {
	var p struct {
		CustomInstructions string `json:"customInstructions"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	type outcome struct {
		res *engine.CompactionResult
		err error
	}
	done := make(chan outcome, 1)
	sess.Post(func() {
		sess.Compact(p.CustomInstructions, func(res *engine.CompactionResult, err error) { done <- outcome{res, err} })
	})
	select {
	case o := <-done:
		if o.err != nil {
			return nil, failed(jsonrpc.CodeFailed, o.err.Error())
		}
		return o.res.AppendJSON(nil), nil
	case <-ctx.Done():
		return nil, nil
	}
}
