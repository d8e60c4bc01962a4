package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// SkippedMessage is the result text of a tool call skipped because a
// steering message interrupted the round (interrupt mode "immediate").
const SkippedMessage = "Skipped due to queued user message."

// round is the actor-side state of one batch of tool calls.
type round struct {
	interrupted bool
	steer       []Message
	cancel      context.CancelFunc
	finished    map[string]bool      // call ids with an emitted result
	results     []*ToolResultMessage // in emission (completion) order
}

// executeTools runs the tool calls of one assistant message (§3.4): a
// shared call starts once the last exclusive call has finished, so
// consecutive shared calls run in parallel; an exclusive call waits for
// everything before it and runs alone. Results are returned in completion
// order, with the steering messages that interrupted the round (nil when
// none did).
func (s *Session) executeTools(ctx context.Context, r *run, calls []ContentBlock) ([]*ToolResultMessage, []Message) {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd := &round{cancel: cancel, finished: map[string]bool{}}
	closed := make(chan struct{})
	close(closed)
	lastExclusive := closed
	var shared []chan struct{}
	var all sync.WaitGroup
	// prevReported chains the tasks when results must be reported in call
	// order (Config.OrderedResults); prevOrder does the same for requests
	// to the host (sendOrder).
	prevReported := closed
	var prevOrder *sendOrder
	waitAll := func(chs []chan struct{}) {
		for _, ch := range chs {
			<-ch
		}
	}
	// The calls of a run of shared calls are launched together, once all
	// their starts are out: every start of a parallel batch precedes its
	// first end (a call that finished before the next start was emitted
	// would otherwise put its end between them).
	var launches []func()
	launch := func() {
		for _, l := range launches {
			l()
		}
		launches = nil
	}
	for _, call := range calls {
		tool := findTool(r.tools, call.Name)
		exclusive := tool != nil && tool.Concurrency() == Exclusive
		if exclusive {
			launch()
		}
		<-lastExclusive
		if exclusive {
			waitAll(shared)
			shared = nil
		}

		done := make(chan struct{})
		reported := make(chan struct{})
		wait := prevReported
		if !s.cfg.OrderedResults {
			wait = closed
		}
		prevReported = reported
		// The start is emitted here, before the call is launched, in call
		// order.
		var skip bool
		s.Call(func() {
			if skip = rd.interrupted; !skip {
				s.emit(ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, Intent: call.Intent})
			}
		})
		if skip {
			launch() // the calls already announced still run
			break    // this call and the rest are reported skipped below
		}
		var order *sendOrder
		if s.cfg.OrderedResults {
			// Deterministic mode: requests to the host go out in call order
			// too (see sendOrder).
			order = newSendOrder(prevOrder)
			prevOrder = order
		}
		all.Add(1)
		s.wg.Add(1)
		start := func() {
			go func() {
				defer s.wg.Done()
				defer order.done()
				defer all.Done()
				defer close(done)
				s.runTool(rctx, r, rd, call, tool, order, wait, reported)
			}()
		}
		if exclusive {
			start()
			lastExclusive = done
		} else {
			launches = append(launches, start)
			shared = append(shared, done)
		}
	}
	launch()
	all.Wait()
	// Calls that never got a result (not started after an interrupt) are
	// reported skipped, with a synthetic start.
	var results []*ToolResultMessage
	var steer []Message
	s.Call(func() {
		for _, call := range calls {
			if rd.finished[call.ID] {
				continue
			}
			s.emit(ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, Intent: call.Intent})
			s.finishTool(r, rd, call, skippedResult())
		}
		results = rd.results
		if rd.interrupted {
			steer = rd.steer
		}
	})
	return results, steer
}

func skippedResult() ToolResult {
	return ToolResult{Content: []ContentBlock{TextBlock(SkippedMessage)}, Details: []byte("{}"), IsError: true}
}

