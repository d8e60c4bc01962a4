package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// The session/update kinds we send.
const (
	updateUserMessage  = "user_message_chunk"
	updateAgentMessage = "agent_message_chunk"
	updateAgentThought = "agent_thought_chunk"
	updateToolCall     = "tool_call"
	updateToolCallUpd  = "tool_call_update"
	updatePlan         = "plan"
	updateCommands     = "available_commands_update"
	updateMode         = "current_mode_update"
	updateConfig       = "config_option_update"
	updateSessionInfo  = "session_info_update"
	updateUsage        = "usage_update"
)

// Outgoing updates are our own structs (key order fixed, HTML escaping
// off); the SDK's types decode what the client sends.

type textBlock struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

type imageBlock struct {
	Type     string `json:"type"` // "image"
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type chunkUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Content       any    `json:"content"`
	MessageID     string `json:"messageId,omitempty"`
}

type location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// toolCallUpdate is tool_call (the first announcement: title and kind
// required) and tool_call_update (every field optional).
type toolCallUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Status        string          `json:"status,omitempty"`
	RawInput      json.RawMessage `json:"rawInput,omitempty"`
	Locations     []location      `json:"locations,omitempty"`
	Content       []any           `json:"content,omitempty"`
	RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
}

type contentItem struct {
	Type    string `json:"type"` // "content"
	Content any    `json:"content"`
}

type diffItem struct {
	Type    string  `json:"type"` // "diff"
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

type terminalItem struct {
	Type       string `json:"type"` // "terminal"
	TerminalID string `json:"terminalId"`
}

type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

type planUpdate struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []planEntry `json:"entries"`
}

type usageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int64  `json:"used"`
	Size          int    `json:"size"`
	Cost          *cost  `json:"cost,omitempty"`
}

type cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type infoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title"`
}

type modeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type configUpdate struct {
	SessionUpdate string                    `json:"sessionUpdate"`
	ConfigOptions []sdk.SessionConfigOption `json:"configOptions"`
}

type commandsUpdate struct {
	SessionUpdate     string    `json:"sessionUpdate"`
	AvailableCommands []command `json:"availableCommands"`
}

type command struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *commandInput `json:"input,omitempty"`
}

type commandInput struct {
	Hint string `json:"hint"`
}

type notification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// update sends one session/update: to the opener and every attached
// client, or during an attach's replay to that client only.
func (ss *session) update(u any) {
	n := notification{SessionID: ss.id, Update: u}
	if ss.only != nil {
		ss.only.frame(notificationLine(sdk.ClientMethodSessionUpdate, n))
		return
	}
	ss.srv.c.notify(sdk.ClientMethodSessionUpdate, n)
	if ps := ss.peersNow(); ps != nil {
		line := notificationLine(sdk.ClientMethodSessionUpdate, n)
		for _, p := range ps {
			p.frame(line)
		}
	}
}

// notificationLine is a notification's line, for the attached clients.
func notificationLine(method string, params any) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		b, _ = json.Marshal(struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
		}{"2.0", method})
	}
	return append(b, '\n')
}

