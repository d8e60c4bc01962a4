package engine

import (
	"errors"
	"fmt"
)

// A request that no compaction can make fit. The system prompt and the
// tool schemas are sent with every request and a compaction cannot
// shrink them; when they alone fill a model's window (a local model with
// a small one, many MCP tools, long context files) every request is
// refused for its size, and the overflow compaction that follows is
// skipped with nothing to compact: the host saw only the server's "400
// the input length exceeds the context length". Instead the run fails
// with what does not fit, the sizes, the window and the fix:
//
//   - before a request is sent, when the system prompt and tool schemas
//     alone do not fit the largest window the model may have (nothing is
//     sent: a local server would load the model at that size for
//     nothing);
//   - after a request was refused for its size at that largest window,
//     when it held nothing a compaction could remove (its one message is
//     the prompt): the sizes of all three.
//
// Sizes are the engine's estimate (4 characters a token; a tokenizer
// usually counts more, so an estimate over the window is surely over).
// The error is not a context overflow: nothing retries or compacts it.

// fixedTokens estimates the part of req sent with every request: its
// system prompt and its tool schemas.
func fixedTokens(req *Request) (system, tools int64) {
	n := 0
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return int64(len(req.SystemPrompt)+3) / 4, int64(n+3) / 4
}

// refusedForSize reports whether err is a provider's refusal of a request
// for its size (typed, or in one of the known wordings).
func refusedForSize(err error) bool {
	var pe *ProviderError
	return err != nil && (errors.As(err, &pe) && pe.Kind == ErrorContextOverflow || overflowText().MatchString(err.Error()))
}

// cannotFit is the run's error for req when no compaction can make it
// fit: refused is nil before the request is sent, else the provider's
// refusal. nil when the request may fit, may still fit a grown window, or
// a compaction may help.
func cannotFit(req *Request, refused error) error {
	m := req.Model
	largest := max(m.ContextWindow, m.MaxContextWindow)
	if largest <= 0 {
		return nil
	}
	system, tools := fixedTokens(req)
	what, need := fmt.Sprintf("the system prompt (about %d tokens)", system), "needs"
	switch len(req.Tools) {
	case 0:
	case 1:
		what, need = what+fmt.Sprintf(" and the schema of 1 tool (about %d tokens)", tools), "need"
	default:
		what, need = what+fmt.Sprintf(" and the schemas of %d tools (about %d tokens)", len(req.Tools), tools), "need"
	}
	where := fmt.Sprintf("%s/%s's context window of %d tokens", m.Provider, m.ID, largest)
	if m.MaxContextWindow > 0 {
		where += " (the largest it may grow to)"
	}
	const fix = "Use a model with a larger context window (or a larger contextWindow in models.json when the model takes more), " +
		"fewer tools (--tools with only the ones needed, or --no-tools), or a shorter system prompt (context files such as AGENTS.md, " +
		"--system-prompt, --append-system-prompt)."
	var status int
	if pe := (*ProviderError)(nil); errors.As(refused, &pe) {
		status = pe.Status
	}
	switch {
	case refused != nil && (!refusedForSize(refused) || m.ContextWindow < largest):
		return nil // not for its size, or the window can still grow
	case system+tools >= int64(largest):
		return &ProviderError{Kind: ErrorOther, Status: status, Err: refused,
			Message: fmt.Sprintf("The request cannot fit: %s alone %s more than %s, before any message. %s", what, need, where, fix)}
	case refused == nil:
		return nil
	}
	if len(req.Messages) != 1 {
		return nil // a compaction may make room
	}
	if _, ok := req.Messages[0].(*UserMessage); !ok {
		return nil
	}
	prompt := estimateTokens(req.Messages[0])
	return &ProviderError{Kind: ErrorOther, Status: status, Err: refused,
		Message: fmt.Sprintf("The request cannot fit: the server refused it for its size at %s, and it holds nothing to compact: %s, with the prompt (about %d tokens; estimates at 4 characters a token, the server counts more). %s Or send a shorter prompt.",
			where, what, prompt, fix)}
}
