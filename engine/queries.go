package engine

// EntryText is a user message entry and its text, as the branch and fork
// commands list them.
type EntryText struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// userText returns the text of a user message entry ("" when the entry is
// not one, or has no text).
func userText(e *Entry) (string, bool) {
	if e.Type != EntryMessage {
		return "", false
	}
	u, ok := e.Message.(*UserMessage)
	if !ok {
		return "", false
	}
	return u.Text(), true
}

// UserEntries lists every user message entry of the record with text, in
// file order, whatever its branch (get_branch_messages). (actor)
func (s *Session) UserEntries() []EntryText {
	out := []EntryText{}
	for _, e := range s.rec.entries {
		if t, ok := userText(e); ok && t != "" {
			out = append(out, EntryText{EntryID: e.ID, Text: t})
		}
	}
	return out
}

// BranchUserEntries lists the user message entries of the current branch,
// oldest first: the points a fork can start from (get_fork_messages). (actor)
func (s *Session) BranchUserEntries() []EntryText {
	out := []EntryText{}
	for _, e := range s.rec.branch(s.rec.leaf) {
		if t, ok := userText(e); ok {
			out = append(out, EntryText{EntryID: e.ID, Text: t})
		}
	}
	return out
}

// Tokens are summed token counts.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// ContextUsage is how full the model's context window is, by the last
// assistant message's usage.
type ContextUsage struct {
	Tokens        int64   `json:"tokens"`
	ContextWindow int     `json:"contextWindow"`
	Percent       float64 `json:"percent"`
}

// SessionStats is the payload of get_session_stats (agent-core §5.9), in
// wire key order, plus contextUsage (additive).
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            Tokens        `json:"tokens"`
	Cost              float64       `json:"cost"`
	PremiumRequests   int64         `json:"premiumRequests"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
}

// Stats computes get_session_stats over the context (not the file: after
// a compaction they cover the summary and the kept messages, as in the
// original). (actor)
func (s *Session) Stats() SessionStats {
	st := SessionStats{SessionFile: s.set.file, SessionID: s.set.id}
	var last *AssistantMessage
	for _, m := range s.rec.context {
		st.TotalMessages++
		switch v := m.(type) {
		case *UserMessage:
			st.UserMessages++
		case *ToolResultMessage:
			st.ToolResults++
		case *AssistantMessage:
			st.AssistantMessages++
			st.ToolCalls += len(v.ToolCalls())
			u := v.Usage
			st.Tokens.Input += u.Input
			st.Tokens.Output += u.Output
			st.Tokens.CacheRead += u.CacheRead
			st.Tokens.CacheWrite += u.CacheWrite
			st.Cost += u.Cost.Total
			if u.PremiumRequests != nil {
				st.PremiumRequests += *u.PremiumRequests
			}
			if v.StopReason != StopAborted && v.StopReason != StopError {
				last = v
			}
		}
	}
	st.Tokens.Total = st.Tokens.Input + st.Tokens.Output + st.Tokens.CacheRead + st.Tokens.CacheWrite
	if s.set.model != nil && s.set.model.ContextWindow > 0 {
		cu := &ContextUsage{ContextWindow: s.set.model.ContextWindow}
		if last != nil {
			u := last.Usage
			cu.Tokens = u.TotalTokens
			if cu.Tokens == 0 {
				cu.Tokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
			}
		}
		cu.Percent = float64(int64(float64(cu.Tokens)*10000/float64(cu.ContextWindow))) / 100
		st.ContextUsage = cu
	}
	return st
}

// MessagesPage is one page of the context for get_messages_page.
type MessagesPage struct {
	Messages []Message
	Total    int
	Next     int // offset of the next page; -1 on the last page
}

// Page returns count messages of the context starting at offset (from the
// oldest, or from the newest when desc). (actor)
func (s *Session) Page(offset, count int, desc bool) MessagesPage {
	ctx := s.rec.context
	total := len(ctx)
	p := MessagesPage{Total: total, Next: -1, Messages: []Message{}}
	if offset >= total || count <= 0 {
		return p
	}
	end := offset + count
	if end > total {
		end = total
	}
	for i := offset; i < end; i++ {
		j := i
		if desc {
			j = total - 1 - i
		}
		p.Messages = append(p.Messages, ctx[j])
	}
	if end < total {
		p.Next = end
	}
	return p
}

// PageKey identifies the context a page cursor was made for: the session
// and the leaf. A cursor for another key is stale. (actor)
func (s *Session) PageKey() string { return s.set.id + "/" + s.rec.leaf }
