package main

import (
	"context"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// recordUI answers every dialog yes and keeps the requests.
type recordUI struct{ reqs []engine.DialogRequest }

func (u *recordUI) Dialog(_ context.Context, req engine.DialogRequest) (engine.DialogReply, error) {
	u.reqs = append(u.reqs, req)
	return engine.DialogReply{Confirmed: true}, nil
}

// TestConfirmScopeIsThePattern: a bash confirmation says which pattern
// asked, so an "always allow" covers that pattern only; a write outside
// the project has no narrower scope.
func TestConfirmScopeIsThePattern(t *testing.T) {
	t.Parallel()
	p := newConfirmPolicy("/w", "echo *, rm *", true, 0)
	ui := &recordUI{}
	for _, args := range []string{`{"command":"echo hi"}`, `{"command":"rm -rf x"}`, `{"command":"ls"}`} {
		if res := p.gate(context.Background(), engine.ToolCall{Name: "bash", Arguments: []byte(args), UI: ui}); res != nil {
			t.Fatalf("%s: %+v", args, res)
		}
	}
	if res := p.gate(context.Background(), engine.ToolCall{Name: "write", Arguments: []byte(`{"path":"/etc/x"}`), UI: ui}); res != nil {
		t.Fatalf("write: %+v", res)
	}
	want := []string{`commands matching "echo *"`, `commands matching "rm *"`, ""}
	if len(ui.reqs) != len(want) {
		t.Fatalf("%d dialogs", len(ui.reqs))
	}
	for i, w := range want {
		if ui.reqs[i].Scope != w {
			t.Errorf("dialog %d scope %q, want %q", i, ui.reqs[i].Scope, w)
		}
	}
}
