package engine

import "fmt"

// Silent truncation check. Ollama cuts a prompt that does not fit the
// context it was loaded with (num_ctx) without an error: the model then
// answers from a fragment of the conversation. The only trace is the
// prompt_eval_count it reports, far below what was sent. When that
// happens the host is told once per session, with both numbers and the
// num_ctx in force, so its user can raise the context (no agent we know of
// does this).

// silentTruncationAPIs are the APIs known to truncate silently.
var silentTruncationAPIs = map[string]bool{"ollama": true}

// promptChars estimates the size of a request in characters: the system
// prompt, every text of the messages and the tool schemas. (4 characters
// make about one token for the languages and code models see most.)
func promptChars(req *Request) int {
	n := len(req.SystemPrompt)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for _, m := range req.Messages {
		switch v := m.(type) {
		case *UserMessage:
			n += blocksChars(v.Content)
		case *AssistantMessage:
			n += blocksChars(v.Content)
		case *ToolResultMessage:
			n += blocksChars(v.Content)
		}
	}
	return n
}

func blocksChars(bs []ContentBlock) int {
	n := 0
	for _, b := range bs {
		n += len(b.Text) + len(b.Thinking) + len(b.Arguments) + len(b.Name)
	}
	return n
}

// plugTruncation plugs the truncation check in (features.go): a new record
// may warn again.
func (s *Session) plugTruncation() {
	s.onInstall = append(s.onInstall, func() { s.truncWarned = false })
}

// checkTruncation compares the prompt tokens the provider reports with the
// estimate of what was sent, and warns once. (actor)
func (s *Session) checkTruncation(r *run, msg *AssistantMessage) {
	if s.truncWarned || r.promptChars == 0 || msg.StopReason == StopError || msg.StopReason == StopAborted {
		return
	}
	reported := msg.Usage.Input + msg.Usage.CacheRead
	estimate := int64(r.promptChars / 4)
	// Estimates are rough; only a report below half of a sizeable estimate
	// is a cut, not a tokenizer difference.
	if reported <= 0 || estimate < 1024 || reported*2 >= estimate {
		return
	}
	s.truncWarned = true
	s.notify("warning", fmt.Sprintf("The model read only %d prompt tokens of about %d sent: %s cut the conversation to fit its context (num_ctx %d). Raise the model's contextWindow (models.yml) for full context.",
		reported, estimate, r.model.Provider, r.model.ContextWindow))
}
