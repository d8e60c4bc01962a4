package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Compaction by hand (the compact command) and set_auto_compaction on a
// durable session, as RPC has them (docs/rpc.md): compact aborts a
// running prompt first, then summarises the context with the worker's
// model (reason "manual", the host's customInstructions), with no
// auto_compaction events, and answers the CompactionResult or RPC's
// refusal (Already compacted, Nothing to compact (session too small),
// Compaction cancelled, the model's failure). A compaction by hand is
// what shortens a long session: like the automatic one, the session then
// continues as new carrying the summary and the kept messages, so the
// history starts again small.

// CompactArgs is the compact update's argument.
type CompactArgs struct {
	CustomInstructions string `json:",omitempty"`
}

// registerCompaction installs the compaction's updates.
func (s *session) registerCompaction(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandler(ctx, UpdateCompact, s.compactByHand); err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, UpdateAutoCompaction, func(ctx workflow.Context, on bool) error {
		s.cmp.auto = &on
		return nil
	})
}

// compactByHand is the compact update: the session busy (isCompacting,
// not isStreaming) until it answers; an abort cancels it. A success
// continues as new once the answer is out (the main loop sees pending).
func (s *session) compactByHand(ctx workflow.Context, in CompactArgs) ([]byte, error) {
	s.prompts = nil
	if s.abort != nil {
		s.aborted = true
		s.abort()
	}
	if err := workflow.Await(ctx, func() bool { return s.ready && !s.busy }); err != nil {
		return nil, err
	}
	cctx, cancel := workflow.WithCancel(ctx)
	s.busy, s.abort, s.aborted = true, cancel, false
	s.cmp.running, s.cmp.manual = true, true
	defer func() {
		s.busy, s.abort = false, nil
		s.cmp.running, s.cmp.manual = false, false
		cancel()
	}()
	out, err := s.summarise(cctx, CompactInput{Reason: ReasonManual, CustomInstructions: in.CustomInstructions})
	switch {
	case err != nil && (cctx.Err() != nil || temporal.IsCanceledError(err)):
		return nil, errors.New(engine.ErrCompactionCancelled.Error())
	case err != nil:
		return nil, errors.New(rootMessage(err))
	case out.Error != "":
		return nil, errors.New(out.Error)
	case !s.compacted(append(append([]byte(`{"result":`), out.Result...), '}'), out.Messages):
		return nil, errors.New("durable: the compaction returned no context")
	}
	return out.Result, nil
}

// manualOutcome is a compaction by hand as the activity records it: the
// result the command answers, or its refusal in RPC's words (the
// engine's sentinels are: rpc.wireError passes them through).
func manualOutcome(res *engine.CompactionResult, out []engine.Message, err error) CompactOutput {
	if err != nil {
		return CompactOutput{Error: err.Error()}
	}
	return CompactOutput{Result: res.AppendJSON(nil), Messages: encodeMessages(out)}
}

// compact forwards the compact command as an update and answers once the
// summary is in place. Meanwhile the commands behind it wait, except
// abort, get_state and the replies to host tool calls, as RPC holds its
// input behind compact (hold).
func (f *front) compact(ctx context.Context, c command, line []byte) {
	var a struct {
		CustomInstructions json.RawMessage `json:"customInstructions"`
	}
	_ = json.Unmarshal(line, &a)
	var custom string
	if a.CustomInstructions != nil && string(a.CustomInstructions) != "null" && json.Unmarshal(a.CustomInstructions, &custom) != nil {
		f.respond(c, nil, errMustBe(c.Type, "customInstructions", "a string"))
		return
	}
	// Accepted before the next command is read: an abort sent after
	// compact reaches the workflow after it, as RPC keeps the order.
	h, err := f.o.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: f.id, UpdateName: UpdateCompact,
		Args: []any{CompactArgs{CustomInstructions: custom}}, WaitForStage: client.WorkflowUpdateStageAccepted})
	if err != nil {
		f.respond(c, nil, updateError(err))
		return
	}
	done := make(chan struct{})
	f.held = done
	go func() {
		defer close(done)
		var data []byte
		err := h.Get(ctx, &data)
		if ctx.Err() == nil {
			f.catchUp(ctx) // the aborted run's closing events come first
		}
		f.respond(c, data, updateError(err))
	}()
}

// setAutoCompaction forwards set_auto_compaction; enabled must be a
// boolean, as RPC says.
func (f *front) setAutoCompaction(ctx context.Context, c command, line []byte) {
	var a struct {
		Enabled json.RawMessage `json:"enabled"`
	}
	_ = json.Unmarshal(line, &a)
	var on bool
	if a.Enabled == nil || string(a.Enabled) == "null" || json.Unmarshal(a.Enabled, &on) != nil {
		f.respond(c, nil, errMustBe(c.Type, "enabled", "a boolean"))
		return
	}
	f.respond(c, nil, f.update(ctx, UpdateAutoCompaction, client.WorkflowUpdateStageCompleted, on))
}

// errMustBe is RPC's refusal of a command's argument (rpc/errors.go).
func errMustBe(typ, field, kind string) error {
	return fmt.Errorf("Invalid %s command: %q must be %s", typ, field, kind)
}

// hold makes a command wait for the answer of a compact command in
// progress; abort, get_state and the replies to host tool calls and to
// dialogs pass, as in RPC (rpc/server.go, holds and passes). Reader
// goroutine only.
func (f *front) hold(typ string) {
	switch typ {
	case "abort", "get_state", "host_tool_result", "host_tool_update", "extension_ui_response":
		return
	}
	f.unhold()
}

// unhold waits for the compact command in progress to answer. Reader
// goroutine only (it owns held; the compact goroutine only closes it).
func (f *front) unhold() {
	if f.held != nil {
		<-f.held
		f.held = nil
	}
}
