package engine

import (
	"encoding/base64"
	"encoding/json"
)

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
	window := 0
	if s.set.model != nil {
		window = s.set.model.ContextWindow
	}
	st := StatsOf(s.rec.context, window)
	st.SessionFile, st.SessionID = s.set.file, s.set.id
	return st
}

// StatsOf is get_session_stats over a context, for a model of the given
// window (0: unknown, no contextUsage): Stats' rule, shared with the
// durable session.
func StatsOf(context []Message, window int) SessionStats {
	var st SessionStats
	var last *AssistantMessage
	for _, m := range context {
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
	if window > 0 {
		cu := &ContextUsage{ContextWindow: window}
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

// MessagesPage is one page of the context (omp's get_messages_page).
type MessagesPage struct {
	Messages   []Message
	Total      int
	NextCursor string // "" on the last page
}

// pageCursor is what a page cursor encodes: the context it was made for
// (session and leaf), so a page asked after the session changed is
// refused instead of skipping or repeating messages.
type pageCursor struct {
	Key    string `json:"k"`
	Offset int    `json:"o"`
	Desc   bool   `json:"d,omitempty"`
}

// Page returns limit messages of the context (limit > 0), from the oldest
// or, with desc, from the newest; cursor ("" for the first page) is the
// previous page's NextCursor, whose order wins. It fails with
// ErrSessionBusy during a run or a compaction, ErrInvalidCursor for a
// cursor that is not one and ErrStaleCursor for one made before the
// session changed. (actor)
func (s *Session) Page(cursor string, limit int, desc bool) (MessagesPage, error) {
	if s.IsStreaming() || s.isCompacting() {
		return MessagesPage{}, ErrSessionBusy
	}
	cur := pageCursor{Key: s.set.id + "/" + s.rec.leaf, Desc: desc}
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		var got pageCursor
		if err != nil || json.Unmarshal(raw, &got) != nil || got.Offset < 0 {
			return MessagesPage{}, ErrInvalidCursor
		}
		if got.Key != cur.Key {
			return MessagesPage{}, ErrStaleCursor
		}
		cur.Offset, cur.Desc = got.Offset, got.Desc
	}
	ctx := s.rec.context
	total := len(ctx)
	p := MessagesPage{Total: total, Messages: []Message{}}
	if cur.Offset >= total || limit <= 0 {
		return p, nil
	}
	end := min(cur.Offset+limit, total)
	for i := cur.Offset; i < end; i++ {
		j := i
		if cur.Desc {
			j = total - 1 - i
		}
		p.Messages = append(p.Messages, ctx[j])
	}
	if end < total {
		b, _ := json.Marshal(pageCursor{Key: cur.Key, Offset: end, Desc: cur.Desc})
		p.NextCursor = base64.RawURLEncoding.EncodeToString(b)
	}
	return p, nil
}

// userEntry returns the text and parent of a user message entry; ok is
// false when id names no such entry (branch and fork start from one).
// (actor)
func (s *Session) userEntry(id string) (text, parent string, ok bool) {
	i, found := s.rec.index[id]
	if !found {
		return "", "", false
	}
	e := s.rec.entries[i]
	t, isUser := userText(e)
	if !isUser {
		return "", "", false
	}
	return t, e.ParentID, true
}

// branchEntries returns the entries from the root to id, for a new file
// that continues from there: label entries are dropped from the path and
// re-appended at its end for the labels that target an entry on it, as the
// original's branched sessions are written. (actor)
func (s *Session) branchEntries(id string) []*Entry {
	path := s.rec.branch(id)
	on := make(map[string]bool, len(path))
	out := make([]*Entry, 0, len(path))
	var labels []*Entry
	for _, e := range path {
		if e.Type == EntryLabel {
			labels = append(labels, e)
			continue
		}
		on[e.ID] = true
		out = append(out, e)
	}
	for _, l := range labels {
		if l.Label != nil && on[l.Label.TargetID] {
			c := *l
			if len(out) > 0 {
				c.ParentID = out[len(out)-1].ID
			}
			out = append(out, &c)
		}
	}
	// Parents are relinked along the path: dropping labels must not leave
	// an entry pointing at one.
	for i := range out {
		want := ""
		if i > 0 {
			want = out[i-1].ID
		}
		if out[i].ParentID != want {
			c := *out[i]
			c.ParentID = want
			out[i] = &c
		}
	}
	return out
}

// SystemPrompt returns the current system prompt. (actor)
func (s *Session) SystemPrompt() string { return s.set.systemPrompt }

// Identity returns the session's id, file ("" in memory) and name. (actor)
func (s *Session) Identity() (id, file, name string) { return s.set.id, s.set.file, s.set.name }
