package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/rpc/schema/internal/docgen"
)

// Every protocol generates, is valid JSON Schema (it compiles) and prints
// the same bytes twice.
func TestProtocolsGenerate(t *testing.T) {
	for _, p := range Protocols {
		a, err := JSON(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b, _ := JSON(p)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ", p)
		}
		v := newValidator(t, p)
		if err := v.v.Check(v.doc(firstDef(v.top))); err != nil {
			t.Errorf("%s: does not compile: %v", p, err)
		}
		var top map[string]any
		if err := json.Unmarshal(a, &top); err != nil {
			t.Fatal(err)
		}
		if top["version"] != Version || top["$id"] == "" || top["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: version, $id or $schema missing: %v %v %v", p, top["version"], top["$id"], top["$schema"])
		}
	}
	if _, err := Generate("nope"); err == nil {
		t.Error("an unknown protocol generated")
	}
}

func firstDef(s *Schema) string { return (*s.Defs)[0].Name }

// The generated files are what their generators write now: a change of a
// type's doc comment or of the schema needs go generate ./rpc/schema/.
func TestGeneratedFilesFresh(t *testing.T) {
	want, err := docgen.Generate("../..", "github.com/xcsh-go/xcsh")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile("docs_gen.go"); !bytes.Equal(got, want) {
		t.Error("docs_gen.go is stale: run go generate ./rpc/schema/")
	}
	want, err = HashFile()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile("hash_gen.go"); !bytes.Equal(got, want) {
		t.Error("hash_gen.go is stale: run go generate ./rpc/schema/ (and docs/rpc.md says whether the change bumps Version)")
	}
	for p, h := range map[string]string{"rpc": SchemaHash, "acp-ext": ACPSchemaHash} {
		if got, _ := Hash(p); got != h || len(h) != 16 {
			t.Errorf("%s: hash %q, constant %q", p, got, h)
		}
	}
}

// A type that encodes itself and has no shape is refused, not guessed.
func TestReflectRefusesHandEncoded(t *testing.T) {
	b2 := newBuilder()
	delete(b2.r.shapes, reflect.TypeFor[engine.BudgetState]())
	b2.typeOf(engine.State{})
	if b2.r.err == nil || !strings.Contains(b2.r.err.Error(), "BudgetState") {
		t.Errorf("State's hand-encoded BudgetState without its shape: err %v", b2.r.err)
	}
}

