package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/xcsh-go/xcsh/engine"
)

// FrontOptions configure a front: the process that speaks the RPC
// protocol to a host and drives a durable session. It keeps no state a
// successor needs: another front started anywhere with the session's id
// and the last seq its host saw goes on where this one stopped.
type FrontOptions struct {
	Client    client.Client
	TaskQueue string
	Session   string
	// Since is the cursor: events after it are written first (0: every
	// event the log keeps; negative: only new events).
	Since int64
	// Listen is the address the front takes deltas on ("": 127.0.0.1:0;
	// "off": none). A fleet's fronts listen where the workers reach them.
	Listen  string
	Version string
	// SchemaHash is the ready frame's schemaHash (rpc/schema's SchemaHash).
	SchemaHash string
	Start      Start // the workflow's input when the session is new
	// Poll is the longest wait between two reads of the event log.
	Poll time.Duration
	// Host tools: the host's frames read by the RPC server's rule
	// (rpc.HostToolDefs, rpc.HostToolReply; nil: set_host_tools is an
	// unknown command), and the schemas checked by Validator (nil: not).
	HostToolDefs  func(line []byte) ([]engine.HostToolDef, error)
	HostToolReply func(line []byte) (id string, res engine.ToolResult, final, ok bool)
	Validator     engine.Validator

	// DialogReply reads the host's extension_ui_response by the RPC
	// server's rule (rpc.DialogReply; nil: such frames are ignored).
	DialogReply func(line []byte) (id string, reply engine.DialogReply, ok bool)
	// TodoList reads set_todos (rpc.TodoList; nil: set_todos is an unknown
	// command).
	TodoList func(line []byte) ([]engine.TodoPhase, error)
	// ExportHTML writes the page of export_html for the session's record
	// at path ("": its default) and returns the path as written (nil:
	// export_html is an unknown command). export_front.go.
	ExportHTML func(ctx context.Context, path string, x *Exported) (string, error)
}

// RunFront serves the RPC protocol on in and out for the durable session
// until in ends or ctx is done. Event frames carry their "seq"; deltas
// pushed by the model-call activity carry none.
func RunFront(ctx context.Context, o FrontOptions, in io.Reader, out io.Writer) error {
	f, err := openFront(ctx, o, true)
	if err != nil {
		return err
	}
	f.emit = func(seq int64, frame []byte) {
		if seq == 0 {
			out.Write(append(append([]byte(nil), frame...), '\n'))
			return
		}
		out.Write(append(withSeq(frame, seq), '\n'))
	}
	f.answer = func(b []byte) { out.Write(append(b, '\n')) }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Listen != "off" {
		stop, err := f.listen(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	ready, _ := engine.MarshalJSON(struct {
		Type       string `json:"type"`
		Version    string `json:"version"`
		SchemaHash string `json:"schemaHash"`
	}{"ready", o.Version, o.SchemaHash})
	f.write(ready)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.pump(ctx) }()
	err = f.awaitSetup(ctx) // setup.go: no command before the session's set-up is known
	if err == nil {
		err = f.read(ctx, in)
	}
	f.unhold()
	// At the end of input the front reads what the session has done so
	// far, so a piped prompt's events are written before it exits.
	f.settle(ctx)
	cancel()
	wg.Wait()
	return err
}

// openFront starts the session's workflow, or finds it running (create:
// start it when it is not), and places the cursor (o.Since; negative: the
// last event now). The stdio front and a served session (serve.go) share
// the front that it returns: they differ in emit and answer only.
func openFront(ctx context.Context, o FrontOptions, create bool) (*front, error) {
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	id := WorkflowID(o.Session)
	o.Start.SessionID = o.Session
	if create {
		_, err := o.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: o.TaskQueue,
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, WorkflowName, o.Start)
		if err != nil {
			return nil, fmt.Errorf("start or attach session %s: %w", o.Session, err)
		}
	}
	f := &front{o: o, id: id, wake: make(chan struct{}, 1), cursor: o.Since, openStart: -1}
	if f.cursor < 0 {
		res, err := f.events(ctx)
		if err != nil {
			return nil, err
		}
		f.cursor = res.Last
	}
	return f, nil
}

