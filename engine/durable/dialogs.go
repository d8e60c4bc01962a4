package durable

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Dialogs on a durable session (docs/durable.md, "Dialogs"): the confirm
// gate's and the ask tool's questions to the host's user.
//
// The wait is the workflow's, never an activity's. A tool call's activity
// runs the gate and the tool with a UI (replayUI) that answers the
// questions answered so far (ToolInput.Answers) and records the first new
// one instead of asking it (ToolOutput.Ask); the call stops there, having
// done nothing. The workflow puts that question to the host as the
// in-process session does (extension_ui_request), waits on its own state
// for the host's extension_ui_response (an update any front forwards), the
// request's timeout on workflow time, or an abort, and runs the step again
// with one answer more. No activity runs while the user thinks: the worker
// and the front may both die meanwhile, and the step that runs after the
// answer runs the tool once.
//
// This is exact only where nothing happens before a question: the gate
// (it decides before the tool runs) and the tools that say so
// (QuestionsFirst: ask). A tool that may ask after it has taken effect (an
// extension's or an MCP server's tool) would repeat that effect on the run
// after the answer; its questions are answered with ErrNoDialogs.

// QuestionsFirst is a tool whose questions to the user (ToolCall.UI) all
// come before it takes any effect, so a durable session may stop the call
// at a question and run it again once the user answered (the ask tool).
type QuestionsFirst interface {
	QuestionsFirst() bool
}

func asksFirst(t engine.Tool) bool {
	q, ok := t.(QuestionsFirst)
	return ok && q.QuestionsFirst()
}

// DialogAnswer is how a question of a tool call was resolved: the user's
// reply (answered, dismissed, timed out), or Aborted (the run was aborted
// while it waited: the call is given the in-process abort).
type DialogAnswer struct {
	Reply   engine.DialogReply
	Aborted bool `json:",omitempty"`
}

// DialogResponse is the host's extension_ui_response (UpdateDialog), read
// by the RPC server's rule (rpc.DialogReply).
type DialogResponse struct {
	ID    string
	Reply engine.DialogReply
}

// errAsking ends a call at a question that has no answer yet: the
// workflow asks it and runs the call again.
var errAsking = errors.New("durable: the question waits for the user")

// errAbortedDialog is the cause of the call's cancellation when the run
// was aborted while its question waited.
var errAbortedDialog = errors.New("durable: aborted while a dialog waited")

// replayUI is a tool call's UI on a worker: it answers with the answers
// the workflow recorded, in order, and records the first question beyond
// them.
type replayUI struct {
	// mu guards n, mayStop and asked: a tool may ask from a goroutine of
	// its own.
	mu      sync.Mutex
	answers []DialogAnswer
	n       int // questions asked so far
	// mayStop: the question may stop the call (the gate, a QuestionsFirst
	// tool); otherwise it is answered with ErrNoDialogs.
	mayStop bool
	callID  string
	cancel  context.CancelCauseFunc // cancels the call's context
	asked   *engine.DialogRequest   // the new question, if one was asked
}

// Dialog implements engine.UI.
func (u *replayUI) Dialog(ctx context.Context, req engine.DialogRequest) (engine.DialogReply, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.asked != nil {
		return engine.DialogReply{Cancelled: true}, errAsking
	}
	if u.n < len(u.answers) {
		a := u.answers[u.n]
		u.n++
		if a.Aborted {
			// As in process: the call's context ends with the abort, and the
			// dialog resolves to its default with the context's error.
			u.cancel(errAbortedDialog)
			return engine.DialogReply{Cancelled: true}, context.Canceled
		}
		return a.Reply, nil
	}
	if !u.mayStop {
		return engine.DialogReply{Cancelled: true}, ErrNoDialogs
	}
	if req.ToolCallID == "" {
		req.ToolCallID = u.callID
	}
	u.asked = &req
	// Nothing after the question may take effect: the call ends here.
	u.cancel(errAsking)
	return engine.DialogReply{Cancelled: true}, errAsking
}

// question is the new question the call stopped at (nil: none).
func (u *replayUI) question() *engine.DialogRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.asked
}