// chunk sends a text chunk, encoded by hand: it is the hot path of a
// stream (one per delta).
func (ss *session) chunk(kind, text, msgID string) {
	c := ss.srv.c
	bp := c.out.Buf()
	b := append(*bp, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	b = engine.AppendJSONString(b, ss.id)
	b = append(b, `,"update":{"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, `","content":{"type":"text","text":`...)
	b = engine.AppendJSONString(b, text)
	b = append(b, '}')
	if msgID != "" {
		b = append(b, `,"messageId":`...)
		b = engine.AppendJSONString(b, msgID)
	}
	*bp = append(b, '}', '}', '}', '\n')
	switch ps := ss.peersNow(); {
	case ss.only != nil:
		ss.only.frame(*bp) // copied; the buffer is left to the collector
	case ps != nil:
		for _, p := range ps {
			p.frame(*bp) // copied
		}
		c.out.Send(bp)
	default:
		c.out.Send(bp)
	}
}

// notice is a line for the user about what the agent does on its own
// (a retry, a compaction), as a message chunk of its own.
func (ss *session) notice(text string) {
	ss.chunk(updateAgentMessage, text, ss.newMessageID())
}

func (ss *session) newMessageID() string { return ss.srv.opts.IDs.NewID("msg") }

// callState is what the Sink knows of a tool call.
type callState struct {
	name     string
	terminal string // the editor's terminal running it, if any
}

// Event implements engine.Sink: the engine's events become session
// updates, on the executor, in order. (actor)
func (ss *session) Event(ev engine.Event) {
	switch e := ev.(type) {
	case engine.MessageStart:
		if _, ok := e.Message.(*engine.AssistantMessage); ok {
			ss.msgID = ss.newMessageID()
		}
	case engine.MessageUpdate:
		ss.messageUpdate(e)
	case engine.MessageEnd:
		if a, ok := e.Message.(*engine.AssistantMessage); ok {
			ss.assistantEnd(a)
		}
	case engine.ToolExecutionStart:
		ss.toolStart(e)
	case engine.ToolExecutionUpdate:
		ss.toolUpdate(e)
	case engine.ToolExecutionEnd:
		ss.toolEnd(e)
	case engine.TodoAutoClear:
		ss.sendPlan()
	case engine.AutoRetryStart:
		ss.notice(fmt.Sprintf("Retrying (attempt %d of %d) in %s: %s", e.Attempt, e.MaxAttempts, seconds(e.DelayMs), e.ErrorMessage))
	case engine.AutoCompactionStart:
		ss.notice("Compacting the conversation to fit the context window…")
	case engine.AutoCompactionEnd:
		switch {
		case e.Result != nil:
			ss.notice(fmt.Sprintf("Compacted the conversation (%d tokens before).", e.Result.TokensBefore))
		case e.Aborted || e.Skipped:
		case e.ErrorMessage != "":
			ss.notice("Compaction failed: " + e.ErrorMessage)
		}
	case engine.DialogOpen:
		ss.openDialog(e)
	case engine.DialogCancel:
		ss.withdrawDialog(e)
	case engine.Notify:
		ss.notice(e.Message)
	case engine.ExtensionError:
		// ACP has no frame for it; the editor's agent log is stderr.
		fmt.Fprintf(ss.srv.opts.Log, "xcsh: extension %s (%s): %s\n", e.ExtensionPath, e.Event, e.Error)
	case engine.SetTitle:
		ss.update(infoUpdate{SessionUpdate: updateSessionInfo, Title: e.Title})
	}
}

// Backlogged implements engine.Backlog: the last message found stdout
// full, so the engine merges the deltas piling up meanwhile.
func (ss *session) Backlogged() bool {
	if ss.srv.c.out.Backlogged() {
		return true
	}
	for _, p := range ss.peersNow() {
		if p.backlogged() {
			return true
		}
	}
	return false
}

func seconds(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

func (ss *session) messageUpdate(e engine.MessageUpdate) {
	switch e.Kind {
	case engine.UpdateTextDelta:
		ss.chunk(updateAgentMessage, e.Delta, ss.msgID)
	case engine.UpdateThinkingDelta:
		ss.chunk(updateAgentThought, e.Delta, ss.msgID)
	case engine.UpdateToolCallStart:
		// Shown as soon as it starts streaming, so the editor can show the
		// tool in use while the model writes its arguments.
		if e.Partial == nil {
			return
		}
		id, name, _, ok := e.Partial.ToolCall(e.ContentIndex)
		if !ok || id == "" {
			return
		}
		ss.calls[id] = &callState{name: name}
		ss.update(toolCallUpdate{SessionUpdate: updateToolCall, ToolCallID: id, Title: name, Kind: toolKind(name),
			Status: string(sdk.ToolCallStatusPending), RawInput: json.RawMessage("{}")})
	case engine.UpdateToolCallEnd:
		if e.ToolCall == nil {
			return
		}
		tc := e.ToolCall
		if _, ok := ss.calls[tc.ID]; !ok {
			ss.calls[tc.ID] = &callState{name: tc.Name}
			ss.update(toolCallUpdate{SessionUpdate: updateToolCall, ToolCallID: tc.ID, Title: toolTitle(tc.Name, tc.Arguments),
				Kind: toolKind(tc.Name), Status: string(sdk.ToolCallStatusPending), RawInput: rawArgs(tc.Arguments),
				Locations: toolLocations(ss.cwd, tc.Name, tc.Arguments)})
			return
		}
		ss.update(toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: tc.ID, Title: toolTitle(tc.Name, tc.Arguments),
			RawInput: rawArgs(tc.Arguments), Locations: toolLocations(ss.cwd, tc.Name, tc.Arguments)})
	}
}

func rawArgs(args []byte) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

func (ss *session) assistantEnd(a *engine.AssistantMessage) {
	ss.cost += a.Usage.Cost.Total
	if a.StopReason == engine.StopAborted || a.StopReason == engine.StopError {
		return
	}
	u := a.Usage
	used := u.TotalTokens
	if used == 0 {
		used = u.Input + u.Output + u.CacheRead + u.CacheWrite
	}
	m := ss.eng.Model()
	if used == 0 || m == nil || m.ContextWindow <= 0 {
		return
	}
	uu := usageUpdate{SessionUpdate: updateUsage, Used: used, Size: m.ContextWindow}
	if ss.cost > 0 {
		uu.Cost = &cost{Amount: ss.cost, Currency: "USD"}
	}
	ss.update(uu)
}

func (ss *session) toolStart(e engine.ToolExecutionStart) {
	if _, ok := ss.calls[e.ToolCallID]; !ok {
		ss.calls[e.ToolCallID] = &callState{name: e.ToolName}
		ss.update(toolCallUpdate{SessionUpdate: updateToolCall, ToolCallID: e.ToolCallID, Title: toolTitle(e.ToolName, e.Args),
			Kind: toolKind(e.ToolName), Status: string(sdk.ToolCallStatusInProgress), RawInput: rawArgs(e.Args),
			Locations: toolLocations(ss.cwd, e.ToolName, e.Args)})
		return
	}
	ss.update(toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: e.ToolCallID, Status: string(sdk.ToolCallStatusInProgress)})
}

// toolResult is the part of a result object the updates show.
type toolResult struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
}

