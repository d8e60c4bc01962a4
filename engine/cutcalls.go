package engine

import "bytes"

// A tool call whose arguments were cut off never runs (issue 15, S5). The
// original parses streamed arguments leniently and runs the repaired call,
// so a reply cut by the output limit inside `rm -rf victim/` removes a
// parent directory. Here the decision is made once, when the streamed
// message ends (finishAssistant): it sees the final arguments of every call
// and the stop reason. invoke then answers a cut call with an error result
// instead of running it; the call keeps its tool_execution_start and _end
// and its result message, so the model sees why and can call again.

// cutReason says why a tool call was cut off; cutNone for a call that may
// run.
type cutReason uint8

const (
	cutNone cutReason = iota
	// cutArgs: the arguments streamed were not a complete JSON object (and
	// the backend gave no final object): what the block holds is repaired.
	cutArgs
	// cutLength: the message ended by the output token limit, so any of
	// its calls may be incomplete, even one whose JSON happens to close.
	cutLength
)

// The result texts of a cut call (docs/rpc.md "The agent loop").
const (
	CutArgsMessage   = "Tool call not run: its arguments were cut off (they are not a complete JSON object), so nothing was executed. Call the tool again with complete arguments."
	CutLengthMessage = `Tool call not run: the response hit the output token limit (stopReason "length") before its arguments were known to be complete, so nothing was executed. Call the tool again with complete arguments; split a large input over several calls.`
)

// markCutCalls sets the cut reason of every tool call of a finished
// message: all of them when it ended by length. A call marked cutArgs when
// its block ended keeps that mark otherwise. (actor)
func markCutCalls(msg *AssistantMessage) {
	if msg.StopReason != StopLength {
		return
	}
	for i := range msg.Content {
		if msg.Content[i].Type == BlockToolCall {
			msg.Content[i].cut = cutLength
		}
	}
}

// cutResult is the error result of a call that must not run, or nil.
func cutResult(call ContentBlock) *ToolResult {
	var text string
	switch call.cut {
	case cutNone:
		return nil
	case cutLength:
		text = CutLengthMessage
	default:
		text = CutArgsMessage
	}
	res := errorResult(text)
	return &res
}

// argsCut reports whether the arguments of a tool call block that ends
// with these streamed fragments (raw) and final object (final, nil when
// the backend gives none) were cut off: neither is a complete JSON object.
// A call that streamed nothing at all has no arguments ({}), not cut ones.
func argsCut(raw, final []byte) bool {
	if compactObject(final) != nil || compactObject(raw) != nil {
		return false
	}
	return len(final) > 0 || len(bytes.TrimSpace(raw)) > 0
}
