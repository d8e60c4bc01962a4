package durable

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/xcsh-go/xcsh/engine"
)

// Host tools on a durable session (docs/rpc.md, host tools): the host
// registers them through the front (UpdateSetHostTools, checked by the
// engine's rule); a call is a host_tool_call event in the log, and the
// workflow waits durably, on workflow state, for the host's reply, which
// any front forwards as an update (UpdateHostResult, UpdateHostPartial).
// No activity runs it: the workflow survives its worker while the host
// works, and a front that attaches later sees the call in the log.

// hostCall is a host tool call waiting for the host's reply.
type hostCall struct {
	id     string
	call   engine.ContentBlock
	done   bool
	result ToolOutput
}

// registerHostTools installs the host tools' updates.
func (s *session) registerHostTools(ctx workflow.Context) error {
	if err := workflow.SetUpdateHandler(ctx, UpdateSetHostTools, func(ctx workflow.Context, tools []HostTool) ([]string, error) {
		// The worker's tools are known once the set-up has run.
		if err := workflow.Await(ctx, func() bool { return s.ready }); err != nil {
			return nil, err
		}
		var others []string
		for _, t := range s.setup.Tools {
			others = append(others, t.Name)
		}
		// The schemas were checked by the front's Validator; the names
		// are checked here, against the worker's tools.
		clean, err := engine.CheckHostTools(hostToolDefs(tools), nil, others)
		if err != nil {
			return nil, err
		}
		s.hostTools = hostTools(clean)
		names := make([]string, 0, len(clean))
		for _, d := range clean {
			names = append(names, d.Name)
		}
		return names, nil
	}); err != nil {
		return err
	}
	// A reply to no waiting call (late, after an abort; unknown) is
	// ignored, as in process.
	if err := workflow.SetUpdateHandler(ctx, UpdateHostResult, func(ctx workflow.Context, r HostReply) error {
		if c := s.hostCall(r.ID); c != nil {
			c.done, c.result = true, r.Result
		}
		return nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandler(ctx, UpdateHostPartial, func(ctx workflow.Context, r HostReply) error {
		if c := s.hostCall(r.ID); c != nil {
			s.emit(engine.ToolExecutionUpdate{ToolCallID: c.call.ID, ToolName: c.call.Name, Args: c.call.Arguments,
				PartialResult: engine.ToolResultJSON(r.Result.result())})
		}
		return nil
	})
}

func (s *session) hostCall(id string) *hostCall {
	for _, c := range s.hostWaiting {
		if c.id == id && !c.done {
			return c
		}
	}
	return nil
}

// hostTool is the offered host tool named name.
func (s *session) hostTool(name string) (HostTool, bool) {
	for _, t := range s.hostTools {
		if t.Name == name && !t.Hidden {
			return t, true
		}
	}
	return HostTool{}, false
}

// offeredHostTools are the host tools the model is offered.
func (s *session) offeredHostTools() []HostTool {
	var out []HostTool
	for _, t := range s.hostTools {
		if !t.Hidden {
			out = append(out, t)
		}
	}
	return out
}

// runHostTool asks the host to run a call and waits for its reply; an
// abort withdraws the request (host_tool_cancel) with the in-process
// texts.
func (s *session) runHostTool(ctx workflow.Context, call engine.ContentBlock, t HostTool) engine.ToolResult {
	aborted := errorResult(fmt.Sprintf("Host tool %q was aborted", t.Name))
	if ctx.Err() != nil {
		return aborted
	}
	// The arguments are checked against the schema first, by the worker's
	// Validator (an activity: the workflow holds no configuration).
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 5}})
	var refused *ToolOutput
	if err := workflow.ExecuteActivity(actx, ActivityCheck, CheckInput{Call: ToolInput{ID: call.ID, Name: call.Name, Arguments: call.Arguments}, Tool: t}).Get(ctx, &refused); err != nil {
		if ctx.Err() != nil {
			return aborted
		}
		return errorResult(rootMessage(err))
	}
	if refused != nil {
		return refused.result()
	}
	s.in.HostCalls++
	c := &hostCall{id: fmt.Sprintf("host_%d", s.in.HostCalls), call: call}
	s.hostWaiting = append(s.hostWaiting, c)
	defer func() {
		for i, w := range s.hostWaiting {
			if w == c {
				s.hostWaiting = append(s.hostWaiting[:i:i], s.hostWaiting[i+1:]...)
				break
			}
		}
	}()
	args := call.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	s.emit(engine.HostToolCall{ID: c.id, ToolCallID: call.ID, ToolName: call.Name, Arguments: args})
	if err := workflow.Await(ctx, func() bool { return c.done }); err != nil {
		s.in.HostCancels++
		s.emit(engine.HostToolCancel{ID: fmt.Sprintf("host_cancel_%d", s.in.HostCancels), TargetID: c.id})
		return aborted
	}
	return c.result.result()
}
