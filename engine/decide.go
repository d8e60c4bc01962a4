package engine

import (
	"fmt"
	"time"
)

// The loop's decisions as functions of recorded facts (a reply, its
// error, an attempt count): the in-process loop (loop.go, retry.go,
// tools_exec.go, compact_auto.go) and the durable workflow
// (engine/durable) both call them, so each rule exists once. They read no
// clock but the one they are given and touch no session state.

// Next is what the loop does after a model reply.
type Next int

const (
	// NextStop: the reply asks for nothing more; the turn is over (queued
	// steering or follow-up messages may start another).
	NextStop Next = iota
	// NextTools: run the reply's tool calls, then call the model again.
	NextTools
	// NextEnd: the reply failed or was aborted; each of its tool calls gets
	// a placeholder result (PlaceholderResult) and the run ends.
	NextEnd
)

// AfterReply decides what follows a finished model reply (§3.3).
func AfterReply(msg *AssistantMessage) Next {
	switch {
	case msg.StopReason == StopError || msg.StopReason == StopAborted:
		return NextEnd
	case len(msg.ToolCalls()) > 0:
		return NextTools
	}
	return NextStop
}

// PlaceholderResult is the result of each tool call of a reply that failed
// or was aborted, so calls and results stay paired (§3.5).
func PlaceholderResult(msg *AssistantMessage) ToolResult {
	text := "Tool execution was aborted: " + msg.ErrorMessage
	if msg.StopReason == StopError {
		text = "Tool execution failed due to an error"
		if msg.ErrorMessage != "" {
			text += ": " + msg.ErrorMessage
		} else {
			text += "."
		}
	}
	return ToolResult{Content: []ContentBlock{TextBlock(text)}, IsError: true}
}

// CutText is the error text of a tool call that must not run because its
// arguments were cut off (cutcalls.go), or "" for a call that may run. It
// is decided when the reply finishes (Reply.Finish) and does not survive
// encoding: whoever moves a reply elsewhere carries it alongside.
func CutText(call ContentBlock) string {
	if res := cutResult(call); res != nil {
		return res.Content[0].Text
	}
	return ""
}

// CheckToolCall is what a tool call must pass before its tool runs: its
// arguments complete, its tool offered (nil: not), its arguments valid
// for the tool's schema (v nil: not validated). A non-nil result is the
// call's error result, and the tool does not run.
func CheckToolCall(call ContentBlock, tool Tool, v Validator) *ToolResult {
	if res := cutResult(call); res != nil {
		return res
	}
	if tool == nil {
		res := errorResult(fmt.Sprintf("Tool %s not found", call.Name))
		return &res
	}
	if v != nil {
		args := call.Arguments
		if len(args) == 0 {
			args = []byte("{}")
		}
		if issues := v.Validate(tool.Schema(), args); len(issues) > 0 {
			res := errorResult(validationText(call.Name, issues, args))
			return &res
		}
	}
	return nil
}

// Retryable reports whether a failed reply is worth another attempt
// (§7.1): a typed provider error says so by its kind, any other failure
// by its text.
func Retryable(msg *AssistantMessage, err error) bool { return retryable(msg, err) }

// RetryDelay is the wait before retry attempt (1-based) of a failed
// reply: the base doubled for each attempt before it, or the backend's
// own longer delay (measured on c).
func RetryDelay(c Clock, base time.Duration, attempt int, msg *AssistantMessage, err error) time.Duration {
	delay := base << (attempt - 1)
	if ra := retryAfter(c, msg, err); ra > delay {
		delay = ra
	}
	return delay
}

// CompactionDue says whether a good reply shows the context over the
// threshold of settings for a window of the given size, tokens already
// saved by pruning discounted: "overflow" when the prompt was larger than
// the window (the server cut it silently), "threshold" when it is past the
// threshold, "" otherwise.
func CompactionDue(msg *AssistantMessage, window int, settings CompactionSettings, saved int64) string {
	if silentOverflow(msg, window) {
		return "overflow"
	}
	_, _, threshold := settings.Budgets(window)
	if threshold > 0 && contextTokens(msg.Usage)-saved > threshold {
		return "threshold"
	}
	return ""
}