type front struct {
	o  FrontOptions
	id string
	// emit takes each event in order with its seq, and each pushed delta
	// of the message being streamed with seq 0; answer takes every other
	// frame (answers, ready). Both are called with mu held, so they never
	// run at once and keep the order they were made in.
	emit   func(seq int64, frame []byte)
	answer func(frame []byte)

	mu        sync.Mutex // guards emit, answer, cursor and openStart
	cursor    int64      // the last event written
	openStart int64      // seq of the assistant message_start not yet ended (-1: none)
	wake      chan struct{}
	held      chan struct{} // a compact command's answer, until written (compact_manual.go)
}

func (f *front) write(b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer(b)
}

// events reads the log after the cursor. Where the session continued as
// new since, the earlier runs' events the cursor has not reached are read
// from those runs first (closed runs answer queries too), so a front
// loses none of them at a continue-as-new.
func (f *front) events(ctx context.Context) (EventsResult, error) {
	return f.runEvents(ctx, "", f.cursorNow())
}

func (f *front) runEvents(ctx context.Context, runID string, after int64) (EventsResult, error) {
	var res EventsResult
	v, err := f.o.Client.QueryWorkflow(ctx, f.id, runID, QueryEvents, after)
	if err == nil {
		err = v.Get(&res)
	}
	if err != nil || after >= res.Base || res.PrevRunID == "" {
		return res, err
	}
	older, err := f.runEvents(ctx, res.PrevRunID, after)
	if err != nil {
		return res, err
	}
	var frames []Frame
	for _, fr := range older.Frames {
		if fr.Seq <= res.Base {
			frames = append(frames, fr)
		}
	}
	res.Frames = append(frames, res.Frames...)
	return res, nil
}

func (f *front) cursorNow() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cursor
}

// catchUp writes the events after the cursor; it reports whether the
// session is busy.
func (f *front) catchUp(ctx context.Context) (busy bool, err error) {
	res, err := f.events(ctx)
	if err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fr := range res.Frames {
		if fr.Seq <= f.cursor {
			continue
		}
		typ := gjsonType(fr.Data)
		role := messageRole(fr.Data)
		switch {
		case typ == "message_start" && role == "assistant":
			f.openStart = fr.Seq
		case typ == "message_end" && role == "assistant":
			f.openStart = -1
		}
		f.emit(fr.Seq, fr.Data)
		f.cursor = fr.Seq
	}
	return res.Busy, nil
}

// pump reads the log: often while the session works, less when idle, at
// once when a delta names a step not yet seen.
func (f *front) pump(ctx context.Context) {
	wait := 10 * time.Millisecond
	for ctx.Err() == nil {
		busy, err := f.catchUp(ctx)
		if err != nil && ctx.Err() == nil {
			wait = f.o.Poll
		} else if busy {
			wait = 10 * time.Millisecond
		} else {
			wait = min(wait*2, f.o.Poll)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-f.wake:
		}
		t.Stop()
	}
}

