// Package extkit is a small library for writing xcsh extensions in Go: it
// makes the handshake, dispatches the agent's events, hooks, tool calls
// and commands to your handlers, and gives each handler a Context with the
// calls an extension may make (dialogs, status lines, messages, entries,
// tools, model, exec). An extension is then a main function:
//
//	func main() {
//		x := &extkit.Extension{Name: "hello"}
//		x.OnToolCall(func(c *extkit.Context, ev extkit.ToolCallEvent) (*extkit.ToolCallResult, error) {
//			if ev.ToolName == "bash" && strings.Contains(string(ev.Input), "rm -rf") {
//				return &extkit.ToolCallResult{Block: true, Reason: "not here"}, nil
//			}
//			return nil, nil
//		})
//		os.Exit(extkit.Run(x))
//	}
//
// Events (notifications) are handled one at a time, in the order they
// arrive; hooks, tool calls and commands each on a goroutine of their own,
// so a handler may wait for the agent (a dialog) without holding the
// others. A handler's Context carries the session it was called for and
// the request it handles, so its calls fail clearly once the session has
// been switched (stale) and belong to the work they were made for (an
// abort cancels them; a dialog holds the hook's deadline). Nothing is
// written to stdout but protocol lines; write diagnostics to stderr (or
// Context.Log).
package extkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/lineio"
)

// Extension is what an extension offers: its name, tools, commands and
// handlers. Fill it in, then Run it.
type Extension struct {
	Name     string
	Tools    []Tool
	Commands []Command

	handlers map[string]Handler
}

// Handler handles one event or hook. Its result (nil: no change) is the
// hook's answer, encoded as JSON; an error is answered as an error (the
// agent reports it as extension_error and goes on). For events the result
// is ignored.
type Handler func(c *Context, ev Event) (any, error)

// On registers h for the event or hook name (docs/extensions.md lists
// them) and subscribes to it.
func (x *Extension) On(name string, h Handler) {
	if x.handlers == nil {
		x.handlers = map[string]Handler{}
	}
	x.handlers[name] = h
}

// Event is an event or hook as the agent sent it. Nothing of it is
// decoded until Decode is called.
type Event struct {
	Type      string // the event's name (the method)
	SessionID string // the session it belongs to
	// Raw is the whole params object; Decode reads it.
	Raw json.RawMessage
}

// Decode reads the event's payload into v.
func (ev Event) Decode(v any) error { return json.Unmarshal(ev.Raw, v) }

// Tool is a tool the extension offers the model. Execute runs one call;
// Context.Update streams partial results; Context.Context() ends when the
// call is aborted.
type Tool struct {
	Name        string
	Label       string
	Description string
	Parameters  json.RawMessage // a JSON Schema object
	Exclusive   bool            // runs alone (default: in parallel with other shared calls)
	Execute     func(c *Context, call ToolCall) (ToolResult, error)
}

// ToolCall is one call of a tool.
type ToolCall struct {
	ID    string          `json:"toolCallId"`
	Name  string          `json:"toolName"`
	Input json.RawMessage `json:"input"`
}

// ToolResult is what a tool returns (and a partial result).
type ToolResult struct {
	Content []Content `json:"content"`
	Details any       `json:"details,omitempty"`
	IsError bool      `json:"isError,omitempty"`
}

// Content is one content block.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Text is content of one text block.
func Text(s string) []Content { return []Content{{Type: "text", Text: s}} }

// Command is a slash command ("/name args") the extension offers.
type Command struct {
	Name        string
	Description string
	Run         func(c *Context, args string) error
}

// Run serves x on stdin and stdout until stdin closes and returns the exit
// status for os.Exit.
func Run(x *Extension) int {
	if err := Serve(context.Background(), x, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, x.Name+":", err)
		return 1
	}
	return 0
}

// Serve serves x on in and out until in ends or ctx does.
func Serve(ctx context.Context, x *Extension, in io.Reader, out io.Writer) error {
	c := &conn{x: x}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx
	c.rpc = jsonrpc.New(lineio.New(out, c.writeFailed), jsonrpc.Options{Preempt: c.preempt, Handle: c.handle})
	err := c.rpc.Read(lineio.NewReader(in, jsonrpc.MaxLine))
	// The agent has gone: what still waits for it ends (every call's
	// context derives from ctx); the events already read are handled.
	cancel()
	c.rpc.Wait()
	c.wg.Wait()
	return err
}

// conn is the extension's end of the wire: a jsonrpc.Conn whose reader
// takes the agent's requests (each on a goroutine of its own) and its
// $/cancelRequest, and queues its events for their handlers, in order.
type conn struct {
	x   *Extension
	ctx context.Context
	rpc *jsonrpc.Conn

	mu       sync.Mutex
	session  string // the session last announced (initialize, session_start)
	writeErr error  // the first failed write to stdout

	wg sync.WaitGroup // the request handlers' goroutines
}

func (c *conn) writeFailed(err error) {
	c.mu.Lock()
	c.writeErr = err
	c.mu.Unlock()
}

// failedWrite is the error of a write to stdout that failed (nil: none).
func (c *conn) failedWrite() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writeErr
}

