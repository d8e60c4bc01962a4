package engine

import (
	"context"
	"fmt"
)

// executeTools runs the tool calls of one assistant message and returns
// their results in completion order, plus steering messages that
// interrupted the round (nil when none).
func (s *Session) executeTools(ctx context.Context, r *run, calls []ContentBlock) ([]*ToolResultMessage, []Message) {
	results := make([]*ToolResultMessage, 0, len(calls))
	for _, call := range calls {
		tr := s.runTool(ctx, r, call)
		results = append(results, tr)
	}
	return results, nil
}

func (s *Session) findTool(name string) Tool {
	for _, t := range s.cfg.Tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// runTool executes one call with its full event sequence.
func (s *Session) runTool(ctx context.Context, r *run, call ContentBlock) *ToolResultMessage {
	s.Call(func() {
		s.emit(ToolExecutionStart{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, Intent: call.Intent})
	})
	var res ToolResult
	tool := s.findTool(call.Name)
	if tool == nil {
		res = errorResult(fmt.Sprintf("Tool %s not found", call.Name))
	} else {
		update := func(partial ToolResult) {
			s.Post(func() {
				s.emit(ToolExecutionUpdate{ToolCallID: call.ID, ToolName: call.Name, Args: call.Arguments, PartialResult: resultJSON(partial)})
			})
		}
		out, err := tool.Run(ctx, ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments}, update)
		if err != nil {
			res = errorResult(err.Error())
		} else {
			res = out
		}
	}
	var tr *ToolResultMessage
	s.Call(func() {
		s.emit(ToolExecutionEnd{ToolCallID: call.ID, ToolName: call.Name, Result: resultJSON(res), IsError: res.IsError, IsWarning: res.IsWarning})
		tr = &ToolResultMessage{
			ToolCallID: call.ID, ToolName: call.Name, Content: res.Content,
			Details: orEmptyObject(res.Details), IsError: res.IsError, Timestamp: s.now(),
		}
		if res.IsWarning {
			w := true
			tr.IsWarning = &w
		}
		s.emitMessage(r, tr)
	})
	return tr
}

func errorResult(text string) ToolResult {
	return ToolResult{Content: []ContentBlock{TextBlock(text)}, Details: []byte("{}"), IsError: true}
}
