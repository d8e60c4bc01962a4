package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/xcsh-go/xcsh/engine"
)

// tool is one MCP tool as the engine offers it.
type tool struct {
	s           *server
	name        string // the server's name for it
	full        string // mcp__<server>__<tool>
	description string
	schema      []byte
}

// newTool is t as the engine offers it, under the name full (toolNames).
func (s *server) newTool(t *mcp.Tool, full string) *tool {
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s", t.Name, s.cfg.Name)
	}
	schema := []byte(`{"type":"object"}`)
	if t.InputSchema != nil {
		if b, err := engine.MarshalJSON(t.InputSchema); err == nil && len(b) > 0 && b[0] == '{' {
			schema = b
		}
	}
	return &tool{s: s, name: t.Name, full: full, description: s.red.text(desc), schema: schema}
}

func (t *tool) Name() string                    { return t.full }
func (t *tool) Description() string             { return t.description }
func (t *tool) Schema() []byte                  { return t.schema }
func (t *tool) Concurrency() engine.Concurrency { return engine.Shared }

// errCallTimeout ends a call that outlived its timeout.
var errCallTimeout = errors.New("MCP call timed out")

// Run implements engine.Tool: one tools/call under ctx (an abort cancels
// it, and the SDK tells the server) and the per-call timeout; the
// server's progress notifications for it are its updates (progress.go).
func (t *tool) Run(ctx context.Context, call engine.ToolCall, update func(engine.ToolResult)) (engine.ToolResult, error) {
	s := t.s
	cs, gen, res := s.session(ctx)
	if res != nil {
		return *res, nil
	}
	if cs == nil { // cancelled while the server was starting
		return engine.ToolResult{}, ctx.Err()
	}
	timeout := s.cfg.Timeout
	if timeout <= 0 {
		timeout = s.m.o.CallTimeout
	}
	cctx, cancel := context.WithCancelCause(ctx)
	fired, stopTimer := s.m.o.Clock.After(timeout)
	timerDone := make(chan struct{})
	go func() {
		defer close(timerDone)
		select {
		case <-fired:
			cancel(errCallTimeout)
		case <-cctx.Done():
		}
	}()
	args := json.RawMessage(call.Arguments)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &mcp.CallToolParams{Name: t.name, Arguments: args}
	if tp := engine.TraceParent(ctx); tp != "" {
		// The call's span (tracing on): the server's own spans join the
		// trace, as MCP's _meta.traceparent (SEP-414) proposes.
		params.Meta = mcp.Meta{"traceparent": tp}
	}
	if update != nil {
		token, forget := s.progress.track(update)
		defer forget() // before Run returns: no update follows the call's end
		params.SetProgressToken(token)
	}
	out, err := cs.CallTool(cctx, params)
	stopTimer()
	timedOut := errors.Is(context.Cause(cctx), errCallTimeout)
	cancel(nil)
	<-timerDone
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return engine.ToolResult{}, ctx.Err() // aborted: the SDK sent notifications/cancelled
		case timedOut:
			s.stop(gen, fmt.Sprintf("did not answer a call within %v; stopped", timeout))
			return *errResult("MCP tool %q of server %q did not answer within %v; the server was stopped and starts again on a later call",
				t.name, s.cfg.Name, timeout), nil
		case s.connectionGone(err, gen):
			s.markCrashed(gen)
			return *errResult("MCP server %q exited during the call to %q; it starts again on a later call", s.cfg.Name, t.name), nil
		}
		return *errResult("MCP tool %q of server %q failed: %s", t.name, s.cfg.Name, s.red.text(err.Error())), nil
	}
	s.mu.Lock()
	if s.listChanged && s.gen == gen {
		// The server may have changed its list while handling the call;
		// its notification can still be queued: re-read before the next
		// model call (Settle).
		s.marks++
	}
	s.mu.Unlock()
	return s.result(out), nil
}

// connectionGone reports whether a call failed because the connection
// ended (the server exited). It waits, bounded, for the connection's
// watcher, so the server's state says why before the call's result is
// reported.
func (s *server) connectionGone(err error, gen int) bool {
	s.mu.Lock()
	done := s.done
	current := s.gen == gen
	s.mu.Unlock()
	if !current || done == nil {
		return !current
	}
	bound := 200 * time.Millisecond
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		bound = 2 * time.Second
	}
	select {
	case <-done:
		return true
	case <-time.After(bound):
		return bound > 200*time.Millisecond
	}
}

// result maps an MCP tool result to the engine's: text as text, images as
// images, resources as their text (or a line naming them), audio as a
// line; structured content alone becomes its JSON. Secrets are redacted.
func (s *server) result(r *mcp.CallToolResult) engine.ToolResult {
	var blocks []engine.ContentBlock
	text := func(t string) { blocks = append(blocks, engine.TextBlock(s.red.text(t))) }
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text(c.Text)
		case *mcp.ImageContent:
			blocks = append(blocks, engine.ContentBlock{Type: engine.BlockImage,
				Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *mcp.AudioContent:
			text(fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			line := "[resource link] " + c.URI
			if c.Name != "" {
				line += " (" + c.Name + ")"
			}
			if c.Description != "" {
				line += ": " + c.Description
			}
			text(line)
		case *mcp.EmbeddedResource:
			rc := c.Resource
			switch {
			case rc == nil:
			case rc.Text != "":
				text("[resource " + rc.URI + "]\n" + rc.Text)
			case strings.HasPrefix(rc.MIMEType, "image/"):
				blocks = append(blocks, engine.ContentBlock{Type: engine.BlockImage,
					Data: base64.StdEncoding.EncodeToString(rc.Blob), MimeType: rc.MIMEType})
			default:
				text(fmt.Sprintf("[resource %s: %s, %d bytes]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob)))
			}
		}
	}
	if len(blocks) == 0 && r.StructuredContent != nil {
		if b, err := engine.MarshalJSON(r.StructuredContent); err == nil {
			text(string(b))
		}
	}
	if len(blocks) == 0 {
		text("(no output)")
	}
	return engine.ToolResult{Content: blocks, IsError: r.IsError}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
