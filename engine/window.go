package engine

import (
	"errors"
	"fmt"
)

// The window in force. A local server (Ollama) reserves memory for every
// token of a model's window when it loads the model, so a model's trained
// context (131,072 tokens for llama3.1) asks more of a laptop than it
// has. Such a model comes with a window that fits (Model.ContextWindow)
// and the largest it may have (Model.MaxContextWindow). The session runs
// with the first, sends it with every request (Ollama's num_ctx), and
// doubles it, at most to the second, when the conversation needs more:
//
//   - when a response's context passes the compaction threshold of the
//     window in force (after the run, and before a prompt on the last
//     response): the window grows instead of the session compacting, to
//     the first doubling whose threshold holds the context; only a
//     context over the threshold of the largest window is compacted, with
//     that window's budgets;
//   - when a request is refused for its size before anything streamed
//     (a context overflow): the same request goes again at once with the
//     window doubled, inside the same assistant message, until it fits or
//     the window is the largest (then the overflow takes its usual course:
//     a compaction).
//
// Each change replaces the session's model with one whose ContextWindow
// is the new window (get_state shows it; the compaction budgets, context
// usage and the summary's chunks follow it) and tells the host with an
// info notify. Selecting a model again starts it at its own window.

// grownWindow is the window m needs for a context of tokens: its window
// when the context is within that window's compaction threshold, else
// the first doubling whose threshold holds it, at most m's largest
// window. ok is false when m's window cannot grow.
func (c CompactionSettings) grownWindow(m Model, tokens int64) (w int, ok bool) {
	w = m.ContextWindow
	if w <= 0 || m.MaxContextWindow <= w {
		return w, false
	}
	for w < m.MaxContextWindow {
		if _, _, threshold := c.Budgets(w); tokens <= threshold {
			break
		}
		w = min(2*w, m.MaxContextWindow)
	}
	return w, w != m.ContextWindow
}

// growWindow makes the window in force hold a context of tokens, if the
// model's window can grow that far; it reports whether the context is now
// within the compaction threshold (so nothing need be compacted). A
// window that grows to its largest and still does not hold the context
// stays grown: the compaction then uses it. (actor)
func (s *Session) growWindow(tokens int64) bool {
	m := s.set.model
	if m == nil {
		return false
	}
	w, ok := s.cfg.Compaction.grownWindow(*m, tokens)
	if !ok {
		return false
	}
	s.setWindow(w, "the conversation needs it")
	_, _, threshold := s.cfg.Compaction.Budgets(w)
	return tokens <= threshold
}

// setWindow replaces the session's model with one whose window in force
// is w, and tells the host. (actor)
func (s *Session) setWindow(w int, why string) {
	m := *s.set.model
	prev := m.ContextWindow
	m.ContextWindow = w
	s.set.model = &m
	s.set.version++
	s.notify("info", fmt.Sprintf("%s/%s: context window %d → %d tokens (%s; at most %d). The server reloads the model at the new size.",
		m.Provider, m.ID, prev, w, why, m.MaxContextWindow))
}

// growOnRefusal is the check after a model call that failed: a request
// refused for its size, with nothing streamed yet, to the session's model
// whose window can still grow. The window doubles and req (and the run's
// model) take it; true means send req again. (actor)
func (s *Session) growOnRefusal(r *run, req *Request, err error) bool {
	m := s.set.model
	if err == nil || m == nil || s.partial == nil || len(s.partial.msg.Content) > 0 ||
		m.Provider != req.Model.Provider || m.ID != req.Model.ID || m.MaxContextWindow <= m.ContextWindow {
		return false
	}
	var pe *ProviderError
	if !(errors.As(err, &pe) && pe.Kind == ErrorContextOverflow) && !overflowText().MatchString(err.Error()) {
		return false
	}
	s.setWindow(min(2*m.ContextWindow, m.MaxContextWindow), "the request did not fit")
	req.Model.ContextWindow = s.set.model.ContextWindow
	r.model.ContextWindow = s.set.model.ContextWindow
	return true
}