// resultContent is a result's content as tool call content: its text
// joined, and its images.
func resultContent(raw []byte) []any {
	var r toolResult
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	var out []any
	var texts []string
	for _, c := range r.Content {
		switch c.Type {
		case engine.BlockText:
			texts = append(texts, c.Text)
		case engine.BlockImage:
			out = append(out, contentItem{Type: "content", Content: imageBlock{Type: "image", Data: c.Data, MimeType: c.MimeType}})
		}
	}
	if len(texts) > 0 {
		out = append([]any{contentItem{Type: "content", Content: textBlock{Type: "text", Text: strings.Join(texts, "\n")}}}, out...)
	}
	return out
}

// toolUpdate streams a tool's partial output (bash), unless the editor's
// terminal already shows it.
func (ss *session) toolUpdate(e engine.ToolExecutionUpdate) {
	if c := ss.calls[e.ToolCallID]; c != nil && c.terminal != "" {
		return
	}
	content := resultContent(e.PartialResult)
	if len(content) == 0 {
		return
	}
	ss.update(toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: e.ToolCallID, Content: content})
}

// showTerminal embeds the editor's terminal running a call's command.
// (actor)
func (ss *session) showTerminal(callID, terminalID string) {
	c := ss.calls[callID]
	if c == nil {
		c = &callState{name: "bash"}
		ss.calls[callID] = c
	}
	c.terminal = terminalID
	ss.update(toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: callID, Content: []any{terminalItem{Type: "terminal", TerminalID: terminalID}}})
}

func (ss *session) toolEnd(e engine.ToolExecutionEnd) {
	c := ss.calls[e.ToolCallID]
	delete(ss.calls, e.ToolCallID)
	status := sdk.ToolCallStatusCompleted
	if e.IsError {
		status = sdk.ToolCallStatusFailed
	}
	u := toolCallUpdate{SessionUpdate: updateToolCallUpd, ToolCallID: e.ToolCallID, Status: string(status), RawOutput: json.RawMessage(orEmpty(e.Result))}
	var diffs []any
	if v, ok := ss.diffs.LoadAndDelete(e.ToolCallID); ok && !e.IsError {
		for _, d := range v.([]fileDiff) {
			diffs = append(diffs, diffItem{Type: "diff", Path: d.path, OldText: d.old, NewText: d.new})
		}
	}
	switch {
	case len(diffs) > 0:
		u.Content = diffs
	case c != nil && c.terminal != "":
		u.Content = append([]any{terminalItem{Type: "terminal", TerminalID: c.terminal}}, resultContent(e.Result)...)
	default:
		u.Content = resultContent(e.Result)
	}
	ss.update(u)
	if e.ToolName == engine.TodoWriteTool && !e.IsError {
		ss.sendPlan()
	}
}

func orEmpty(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("{}")
	}
	return raw
}

// sendPlan sends the todo list as the agent's plan. (actor)
func (ss *session) sendPlan() {
	entries := []planEntry{}
	for _, p := range ss.eng.Todos() {
		for _, t := range p.Tasks {
			content := t.Content
			status := t.Status
			switch status {
			case engine.TodoPending, engine.TodoInProgress, engine.TodoCompleted:
			case engine.TodoAbandoned:
				status, content = engine.TodoCompleted, content+" (abandoned)"
			default:
				status = engine.TodoPending
			}
			entries = append(entries, planEntry{Content: content, Priority: string(sdk.PlanEntryPriorityMedium), Status: status})
		}
	}
	ss.update(planUpdate{SessionUpdate: updatePlan, Entries: entries})
}

// sendCommands sends the slash commands: the built-in ones, then the
// session's (prompt templates, skills, extension commands). (actor)
func (ss *session) sendCommands() {
	cmds := builtinCommands()
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.Name] = true
	}
	for _, c := range ss.eng.Commands() {
		if seen[c.Name] {
			continue
		}
		cmd := command{Name: c.Name, Description: c.Description}
		if c.ArgumentHint != "" {
			cmd.Input = &commandInput{Hint: c.ArgumentHint}
		}
		cmds = append(cmds, cmd)
	}
	ss.update(commandsUpdate{SessionUpdate: updateCommands, AvailableCommands: cmds})
}
