// Package mcptest is a small MCP server for the tests of the MCP client,
// written with the same SDK: over stdio as the program mcp-test-server
// (Main, installed on the scenarios' PATH), or over streamable HTTP in
// process (NewHTTP). Its tools exercise every path of the client: text,
// images and resources, errors, a crash, a hang, a cancellation, a tool
// list that changes, an elicitation, the secrets it was given, and (over
// stdio, with ExtrasEnv set) a flood of tools/list_changed notifications,
// a count of the tools/list requests the client made and the length of a
// variable of its environment; with TraceEnv set, the traceparent of a
// call's _meta.
package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment the server reads.
const (
	// MarkerDirEnv names a directory where the slow tool writes "started"
	// when a call begins and "cancelled" when the client cancels it.
	MarkerDirEnv = "MCPTEST_MARKER_DIR"
	// TokenEnv is the secret the client passes (env in mcp.json).
	TokenEnv = "MCP_TOKEN"
	// ExtrasEnv set to 1 gives the stdio server the tools flood, lists
	// (which work on its wire), env, and two whose names are too long
	// (LongToolPrefix); the other scenarios' tool lists stay as they are.
	ExtrasEnv = "MCPTEST_EXTRAS"
	// TraceEnv set to 1 adds the tool traceparent, which answers the
	// traceparent of its call's _meta (the other lists stay as they are).
	TraceEnv = "MCPTEST_TRACE"
)

// LongToolPrefix begins the names of two of the extra tools, whose names
// the client must cut (64 characters at most).
const LongToolPrefix = "a_tool_whose_name_runs_well_past_what_the_providers_accept_"

// onePixelPNG is a 1×1 transparent PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

type empty struct{}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type envIn struct {
	Name string `json:"name" jsonschema:"the variable"`
}

type floodIn struct {
	Count int `json:"count" jsonschema:"how many notifications to send"`
}

// NewServer returns the server with its tools.
func NewServer() *mcp.Server { return newServer(nil) }

// newServer is NewServer, with the tools that work on w when there is one.

func newServer(w *wire) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	if os.Getenv(TraceEnv) == "1" {
		mcp.AddTool(s, &mcp.Tool{Name: "traceparent", Description: "The traceparent of the call's _meta"},
			func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
				tp, _ := req.Params.Meta["traceparent"].(string)
				return text("traceparent: " + tp), nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "media", Description: "An image, an embedded resource and a link"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "three items"},
				&mcp.ImageContent{Data: onePixelPNG, MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}},
				&mcp.ResourceLink{URI: "file:///big.log", Name: "big.log", Description: "the full log"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fail as a tool does"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed on purpose"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exit in the middle of the call"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "mcptest: crashing on purpose (token %s)\n", os.Getenv(TokenEnv))
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answer, whatever happens"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			select {}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Wait until the call is cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			mark("started")
			<-ctx.Done()
			mark("cancelled")
			return nil, nil, ctx.Err()
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add the tool extra (the list changes)"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "A tool that appeared later"},
				func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
					return text("extra is here"), nil, nil
				})
			return text("added the tool extra"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "deploy", Description: "Ask the user where to deploy"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
			// Multi round-trip style (SEP-2322): ask for input in the
			// result; the SDK turns it into elicitation/create for clients
			// of older protocol versions.
			resp, ok := req.Params.InputResponses["where"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"where": &mcp.ElicitParams{
					Message: "Where should I deploy?",
					RequestedSchema: map[string]any{
						"type": "object",
						"properties": map[string]any{
							"env":     map[string]any{"type": "string", "title": "Environment", "enum": []any{"staging", "production"}},
							"confirm": map[string]any{"type": "boolean", "title": "Really deploy?", "description": "The service restarts."},
						},
						"required": []any{"env", "confirm"},
					},
				}}}, nil, nil
			}
			res, _ := resp.(*mcp.ElicitResult)
			if res == nil {
				return text("no answer"), nil, nil
			}
			return text(fmt.Sprintf("action=%s content=%v", res.Action, res.Content)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "token_length", Description: "The length of the secret the client passed"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("token length %d", len(os.Getenv(TokenEnv)))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "leak", Description: "Return the secret (the client must redact it)"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text("the token is " + os.Getenv(TokenEnv)), nil, nil
		})
	if w == nil {
		return s
	}
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "Send count tools/list_changed notifications, then answer"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in floodIn) (*mcp.CallToolResult, any, error) {
			if err := w.flood(ctx, in.Count); err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprintf("sent %d notifications", in.Count)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "lists", Description: "How many tools/list requests the client made"},
		func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("tools/list requests: %d", w.lists.Load())), nil, nil
		})
	// Two names that begin alike: mcp__<server>__ with either is longer
	// than the providers take, and cut to 64 they would be one.
	for _, n := range []string{"one", "two"} {
		mcp.AddTool(s, &mcp.Tool{Name: LongToolPrefix + n, Description: "A tool with a long name (" + n + ")"},
			func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
				return text("long tool " + n), nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "The length of a variable of the server's environment"},
		func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(in.Name)
			if !ok {
				return text(in.Name + " is not set"), nil, nil
			}
			return text(fmt.Sprintf("%s has %d characters", in.Name, len(v))), nil, nil
		})
	return s
}