// The shapes of the hand-encoded frames agree with their encoders: each
// event, its optional fields set and unset, encoded by the engine as the
// Sink does, validates (closed objects: a key a shape lacks fails).
func TestShapesMatchEncoders(t *testing.T) {
	v := newValidator(t, "rpc")
	yes := true
	user := &engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "hi"}}, Attribution: "user", Timestamp: 1}
	asst := &engine.AssistantMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "a"},
		{Type: engine.BlockToolCall, ID: "c1", Name: "read", Arguments: []byte(`{"path":"x"}`)}}, API: "fake", Provider: "fake", Model: "m",
		StopReason: engine.StopToolUse, Timestamp: 1}
	res := &engine.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "r"}},
		IsWarning: &yes, Timestamp: 1}
	// The snapshots (partial, message) are the assistant message's own
	// codec: every golden's message_update frames check them.
	var partial *engine.Partial
	call := asst.Content[1]
	events := []engine.Event{
		engine.AgentStart{},
		engine.AgentEnd{Messages: []engine.Message{user, asst, res}},
		engine.AgentEnd{Messages: []engine.Message{}, Budget: &engine.BudgetError{Kind: engine.BudgetCost, Spent: 0.5, Limit: 0.4}},
		engine.TurnStart{},
		engine.TurnEnd{Message: asst, ToolResults: []*engine.ToolResultMessage{res}},
		engine.TurnEnd{Message: asst},
		engine.MessageStart{Message: user},
		engine.MessageEnd{Message: res},
		engine.MessageUpdate{Kind: engine.UpdateTextDelta, Delta: "x", Partial: partial},
		engine.MessageUpdate{Kind: engine.UpdateTextEnd, Content: "x", Partial: partial},
		engine.MessageUpdate{Kind: engine.UpdateToolCallEnd, ContentIndex: 1, ToolCall: &call, Partial: partial},
		engine.MessageUpdate{Kind: engine.UpdateTextStart, Partial: partial, Lean: true},
		engine.ToolExecutionStart{ToolCallID: "c1", ToolName: "read", Args: []byte(`{"a":1}`), Intent: "look"},
		engine.ToolExecutionStart{ToolCallID: "c1", ToolName: "read"},
		engine.ToolExecutionUpdate{ToolCallID: "c1", ToolName: "read", PartialResult: []byte(`{"content":[]}`)},
		engine.ToolExecutionEnd{ToolCallID: "c1", ToolName: "read", Result: []byte(`{"content":[]}`), IsError: true},
		engine.ToolExecutionEnd{ToolCallID: "c1", ToolName: "read", NoWarning: true},
		engine.QueueUpdate{Steering: []string{"a"}},
		engine.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded"},
		engine.AutoRetryEnd{Success: false, Attempt: 3, FinalError: "overloaded"},
		engine.AutoRetryEnd{Success: true, Attempt: 1},
		engine.AutoCompactionStart{Reason: "threshold", Action: "context-full"},
		engine.AutoCompactionEnd{Action: "context-full", Result: &engine.CompactionResult{Summary: "s", ShortSummary: "ss", FirstKeptEntryID: "e",
			TokensBefore: 9, Details: []byte(`{"readFiles":[]}`), PreserveData: []byte(`{}`)}},
		engine.AutoCompactionEnd{Action: "context-full", Aborted: true, ErrorMessage: "x", Skipped: true},
		engine.OutputSchemaRetry{Attempt: 1, MaxAttempts: 2, Errors: []string{"/a: bad"}},
		engine.OutputSchemaEnd{Success: true, Output: []byte(`{"a":1}`)},
		engine.OutputSchemaEnd{Retries: 2, Errors: []string{"x"}},
		engine.TodoReminder{Todos: []engine.TodoItem{{ID: "t", Content: "c", Status: "pending", Notes: "n"}}, Attempt: 1, MaxAttempts: 3},
		engine.TodoAutoClear{},
		engine.TTSRTriggered{Rules: []*engine.Rule{{Name: "r", Path: "/p", Content: "c", Globs: []string{"*"}, AlwaysApply: true,
			Description: "d", Condition: []string{"x"}, Scope: []string{"text"}, InterruptMode: "always"}, {Name: "r2", Condition: []string{"y"}}}},
		engine.ExtensionError{ExtensionPath: "/e", Event: "input", Error: "boom"},
		engine.HostToolCall{ID: "host_1", ToolCallID: "c1", ToolName: "t", Arguments: []byte(`{}`)},
		engine.HostToolCancel{ID: "host_cancel_1", TargetID: "host_1"},
		engine.Notify{ID: "ui_1", Message: "m", NotifyType: "warning"},
		engine.Notify{ID: "ui_1", Message: "m"},
		engine.DialogOpen{ID: "ui_1", Request: engine.DialogRequest{Method: engine.DialogSelect, Title: "t", Options: []string{"a"}, Timeout: 1e9}},
		engine.DialogOpen{ID: "ui_1", Request: engine.DialogRequest{Method: engine.DialogConfirm, Title: "t", Message: "m"}},
		engine.DialogOpen{ID: "ui_1", Request: engine.DialogRequest{Method: engine.DialogInput, Title: "t", Placeholder: "p"}},
		engine.DialogOpen{ID: "ui_1", Request: engine.DialogRequest{Method: engine.DialogEditor, Title: "t", Prefill: "p", Timeout: 1e9}},
		engine.DialogCancel{ID: "ui_2", Target: "ui_1"},
		engine.SetTitle{ID: "ui_3", Title: "t"},
		engine.UIStatus{ID: "ui_4", Key: "k", Text: "t"},
		engine.UIStatus{ID: "ui_4", Key: "k"},
		engine.UIWidget{ID: "ui_5", Key: "k", Lines: []string{"l"}, Placement: "belowEditor"},
		engine.UIWidget{ID: "ui_5", Key: "k"},
		engine.UIEditorText{ID: "ui_6", Text: "t"},
	}
	for _, ev := range events {
		var buf []byte
		if u, ok := ev.(engine.MessageUpdate); ok {
			buf = u.AppendJSON(nil)
		} else {
			buf = ev.AppendJSON(nil)
		}
		if probs := v.check("AgentEvent", buf, pickOutput); probs != nil {
			t.Errorf("%T %s:\n\t%s", ev, short(buf), strings.Join(probs, "\n\t"))
		}
	}
}

