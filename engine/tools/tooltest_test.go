package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// tree writes files (path → content) under a new temp dir and returns it.
// A path ending in "/" creates an empty directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// call runs tool with args (a JSON object) and fails the test on a Go
// error, which tools reserve for cancellation.
func call(t *testing.T, tool engine.Tool, args string) engine.ToolResult {
	t.Helper()
	res, err := tool.Run(context.Background(), engine.ToolCall{ID: "c1", Name: tool.Name(), Arguments: []byte(args)}, nil)
	if err != nil {
		t.Fatalf("%s %s: unexpected error %v", tool.Name(), args, err)
	}
	return res
}

func text(res engine.ToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].Text
}

// details decodes a result's details into a generic map.
func details(t *testing.T, res engine.ToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(res.Details, &m); err != nil {
		t.Fatalf("details %q: %v", res.Details, err)
	}
	return m
}

// wantText checks the text and the error/warning flags of a result.
func wantText(t *testing.T, res engine.ToolResult, want string, isErr, isWarn bool) {
	t.Helper()
	if got := text(res); got != want {
		t.Errorf("text:\n got %q\nwant %q", got, want)
	}
	if res.IsError != isErr || res.IsWarning != isWarn {
		t.Errorf("flags: isError=%v isWarning=%v, want %v %v (text %q)", res.IsError, res.IsWarning, isErr, isWarn, text(res))
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// wantFailure checks a call that must fail as a result the model sees:
// no Go error, isError without isWarning, and the text want exactly, or
// (when want ends in "…") a longer text starting with the rest.
func wantFailure(t *testing.T, res engine.ToolResult, err error, want string) {
	t.Helper()
	if err != nil {
		t.Fatalf("Go error %v; failures must be error results", err)
	}
	if !res.IsError || res.IsWarning {
		t.Errorf("flags isError=%v isWarning=%v", res.IsError, res.IsWarning)
	}
	got := text(res)
	if prefix, ok := strings.CutSuffix(want, "…"); ok {
		if !strings.HasPrefix(got, prefix) || got == prefix {
			t.Errorf("text %q, want prefix %q", got, prefix)
		}
	} else if got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