// findTool resolves a call against the tool set its request offered.
func findTool(tools []Tool, name string) Tool {
	for _, t := range tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// runTool executes one call whose start has been emitted and reports it.
// It reports (emits the end and the result message) after before is
// closed, then closes reported.
func (s *Session) runTool(ctx context.Context, r *run, rd *round, call ContentBlock, tool Tool, order *sendOrder, before <-chan struct{}, reported chan<- struct{}) {
	defer close(reported)
	var span Span
	if r.span != nil {
		span = s.cfg.Tracer.StartTool(r.span, ToolTrace{ID: call.ID, Name: call.Name, Arguments: call.Arguments})
		ctx = withSpan(ctx, span) // a child process or an MCP request joins it
	}
	res := s.invoke(ctx, call, tool, order)
	if span != nil {
		span.End(SpanEnd{Result: &res})
	}
	<-before
	s.Call(func() {
		if rd.interrupted {
			// A steering message arrived while this call ran: its result is
			// replaced, as the original does.
			res = skippedResult()
		}
		s.finishTool(r, rd, call, res)
		if !rd.interrupted && s.interruptMode == ModeImmediate && len(s.steering) > 0 {
			rd.interrupted = true
			rd.steer = s.dequeue(&s.steering, s.steeringMode)
			rd.cancel()
		}
	})
}

// invoke validates the arguments and runs the tool; a call whose
// arguments were cut off is refused first (cutcalls.go).
func (s *Session) invoke(ctx context.Context, call ContentBlock, tool Tool, order *sendOrder) ToolResult {
	if res := CheckToolCall(call, tool, s.cfg.Validator); res != nil { // decide.go
		return *res
	}
	args := call.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	if ctx.Err() != nil {
		return errorResult("Operation aborted")
	}
	args, blocked := RunToolCallHook(ctx, s.cfg.Hooks, call.ID, call.Name, args)
	if blocked != nil {
		return *blocked
	}
	out := s.execTool(ctx, call, tool, args, order)
	return RunToolResultHook(ctx, s.cfg.Hooks, call.ID, call.Name, args, out)
}

// RunToolCallHook runs the ToolCall hook of h (nil: none) on a validated
// call's arguments, as a session does before the call runs: the hook may
// block the call (the result to report) or rewrite its arguments (they
// are not validated again, as in the original). A durable worker's tool
// call takes it too.
func RunToolCallHook(ctx context.Context, h Hooks, id, name string, args []byte) ([]byte, *ToolResult) {
	if h == nil || !h.Has(HookToolCall) {
		return args, nil
	}
	d := h.ToolCall(ctx, ToolCallHook{ID: id, Name: name, Input: args})
	if d.Block {
		if d.Reason == "" {
			d.Reason = BlockedMessage
		}
		res := errorResult(d.Reason)
		return args, &res
	}
	if d.Input != nil {
		args = d.Input
	}
	return args, nil
}

// RunToolResultHook runs the ToolResult hook of h (nil: none) on a call's
// result, as a session does before the model sees it (args: the arguments
// the call ran with).
func RunToolResultHook(ctx context.Context, h Hooks, id, name string, args []byte, res ToolResult) ToolResult {
	if h == nil || !h.Has(HookToolResult) {
		return res
	}
	return h.ToolResult(ctx, ToolCallHook{ID: id, Name: name, Input: args}, res)
}

// execTool runs a call past its checks: the gate, then the tool.
func (s *Session) execTool(ctx context.Context, call ContentBlock, tool Tool, args []byte, order *sendOrder) ToolResult {
	tc := ToolCall{ID: call.ID, Name: call.Name, Arguments: args, UI: callUI{s, order, call.ID}, order: order, Todos: s.todosNow}
	if s.cfg.Gate != nil {
		if res := s.cfg.Gate(ctx, tc); res != nil {
			return *res
		}
	}
	// Updates never wait for the executor: a host tool's arrive on the
	// reader goroutine, which must keep reading. They queue behind what is
	// already queued, so each comes before the call's end.
	update := func(partial ToolResult) {
		s.exec.later(func() {
			s.emit(ToolExecutionUpdate{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, PartialResult: resultJSON(partial)})
		})
	}
	out, err := tool.Run(ctx, tc, update)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult("Operation aborted")
		}
		return errorResult(err.Error())
	}
	return out
}

// validationText is the original's validation failure text.
func validationText(name string, issues []string, args []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:\n", name)
	for _, is := range issues {
		b.WriteString("  - ")
		b.WriteString(is)
		b.WriteByte('\n')
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, args, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(args)
	}
	b.WriteString("\nReceived arguments:\n")
	b.Write(pretty.Bytes())
	return b.String()
}

// finishTool emits a call's end and result message and records it. (actor)
func (s *Session) finishTool(r *run, rd *round, call ContentBlock, res ToolResult) *ToolResultMessage {
	rd.finished[call.ID] = true
	s.noteTodoWrite(call.Name, res)
	s.emit(ToolExecutionEnd{ToolCallID: call.ID, ToolName: call.Name, Result: resultJSON(res), IsError: res.IsError, IsWarning: res.IsWarning})
	tr := NewToolResultMessage(call.ID, call.Name, res, s.now())
	s.emitMessage(r, tr)
	rd.results = append(rd.results, tr)
	return tr
}

func errorResult(text string) ToolResult {
	return ToolResult{Content: []ContentBlock{TextBlock(text)}, Details: []byte("{}"), IsError: true}
}