// Every event type the engine can emit, and every frame type rpc/serve
// writes by hand, has a schema: the wire strings are read from the
// sources (each EventType method; each `{"type":"…"` the server writes).
func TestEveryFrameTypeHasSchema(t *testing.T) {
	have := map[string]bool{"ready": true, "response": true}
	for _, f := range append(events, uiRequests...) {
		have[f.Event.EventType()] = true
	}
	for _, f := range serverFrames {
		have[f.Type] = true
	}
	scan := func(glob string, re *regexp.Regexp) {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, _ := os.ReadFile(f)
			for _, m := range re.FindAllSubmatch(src, -1) {
				if !have[string(m[1])] {
					t.Errorf("%s writes frame type %q, which the schema does not describe", f, m[1])
				}
			}
		}
	}
	scan("../../engine/*.go", regexp.MustCompile(`EventType\(\) string\s*\{\s*return "([a-z_]+)"`))
	scan("../serve/*.go", regexp.MustCompile("`\\{\"type\":\"([a-z_]+)\""))
	scan("../*.go", regexp.MustCompile("`\\{\"type\":\"([a-z_]+)\""))
}

// The Python types load in Python 3 (the clients' runtime; every machine
// has it).
func TestPythonTypesLoad(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	for _, p := range Protocols {
		src, err := Types(p, "python")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "protocol.py"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		check := "import typing, protocol as p\n" +
			"assert p.PROTOCOL_VERSION and len(p.SCHEMA_HASH) == 16\n" +
			"for n in dir(p):\n  o = getattr(p, n)\n  if isinstance(o, type) and issubclass(o, dict): typing.get_type_hints(o)\n"
		if p == "rpc" {
			check += "for n in ('RpcCommand','RpcResponse','AgentEvent','ExtensionUiRequest','ExtensionUiResponse','PromptCommand','GetStateResponse','AgentStartEvent'): getattr(p, n)\n" +
				"assert len(typing.get_args(p.RpcCommand)) > 40\n"
		}
		cmd := exec.Command(py, "-c", check)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", p, err, out)
		}
	}
}

// The typed clients' generated protocol files (rpc/client/ts,
// rpc/client/python) are what `xcsh schema` prints now; skipped while a
// client is not in the tree.
func TestClientProtocolFilesFresh(t *testing.T) {
	for _, c := range []struct{ path, format string }{
		{"../client/ts/src/protocol.ts", "typescript"},
		{"../client/python/xcsh_rpc/protocol.py", "python"},
	} {
		got, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got[:min(len(got), 200)], []byte("Code generated by xcsh schema")) {
			t.Errorf("%s is not the generated file; write it with: go run ./cmd/xcsh schema --format %s > rpc/%s",
				c.path, c.format, strings.TrimPrefix(c.path, "../"))
			continue
		}
		want, err := Types("rpc", c.format)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: go run ./cmd/xcsh schema --format %s > rpc/%s (or make schema)", c.path, c.format, strings.TrimPrefix(c.path, "../"))
		}
	}
}