// wire is the server's side of a connection, seen from the transport: it
// counts the client's tools/list requests and can write notifications the
// SDK would not send (it debounces list changes).
type wire struct {
	lists atomic.Int64
	// mu is held for each write, and across a whole flood: an answer the
	// server writes meanwhile (to a tools/list the flood set off) comes
	// after the flood, and so after the client has handled it (below).
	mu   sync.Mutex
	conn mcp.Connection
	// synced receives the client's answer to the ping that ends a flood.
	synced chan struct{}
}

// syncID is the id of the ping that ends a flood.
const syncID = "mcptest-flood-sync"

// flood writes count tools/list_changed notifications in a row, then a
// ping, and waits for its answer: the client handles what it receives in
// order, so it has handled every notification by then.
func (w *wire) flood(ctx context.Context, count int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	note := &jsonrpc.Request{Method: "notifications/tools/list_changed", Params: json.RawMessage(`{}`)}
	for range count {
		if err := w.conn.Write(ctx, note); err != nil {
			return err
		}
	}
	id, _ := jsonrpc.MakeID(syncID)
	if err := w.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "ping", Params: json.RawMessage(`{}`)}); err != nil {
		return err
	}
	select {
	case <-w.synced:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Connect implements mcp.Transport over stdio.
func (w *wire) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := (&mcp.StdioTransport{}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	w.conn, w.synced = c, make(chan struct{}, 1)
	return wireConn{w}, nil
}

// wireConn is the connection the server's SDK uses.
type wireConn struct{ w *wire }

func (c wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.w.conn.Read(ctx)
		switch m := m.(type) {
		case *jsonrpc.Request:
			if m.Method == "tools/list" {
				c.w.lists.Add(1)
			}
		case *jsonrpc.Response:
			if m.ID.Raw() == syncID {
				c.w.synced <- struct{}{}
				continue // ours, not the SDK's
			}
		}
		return m, err
	}
}

func (c wireConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.w.conn.Write(ctx, m)
}

func (c wireConn) Close() error      { return c.w.conn.Close() }
func (c wireConn) SessionID() string { return c.w.conn.SessionID() }

// mark writes name into the marker directory, if there is one.
func mark(name string) {
	if dir := os.Getenv(MarkerDirEnv); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644)
	}
}

// stepsIn is the argument of the steps tool.
type stepsIn struct {
	N int `json:"n" jsonschema:"how many steps (each one progress notification)"`
}

// AddProgressTool adds the tool steps (mcp-test-server --progress): it
// sends one progress notification per step ("step i of n", i/n) when the
// call has a progress token, then pings the client before it answers, so
// the client has handled every notification (they share its handler
// queue) before the result arrives: a deterministic order for goldens.
func AddProgressTool(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Work in steps, reporting progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= in.N && token != nil; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
					Message: fmt.Sprintf("step %d of %d", i, in.N), Progress: float64(i), Total: float64(in.N)})
				if err != nil {
					return nil, nil, err
				}
			}
			if err := req.Session.Ping(ctx, nil); err != nil {
				return nil, nil, err
			}
			return text(fmt.Sprintf("%d steps done (progress token sent: %t)", in.N, token != nil)), nil, nil
		})
}

// Main serves over stdio until the client closes stdin. With the argument
// --progress it also offers the steps tool (AddProgressTool).
func Main() {
	var t mcp.Transport = &mcp.StdioTransport{}
	var w *wire
	if os.Getenv(ExtrasEnv) == "1" {
		w = &wire{}
		t = w
	}
	s := newServer(w)
	for _, a := range os.Args[1:] {
		if a == "--progress" {
			AddProgressTool(s)
		}
	}
	if err := s.Run(context.Background(), t); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// AddRefTool adds the tool "peek", whose input schema refers to ref (its
// property "p" is {"$ref": ref}): a client must not load what a server's
// schema names (a file, a FIFO, its own stdin, a URL).
func AddRefTool(s *mcp.Server, ref string) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"$ref": ref}}}
	s.AddTool(&mcp.Tool{Name: "peek", Description: "A tool whose schema refers outside itself", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("peeked"), nil })
}

// NewHTTP serves over streamable HTTP on 127.0.0.1 and returns the URL.
// With a token, a request without "Authorization: Bearer <token>" gets
// 401. The server's token tools report that token.
func NewHTTP(token string) (url string, stop func()) {
	return ServeHTTP(NewServer(), token)
}

// ServeHTTP serves srv as NewHTTP does.
func ServeHTTP(srv *mcp.Server, token string) (url string, stop func()) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return ts.URL + "/mcp", ts.Close
}
