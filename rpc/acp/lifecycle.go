package acp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/sessions"
)

// The session lifecycle: session/new, load, resume, list and close, each
// on a goroutine of its own (they may read files), answered in the order
// of their work.

// setup reads what session/new, load and resume share: an absolute cwd,
// the MCP servers, and the delegation the client offers.
func (s *Server) setup(req *jsonrpc.Request, cwd string, servers []sdk.McpServer) (sessions.Request, *Delegate, bool) {
	if !filepath.IsAbs(cwd) {
		s.c.fail(req, errInvalidParams(fmt.Sprintf("cwd must be an absolute path, got %q", cwd)))
		return sessions.Request{}, nil, false
	}
	// Tools, commands and MCP servers run there: it must be a directory.
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		why := "not a directory"
		if err != nil {
			why = errors.Unwrap(err).Error()
		}
		s.c.fail(req, errInvalidParams(fmt.Sprintf("cwd must be an existing directory, got %q: %s", cwd, why)))
		return sessions.Request{}, nil, false
	}
	// The editor is the UI: the ask tool's questions become its
	// permission and elicitation requests.
	want := sessions.Request{Cwd: filepath.Clean(cwd), HostUI: true, Save: true}
	for i, m := range servers {
		switch {
		case m.Stdio != nil:
			env := map[string]string{}
			for _, e := range m.Stdio.Env {
				env[e.Name] = e.Value
			}
			want.MCPServers = append(want.MCPServers, sessions.MCPServer{Name: m.Stdio.Name, Transport: "stdio", Command: m.Stdio.Command, Args: m.Stdio.Args, Env: env})
		case m.Http != nil:
			want.MCPServers = append(want.MCPServers, sessions.MCPServer{Name: m.Http.Name, Transport: "http", URL: m.Http.Url, Headers: headers(m.Http.Headers)})
		case m.Sse != nil:
			want.MCPServers = append(want.MCPServers, sessions.MCPServer{Name: m.Sse.Name, Transport: "sse", URL: m.Sse.Url, Headers: headers(m.Sse.Headers)})
		default:
			s.c.fail(req, errInvalidParams(fmt.Sprintf("mcpServers[%d]: a transport this agent does not offer", i)))
			return sessions.Request{}, nil, false
		}
	}
	caps := s.clientCaps()
	d := &Delegate{}
	if caps.Fs.ReadTextFile && caps.Fs.WriteTextFile {
		d.Editor = &Editor{c: s.c}
	}
	if caps.Terminal {
		d.Terminal = &Terminal{c: s.c}
	}
	return want, d, true
}

func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

func (s *Server) newSession(req *jsonrpc.Request) {
	var p sdk.NewSessionRequest
	if !s.decodeParams(req, &p) {
		return
	}
	want, d, ok := s.setup(req, p.Cwd, p.McpServers)
	if !ok {
		return
	}
	ss, err := s.open(want, d)
	if err != nil {
		s.c.fail(req, errInternal(err))
		return
	}
	var resp sdk.NewSessionResponse
	ss.eng.Call(func() {
		resp = sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), ConfigOptions: ss.configOptions(), Modes: ss.modes()}
	})
	s.c.respond(req, resp)
	ss.announceCommands()
}

// loadSession serves session/load (replay the history, then null) and
// session/resume (no replay). A session live in this process is the same
// engine session: its running turn goes on, and session/cancel still
// reaches it.
func (s *Server) loadSession(req *jsonrpc.Request, replay bool) {
	var sid, cwd string
	var servers []sdk.McpServer
	if replay {
		var p sdk.LoadSessionRequest
		if !s.decodeParams(req, &p) {
			return
		}
		sid, cwd, servers = string(p.SessionId), p.Cwd, p.McpServers
	} else {
		var p sdk.ResumeSessionRequest
		if !s.decodeParams(req, &p) {
			return
		}
		sid, cwd, servers = string(p.SessionId), p.Cwd, p.McpServers
	}
	want, d, ok := s.setup(req, cwd, servers)
	if !ok {
		return
	}
	want.ID = sid
	ss, err := s.open(want, d)
	if errors.Is(err, sessions.ErrUnknown) {
		s.c.fail(req, errSessionNotFound(sid))
		return
	}
	if err != nil {
		s.c.fail(req, errInternal(err))
		return
	}
	<-ss.eng.Ready()
	var opts []sdk.SessionConfigOption
	var modes *sdk.SessionModeState
	ss.eng.Call(func() {
		if replay {
			ss.replay()
		}
		opts, modes = ss.configOptions(), ss.modes()
	})
	if replay {
		s.c.respond(req, sdk.LoadSessionResponse{ConfigOptions: opts, Modes: modes})
	} else {
		s.c.respond(req, sdk.ResumeSessionResponse{ConfigOptions: opts, Modes: modes})
	}
	ss.announceCommands()
}

// listPage is how many sessions one session/list answer holds.
const listPage = 50

func (s *Server) listSessions(req *jsonrpc.Request) {
	var p sdk.ListSessionsRequest
	if !s.decodeParams(req, &p) {
		return
	}
	cwd := ""
	if p.Cwd != nil {
		cwd = *p.Cwd
	}
	all, err := s.opts.Host.List(cwd)
	if err != nil {
		s.c.fail(req, errInternal(err))
		return
	}
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			s.c.fail(req, errInvalidParams("unknown cursor"))
			return
		}
		start = n
	}
	end := min(start+listPage, len(all))
	resp := sdk.ListSessionsResponse{Sessions: make([]sdk.SessionInfo, 0, end-start)}
	for _, info := range all[start:end] {
		si := sdk.SessionInfo{SessionId: sdk.SessionId(info.ID), Cwd: info.Cwd}
		if info.Title != "" {
			si.Title = sdk.Ptr(info.Title)
		}
		if !info.Updated.IsZero() {
			si.UpdatedAt = sdk.Ptr(info.Updated.UTC().Format("2006-01-02T15:04:05.000Z"))
		}
		resp.Sessions = append(resp.Sessions, si)
	}
	if end < len(all) {
		resp.NextCursor = sdk.Ptr(strconv.Itoa(end))
	}
	s.c.respond(req, resp)
}

func (s *Server) closeSession(req *jsonrpc.Request) {
	var p sdk.CloseSessionRequest
	if !s.decodeParams(req, &p) {
		return
	}
	ss := s.sessionOf(s.opts.Host.Get(string(p.SessionId)))
	if ss == nil {
		s.c.fail(req, errSessionNotFound(string(p.SessionId)))
		return
	}
	ss.close(true)
	s.c.respond(req, sdk.CloseSessionResponse{})
}
