package rpc

func (s *Server) cmdGetBranchMessages(c *command) {
	s.okJSON(c, entryTextsData{s.sess.UserEntries()})
}

func (s *Server) cmdGetForkMessages(c *command) {
	s.okJSON(c, entryTextsData{s.sess.BranchUserEntries()})
}

func (s *Server) cmdGetSessionStats(c *command) { s.okJSON(c, s.sess.Stats()) }

const (
	defaultPageLimit = 100
	maxPageLimit     = 10000
)

// cmdGetMessagesPage is omp's paged get_messages: limit (default 100,
// at most 10000), cursor from the previous page, order "asc" (default)
// or "desc" (from the newest).
func (s *Server) cmdGetMessagesPage(c *command) {
	var a messagesPageArgs
	if err := decode(c, &a); err != nil {
		s.fail(c, err)
		return
	}
	limit := defaultPageLimit
	if a.Limit != nil {
		if *a.Limit < 1 {
			s.fail(c, errMustBe(c.typ, "limit", "a positive integer"))
			return
		}
		limit = min(*a.Limit, maxPageLimit)
	}
	if a.Order != "" && a.Order != "asc" && a.Order != "desc" {
		s.fail(c, errMustBe(c.typ, "order", `"asc" or "desc"`))
		return
	}
	page, err := s.sess.Page(str(a.Cursor), limit, a.Order == "desc")
	if err != nil {
		s.fail(c, err)
		return
	}
	s.okJSON(c, messagesPageData{page.Messages, page.Total, page.NextCursor})
}