// execTool runs a checked call as the in-process session does
// (engine/tools_exec.go execTool): the gate, then the tool, both with a
// replayUI. When they asked a new question, the output is the question
// (Ask) and nothing else counts. cancelled reports that the call's
// context ended by the activity's own cancellation (an abort while the
// tool ran), which RunTool reports as before.
func (a *Activities) execTool(ctx context.Context, tool engine.Tool, in ToolInput, args []byte) (out ToolOutput, cancelled bool, err error) {
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ui := &replayUI{answers: in.Answers, callID: in.ID, cancel: cancel, mayStop: true}
	tc := engine.ToolCall{ID: in.ID, Name: in.Name, Arguments: args, UI: ui}
	withTodos(&tc, in) // todo.go: todo_write's ops change the workflow's list
	if a.Gate != nil {
		if res := a.Gate(tctx, tc); res != nil {
			if q := ui.question(); q != nil {
				return ToolOutput{Ask: q}, false, nil
			}
			return toolOutput(*res), false, nil
		}
	}
	if q := ui.question(); q != nil {
		return ToolOutput{Ask: q}, false, nil
	}
	ui.mu.Lock()
	ui.mayStop = asksFirst(tool)
	ui.mu.Unlock()
	res, rerr := tool.Run(tctx, tc, func(engine.ToolResult) {})
	if q := ui.question(); q != nil {
		return ToolOutput{Ask: q}, false, nil // stopped before it did anything
	}
	if a.AfterTool != nil {
		a.AfterTool(in.Name)
	}
	switch {
	case ctx.Err() != nil:
		// The activity was cancelled (an abort while the tool ran): the
		// tool's own answer travels with the cancellation (RunTool).
		return toolOutput(res), true, rerr
	case rerr != nil && tctx.Err() != nil:
		// Aborted while its question waited: the in-process text.
		return toolOutput(errorResult("Operation aborted")), false, nil
	case rerr != nil:
		return toolOutput(errorResult(rerr.Error())), false, nil
	}
	return toolOutput(res), false, nil
}

// dialogWait is a question the workflow waits on.
type dialogWait struct {
	id    string
	done  bool
	reply engine.DialogReply
}

// registerDialogs installs the update that takes the host's answers. An
// answer to no waiting dialog (unknown, late, already answered) is
// ignored, as in process.
func (s *session) registerDialogs(ctx workflow.Context) error {
	return workflow.SetUpdateHandler(ctx, UpdateDialog, func(ctx workflow.Context, r DialogResponse) error {
		for _, d := range s.dialogs {
			if d.id == r.ID && !d.done {
				d.done, d.reply = true, r.Reply
			}
		}
		return nil
	})
}

// uiID is the next id of an extension UI request (ui_N, numbered across
// runs as the in-process session's sequential ids are).
func (s *session) uiID() string {
	s.in.UIRequests++
	return fmt.Sprintf("ui_%d", s.in.UIRequests)
}

// askUser puts a call's question to the host and waits durably for the
// answer, its timeout (workflow time) or an abort. A timeout or an abort
// withdraws the dialog with the in-process cancel frame.
func (s *session) askUser(ctx workflow.Context, req engine.DialogRequest) DialogAnswer {
	d := &dialogWait{id: s.uiID()}
	s.dialogs = append(s.dialogs, d)
	defer func() {
		for i, w := range s.dialogs {
			if w == d {
				s.dialogs = append(s.dialogs[:i:i], s.dialogs[i+1:]...)
				break
			}
		}
	}()
	s.emit(engine.DialogOpen{ID: d.id, Request: req})
	answered := func() bool { return d.done }
	var err error
	timedOut := false
	if req.Timeout > 0 && req.Method != engine.DialogEditor {
		var ok bool
		ok, err = workflow.AwaitWithTimeout(ctx, req.Timeout, answered)
		timedOut = err == nil && !ok
	} else {
		err = workflow.Await(ctx, answered)
	}
	if err != nil || timedOut {
		s.emit(engine.DialogCancel{ID: s.uiID(), Target: d.id})
		if timedOut {
			return DialogAnswer{Reply: engine.DialogReply{Cancelled: true, TimedOut: true}}
		}
		return DialogAnswer{Reply: engine.DialogReply{Cancelled: true}, Aborted: true}
	}
	return DialogAnswer{Reply: d.reply}
}

// toolSteps runs a tool call's activity, and again after each question
// it stops at, with the answers so far. The first step's activity id is
// the call's id (as before dialogs; recorded histories replay), each
// later one the call's id and its number ("call/2"). After an abort the
// last step runs on a disconnected context: it only hands the gate or the
// tool the abort, as in process (nothing runs past the question).
func (s *session) toolSteps(ctx workflow.Context, opts workflow.ActivityOptions, in ToolInput) (ToolOutput, error) {
	for n := 2; ; n++ {
		var out ToolOutput
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityTool, in).Get(ctx, &out)
		if err != nil || out.Ask == nil {
			return out, err
		}
		a := s.askUser(ctx, *out.Ask)
		in.Answers = append(in.Answers, a)
		opts.ActivityID = fmt.Sprintf("%s/%d", in.ID, n)
		if a.Aborted {
			ctx, _ = workflow.NewDisconnectedContext(ctx)
		}
	}
}

// dialogReply forwards the host's extension_ui_response as an update. It
// is never answered (as in process); a frame with no string id is
// ignored, as the RPC server ignores it, and so is an answer to no
// waiting dialog (by the workflow).
func (f *front) dialogReply(ctx context.Context, line []byte) {
	if f.o.DialogReply == nil {
		return
	}
	id, reply, ok := f.o.DialogReply(line)
	if !ok {
		return
	}
	if err := f.update(ctx, UpdateDialog, client.WorkflowUpdateStageCompleted, DialogResponse{ID: id, Reply: reply}); err != nil {
		f.write(errorFrame(err))
	}
}