// preempt takes what the reader must: initialize, answered at once; the
// other requests, each started on a goroutine of its own; $/cancelRequest.
// Events go to the queue (handle).
func (c *conn) preempt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch {
	case !req.IsCall() && req.Method == "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			c.rpc.Cancel(p.ID)
		}
		return nil, nil
	case !req.IsCall():
		return nil, jsonrpc.ErrNotHandled
	case req.Method == "initialize":
		c.event(req)
		return c.handshake(), nil
	}
	id, _ := strconv.ParseInt(string(req.ID), 10, 64)
	hctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel) // withdrawn by the agent
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer stop()
		defer cancel()
		ev := c.event(req)
		cx := &Context{ctx: hctx, c: c, SessionID: ev.SessionID, during: id}
		res, err := c.dispatch(cx, req.Method, ev)
		c.answer(req, res, err)
	}()
	return nil, jsonrpc.ErrAsync
}

// handle runs an event's handler, one at a time, in the order they came.
func (c *conn) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	h := c.x.handlers[req.Method]
	if h == nil {
		return nil, nil
	}
	ev := c.event(req)
	_, _ = h(&Context{ctx: c.ctx, c: c, SessionID: ev.SessionID}, ev)
	return nil, nil
}

// event makes the Event of a message without decoding its payload (an
// agent_end carries every message of the run): the type is the method, the
// session is the params' "sessionId" (the agent writes it among the first
// keys of what it makes), else the session last announced.
func (c *conn) event(m *jsonrpc.Request) Event {
	ev := Event{Type: m.Method, Raw: m.Params, SessionID: sessionOf(m.Params)}
	c.mu.Lock()
	if ev.SessionID == "" {
		ev.SessionID = c.session
	} else if m.Method == "session_start" || m.Method == "initialize" {
		c.session = ev.SessionID
	}
	c.mu.Unlock()
	return ev
}

// sessionOf reads the "sessionId" string among the first bytes of params.
func sessionOf(params []byte) string {
	head := params[:min(len(params), 256)]
	i := bytes.Index(head, []byte(`"sessionId":"`))
	if i < 0 {
		return ""
	}
	rest := head[i+len(`"sessionId":"`):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// answer answers a request: a handler's error (whatever its kind) is the
// failure's text under CodeFailed; the result is encoded here, so a result
// that cannot be encoded is answered as a failure too.
func (c *conn) answer(req *jsonrpc.Request, res any, err error) {
	if err != nil {
		c.rpc.Respond(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeFailed, Message: err.Error()})
		return
	}
	var body json.RawMessage
	if res != nil {
		b, merr := json.Marshal(res)
		if merr != nil {
			c.rpc.Respond(req, nil, &jsonrpc.Error{Code: jsonrpc.CodeFailed, Message: merr.Error()})
			return
		}
		body = b
	}
	c.rpc.Respond(req, body, nil)
}

func (c *conn) dispatch(cx *Context, method string, ev Event) (any, error) {
	switch method {
	case "tool/execute":
		var call ToolCall
		if err := ev.Decode(&call); err != nil {
			return nil, err
		}
		for _, t := range c.x.Tools {
			if t.Name == call.Name {
				cx.toolCallID = call.ID
				res, err := t.Execute(cx, call)
				if err != nil {
					return nil, err
				}
				if res.Content == nil {
					res.Content = []Content{}
				}
				return res, nil
			}
		}
		return nil, fmt.Errorf("no tool %q", call.Name)
	case "command/run":
		var p struct {
			Name string `json:"name"`
			Args string `json:"args"`
		}
		if err := ev.Decode(&p); err != nil {
			return nil, err
		}
		for _, cmd := range c.x.Commands {
			if cmd.Name == p.Name {
				return nil, cmd.Run(cx, p.Args)
			}
		}
		return nil, fmt.Errorf("no command %q", p.Name)
	}
	h := c.x.handlers[method]
	if h == nil {
		return nil, nil
	}
	return h(cx, ev)
}

// handshake is the answer to initialize.
func (c *conn) handshake() map[string]any {
	subs := []string{}
	for name := range c.x.handlers {
		subs = append(subs, name)
	}
	tools := []map[string]any{}
	for _, t := range c.x.Tools {
		conc := "shared"
		if t.Exclusive {
			conc = "exclusive"
		}
		params := t.Parameters
		if params == nil {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		tools = append(tools, map[string]any{"name": t.Name, "label": t.Label, "description": t.Description,
			"parameters": params, "concurrency": conc})
	}
	cmds := []map[string]any{}
	for _, cmd := range c.x.Commands {
		cmds = append(cmds, map[string]any{"name": cmd.Name, "description": cmd.Description})
	}
	return map[string]any{"protocolVersion": jsonrpc.Version, "name": c.x.Name, "subscribe": subs, "tools": tools, "commands": cmds}
}

// call sends a request to the agent and waits for its answer; when ctx
// ends first the request is withdrawn ($/cancelRequest).
func (c *conn) call(ctx context.Context, method string, params any, result any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	cl, err := c.rpc.Call(method, json.RawMessage(body))
	if err != nil {
		return err
	}
	if err := c.failedWrite(); err != nil {
		cl.Withdraw()
		return err
	}
	if err := cl.Await(ctx, result); err != nil {
		if _, end := cl.Result(); errors.Is(end, jsonrpc.ErrWithdrawn) {
			c.rpc.Notify("$/cancelRequest", json.RawMessage(`{"id":`+strconv.FormatInt(cl.ID(), 10)+`}`))
			return ctx.Err()
		}
		return err
	}
	return nil
}

// IsStale reports whether err is a call refused because its session is no
// longer current.
func IsStale(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == jsonrpc.CodeStaleSession
}

func (c *conn) notify(method string, params []byte) error {
	c.rpc.Notify(method, json.RawMessage(params))
	return c.failedWrite()
}
