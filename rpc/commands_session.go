package rpc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
)

func (s *Server) cmdGetBranchMessages(c *command) {
	s.okJSON(c, struct {
		Messages []engine.EntryText `json:"messages"`
	}{s.sess.UserEntries()})
}

func (s *Server) cmdGetForkMessages(c *command) {
	s.okJSON(c, struct {
		Messages []engine.EntryText `json:"messages"`
	}{s.sess.BranchUserEntries()})
}

func (s *Server) cmdGetSessionStats(c *command) { s.okJSON(c, s.sess.Stats()) }

// cmdGetCommands answers the slash commands, prompt templates and skills a
// host may offer: none in this build (pi's get_commands, omp's
// get_available_commands).
func (s *Server) cmdGetCommands(c *command) { s.ok(c, []byte(`{"commands":[]}`)) }

// pageCursor is what a get_messages_page cursor encodes: the context it was
// made for (session and leaf), so a page asked after the session changed
// is refused instead of skipping or repeating messages.
type pageCursor struct {
	Key    string `json:"k"`
	Offset int    `json:"o"`
	Desc   bool   `json:"d,omitempty"`
}

const (
	defaultPageLimit = 100
	maxPageLimit     = 10000
)

// cmdGetMessagesPage is omp's paged get_messages: limit (default 100,
// at most 10000), cursor from the previous page, order "asc" (default)
// or "desc" (from the newest).
func (s *Server) cmdGetMessagesPage(c *command) {
	var a struct {
		Limit  *int    `json:"limit"`
		Cursor *string `json:"cursor"`
		Order  string  `json:"order"`
	}
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	if s.sess.IsStreaming() || s.sess.IsCompacting() {
		s.failCode(c, errSessionBusy, "session_busy")
		return
	}
	limit := defaultPageLimit
	if a.Limit != nil {
		if *a.Limit < 1 {
			s.fail(c, fmt.Errorf("Invalid %s command: \"limit\" must be a positive integer", c.typ))
			return
		}
		limit = min(*a.Limit, maxPageLimit)
	}
	if a.Order != "" && a.Order != "asc" && a.Order != "desc" {
		s.fail(c, fmt.Errorf("Invalid %s command: \"order\" must be \"asc\" or \"desc\"", c.typ))
		return
	}
	cur := pageCursor{Key: s.sess.PageKey(), Desc: a.Order == "desc"}
	if a.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*a.Cursor)
		var got pageCursor
		if err != nil || json.Unmarshal(raw, &got) != nil || got.Offset < 0 {
			s.failCode(c, errInvalidCursor, "invalid_cursor")
			return
		}
		if got.Key != cur.Key {
			s.failCode(c, errStaleCursor, "stale_cursor")
			return
		}
		cur.Offset, cur.Desc = got.Offset, got.Desc
	}
	page := s.sess.Page(cur.Offset, limit, cur.Desc)
	next := ""
	if page.Next >= 0 {
		b, _ := json.Marshal(pageCursor{Key: cur.Key, Offset: page.Next, Desc: cur.Desc})
		next = base64.RawURLEncoding.EncodeToString(b)
	}
	s.okJSON(c, struct {
		Messages      []engine.Message `json:"messages"`
		TotalMessages int              `json:"totalMessages"`
		NextCursor    string           `json:"nextCursor,omitempty"`
	}{page.Messages, page.Total, next})
}
