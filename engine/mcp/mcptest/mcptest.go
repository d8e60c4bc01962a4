// Package mcptest is a small MCP server for the tests of the MCP client,
// written with the same SDK: over stdio as the program mcp-test-server
// (Main, installed on the scenarios' PATH), or over streamable HTTP in
// process (NewHTTP). Its tools exercise every path of the client: text,
// images and resources, errors, a crash, a hang, a cancellation, a tool
// list that changes, an elicitation, and the secrets it was given.
package mcptest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment the server reads.
const (
	// MarkerDirEnv names a directory where the slow tool writes "started"
	// when a call begins and "cancelled" when the client cancels it.
	MarkerDirEnv = "MCPTEST_MARKER_DIR"
	// TokenEnv is the secret the client passes (env in mcp.json).
	TokenEnv = "MCP_TOKEN"
)

// onePixelPNG is a 1×1 transparent PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

type empty struct{}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// NewServer returns the server with its tools; token is the secret it
// expects ("" reads TokenEnv).
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcptest", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
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
	return s
}

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
	s := NewServer()
	for _, a := range os.Args[1:] {
		if a == "--progress" {
			AddProgressTool(s)
		}
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// NewHTTP serves over streamable HTTP on 127.0.0.1 and returns the URL.
// With a token, a request without "Authorization: Bearer <token>" gets
// 401. The server's token tools report that token.
func NewHTTP(token string) (url string, stop func()) {
	srv := NewServer()
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