// settle writes events until the session is idle and the log is read.
func (f *front) settle(ctx context.Context) {
	for ctx.Err() == nil {
		busy, err := f.catchUp(ctx)
		if err != nil || !busy {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withSeq adds "seq" as the frame's last key.
func withSeq(frame []byte, seq int64) []byte {
	b := append([]byte(nil), frame[:len(frame)-1]...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	return append(b, '}')
}

func gjsonType(b []byte) string {
	var h struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &h)
	return h.Type
}

func messageRole(b []byte) string {
	var h struct {
		Message struct {
			Role string `json:"role"`
		} `json:"message"`
	}
	_ = json.Unmarshal(b, &h)
	return h.Message.Role
}

// command is the part of an RPC command the front reads.
type command struct {
	ID                json.RawMessage `json:"id"`
	Type              string          `json:"type"`
	Message           string          `json:"message"`
	StreamingBehavior string          `json:"streamingBehavior"`
	Mode              string          `json:"mode"`
}

func (f *front) read(ctx context.Context, in io.Reader) error {
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			f.handle(ctx, line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (f *front) respond(c command, data []byte, err error) {
	b := []byte{'{'}
	if c.ID != nil {
		b = append(append(append(b, `"id":`...), c.ID...), ',')
	}
	b = append(b, `"type":"response","command":`...)
	b = engine.AppendJSONString(b, c.Type)
	if err != nil {
		b = append(b, `,"success":false,"error":`...)
		b = engine.AppendJSONString(b, err.Error())
	} else {
		b = append(b, `,"success":true`...)
		if data != nil {
			b = append(append(b, `,"data":`...), data...)
		}
	}
	f.write(append(b, '}'))
}

func (f *front) update(ctx context.Context, name string, stage client.WorkflowUpdateStage, args ...any) error {
	h, err := f.o.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: f.id, UpdateName: name,
		Args: args, WaitForStage: stage})
	if err != nil {
		return updateError(err)
	}
	// A refusal by the validator is the update's outcome, not an error of
	// the call: it is read from the handle. (Every update is waited for
	// to its end; those of prompt, steer and follow_up end at once.)
	return updateError(h.Get(ctx, nil))
}

// updateError is a refusal's own text (the workflow's validator speaks
// RPC's words), without the SDK's wrapping.
func updateError(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(rootMessage(err))
}

// query answers a query as JSON: the workflow answers with the bytes the
// engine's encoders wrote.
func (f *front) query(ctx context.Context, name string) ([]byte, error) {
	v, err := f.o.Client.QueryWorkflow(ctx, f.id, "", name)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = v.Get(&b)
	return b, err
}

func (f *front) handle(ctx context.Context, line []byte) {
	var c command
	if err := json.Unmarshal(line, &c); err != nil {
		f.write([]byte(`{"type":"response","success":false,"error":` + string(engine.AppendJSONString(nil, "Failed to parse command: "+err.Error())) + `}`))
		return
	}
	f.hold(c.Type)
	switch c.Type {
	case "prompt":
		err := f.update(ctx, UpdatePrompt, client.WorkflowUpdateStageCompleted, PromptInput{Message: c.Message, StreamingBehavior: c.StreamingBehavior})
		f.respond(c, nil, err)
		f.poke()
	case "steer", "follow_up":
		name := UpdateSteer
		if c.Type == "follow_up" {
			name = UpdateFollowUp
		}
		f.respond(c, nil, f.update(ctx, name, client.WorkflowUpdateStageCompleted, PromptInput{Message: c.Message}))
	case "abort":
		err := f.update(ctx, UpdateAbort, client.WorkflowUpdateStageCompleted)
		f.unhold() // a compaction it cancelled answers first, as in RPC
		if err == nil {
			_, err = f.catchUp(ctx) // the aborted run's closing events come first
		}
		f.respond(c, nil, err)
	case "set_interrupt_mode":
		f.respond(c, nil, f.update(ctx, UpdateInterruptMode, client.WorkflowUpdateStageCompleted, c.Mode))
	case "get_state":
		raw, err := f.query(ctx, QueryState)
		f.respond(c, raw, err)
	case "get_messages":
		raw, err := f.query(ctx, QueryMessages)
		if err == nil {
			raw = append(append([]byte(`{"messages":`), raw...), '}')
		}
		f.respond(c, raw, err)
	case "get_session_stats":
		raw, err := f.query(ctx, QueryStats)
		f.respond(c, raw, err)
	case "compact":
		f.compact(ctx, c, line)
	case "set_auto_compaction":
		f.setAutoCompaction(ctx, c, line)
	case "set_host_tools":
		if f.o.HostToolDefs == nil {
			f.respond(c, nil, fmt.Errorf("Unknown command: %s", c.Type))
			return
		}
		data, err := f.setHostTools(ctx, line)
		f.respond(c, data, err)
	case "export_html":
		f.exportHTML(ctx, c, line)
	case "extension_ui_response":
		f.dialogReply(ctx, line) // dialogs.go; never answered, as in process
	case "set_todos":
		if f.o.TodoList == nil {
			f.respond(c, nil, fmt.Errorf("Unknown command: %s", c.Type))
			return
		}
		data, err := f.setTodos(ctx, line) // todo.go
		f.respond(c, data, err)
	case "host_tool_result", "host_tool_update":
		if f.hostReply(ctx, line) {
			return
		}
		f.respond(c, nil, fmt.Errorf("Unknown command: %s", c.Type))
	default:
		f.respond(c, nil, fmt.Errorf("Unknown command: %s", c.Type))
	}
}

// setHostTools forwards set_host_tools: the schemas checked here, the
// names by the workflow against the worker's tools (engine.CheckHostTools
// both).
func (f *front) setHostTools(ctx context.Context, line []byte) ([]byte, error) {
	defs, err := f.o.HostToolDefs(line)
	if err == nil {
		_, err = engine.CheckHostTools(defs, f.o.Validator, nil)
	}
	if err != nil {
		return nil, err
	}
	h, err := f.o.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: f.id, UpdateName: UpdateSetHostTools,
		Args: []any{hostTools(defs)}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return nil, updateError(err)
	}
	var names []string
	if err := h.Get(ctx, &names); err != nil {
		return nil, updateError(err)
	}
	return engine.MarshalJSON(struct {
		ToolNames []string `json:"toolNames"`
	}{names})
}

// hostReply forwards the host's reply to a host_tool_call as an update;
// it reports false for a malformed frame (answered as an unknown
// command, as the RPC server does). A reply no call waits for is ignored
// by the workflow.
func (f *front) hostReply(ctx context.Context, line []byte) bool {
	if f.o.HostToolReply == nil {
		return false
	}
	id, res, final, ok := f.o.HostToolReply(line)
	if !ok {
		return false
	}
	name := UpdateHostPartial
	if final {
		name = UpdateHostResult
	}
	if err := f.update(ctx, name, client.WorkflowUpdateStageCompleted, HostReply{ID: id, Result: toolOutput(res)}); err != nil {
		f.write(errorFrame(err))
	}
	return true
}

// errorFrame is a response with no command: what went wrong forwarding a
// frame that has none.
func errorFrame(err error) []byte {
	return append(engine.AppendJSONString([]byte(`{"type":"response","success":false,"error":`), err.Error()), '}')
}

func (f *front) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// listen takes the deltas the model-call activity pushes and attaches
// the endpoint to the session.
func (f *front) listen(ctx context.Context) (stop func(), err error) {
	addr := f.o.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for deltas on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(f.deltas)}
	go srv.Serve(ln)
	endpoint := "http://" + ln.Addr().String() + "/deltas"
	if err := f.update(ctx, UpdateAttach, client.WorkflowUpdateStageCompleted, endpoint); err != nil {
		srv.Close()
		return nil, fmt.Errorf("attach to session %s: %w", f.o.Session, err)
	}
	return func() { srv.Close() }, nil
}

// deltas writes pushed message_update frames of the message being
// streamed; one for a step whose message_start is not written yet makes
// the front read the log first; one for a step already ended is dropped.
func (f *front) deltas(w http.ResponseWriter, r *http.Request) {
	br := bufio.NewReader(r.Body)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var d Delta
			if json.Unmarshal(line, &d) == nil {
				f.delta(r.Context(), d)
			}
		}
		if err != nil {
			return
		}
	}
}

func (f *front) delta(ctx context.Context, d Delta) {
	parts := strings.Split(d.Step, "/")
	if len(parts) != 3 {
		return
	}
	seq, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return
	}
	f.mu.Lock()
	behind := f.cursor < seq
	f.mu.Unlock()
	if behind {
		f.catchUp(ctx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.openStart == seq {
		f.emit(0, d.Frame)
	}
}
