package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/rpc"
)

// serverCommands are the server's own commands (docs/server.md), answered
// by the server; every other command goes to a session.
var serverCommands = map[string]func(*client, *command){
	"get_sessions":  (*client).cmdGetSessions,
	"open_session":  (*client).cmdOpenSession,
	"attach":        (*client).cmdAttach,
	"detach":        (*client).cmdDetach,
	"close_session": (*client).cmdCloseSession,
}

// readOnly are the commands an observer may send: they only read.
var readOnly = map[string]bool{
	"get_state": true, "get_messages": true, "get_last_assistant_text": true, "get_available_models": true,
	"get_branch_messages": true, "get_fork_messages": true, "get_session_stats": true, "get_messages_page": true,
	"get_commands": true, "get_available_commands": true, "get_mcp_servers": true,
}

// keepsRecord are the commands that would change which record a served
// session is: the sessionId keeps naming the same one (open_session starts
// another). A client's own session takes them, as --mode rpc does.
var keepsRecord = map[string]bool{"new_session": true, "switch_session": true, "fork": true, "clone": true}

// args reads cmd's fields into v by the protocol's reading rule.
func args(cmd *command, v any) error {
	return rpc.ReadFields(cmd.line, v)
}

type sessionInfo struct {
	SessionID string    `json:"sessionId"`
	Cwd       string    `json:"cwd"`
	Title     string    `json:"title,omitempty"`
	Updated   string    `json:"updated,omitempty"`
	Live      bool      `json:"live"`
	Seq       uint64    `json:"seq,omitempty"`
	Clients   []watcher `json:"clients"`
	// Durable: a durable session (serve --temporal); live says whether
	// this server serves it now.
	Durable bool `json:"durable,omitempty"`
}

// cmdGetSessions lists the live and stored sessions, with who watches the
// live ones.
func (c *client) cmdGetSessions(cmd *command) {
	var a getSessionsArgs
	if err := args(cmd, &a); err != nil {
		c.fail(cmd, err)
		return
	}
	infos, err := c.srv.opts.Host.List(a.Cwd)
	if err != nil {
		c.fail(cmd, err)
		return
	}
	out := make([]sessionInfo, 0, len(infos))
	if a.Cwd == "" && c.srv.opts.Remote != nil {
		// Durable sessions run in their workers' directory: listed when no
		// cwd is asked for, before the stored ones (those served here
		// first, then the others as the remote store lists them).
		remotes, err := c.srv.listRemote()
		if err != nil {
			c.fail(cmd, err)
			return
		}
		out = append(out, remotes...)
		for i := range out {
			if h := c.srv.hub(out[i].SessionID); h != nil {
				out[i].Seq, out[i].Clients = h.lastSeq(), h.watchers(c)
			}
		}
	}
	for _, in := range infos {
		si := sessionInfo{SessionID: in.ID, Cwd: in.Cwd, Title: in.Title, Clients: []watcher{}}
		if !in.Updated.IsZero() {
			si.Updated = in.Updated.UTC().Format(time.RFC3339Nano)
		}
		if h := c.srv.hub(in.ID); h != nil {
			si.Live, si.Seq, si.Clients = true, h.lastSeq(), h.watchers(c)
		}
		out = append(out, si)
	}
	data, _ := engine.MarshalJSON(sessionsData{out})
	c.sendDirect(answer(cmd, "", data, nil))
}

// attachData is an attach's (and open_session's) answer.
type attachData struct {
	SessionID string `json:"sessionId"`
	Epoch     string `json:"epoch"`
	Seq       uint64 `json:"seq"`
	Role      string `json:"role"`
	// CursorTooOld: the events after the cursor are no longer all kept
	// (or the cursor is of another run of the server): Messages are the
	// session's messages at Seq, and the events follow from there.
	CursorTooOld bool            `json:"cursorTooOld,omitempty"`
	Messages     json.RawMessage `json:"messages,omitempty"`
	// Durable: the session is a durable one (xcsh serve --temporal): its
	// seq and epoch are the session's own, good on any server of it.
	Durable bool `json:"durable,omitempty"`
}

// cmdOpenSession starts a new session and attaches the client to it as a
// controller.
func (c *client) cmdOpenSession(cmd *command) {
	var a openSessionArgs
	if err := args(cmd, &a); err != nil {
		c.fail(cmd, err)
		return
	}
	if a.Durable || a.SessionID != "" {
		c.openDurable(cmd, a)
		return
	}
	cwd := a.Cwd
	if cwd == "" {
		cwd = c.srv.opts.Cwd
	}
	if !filepath.IsAbs(cwd) {
		c.fail(cmd, fmt.Errorf("cwd must be an absolute path, got %q", a.Cwd))
		return
	}
	lean, err := leanOf(a.Updates, false)
	if err != nil {
		c.fail(cmd, err)
		return
	}
	h, err := c.srv.serve(sessions.Request{Cwd: filepath.Clean(cwd), HostUI: c.srv.opts.HostUI})
	if err != nil {
		c.fail(cmd, err)
		return
	}
	c.subscribe(cmd, h, controller, lean, nil)
}

// openDurable opens a durable session (serve --temporal): a new one, or
// the one sessionId names, started when it does not exist (as a stdio
// front's --session), and attaches the client as a controller.
func (c *client) openDurable(cmd *command, a openSessionArgs) {
	switch {
	case !a.Durable:
		c.fail(cmd, errors.New(`open_session takes a sessionId only with "durable":true (attach joins a session that exists)`))
		return
	case a.Cwd != "":
		c.fail(cmd, errors.New("a durable session runs in its workers' directory: open_session takes no cwd with durable"))
		return
	}
	lean, err := leanOf(a.Updates, false)
	if err != nil {
		c.fail(cmd, err)
		return
	}
	if a.SessionID != "" {
		if h := c.srv.hub(a.SessionID); h != nil && h.remote == nil {
			c.fail(cmd, fmt.Errorf("session %s is not durable: attach to it", a.SessionID))
			return
		}
	}
	h, err := c.srv.serveRemote(a.SessionID, true)
	if err != nil {
		c.fail(cmd, err)
		return
	}
	c.subscribe(cmd, h, controller, lean, nil)
}

// cmdAttach attaches the client to a live or stored session, replaying
// what it missed after its cursor.
func (c *client) cmdAttach(cmd *command) {
	var a attachArgs
	if err := args(cmd, &a); err != nil {
		c.fail(cmd, err)
		return
	}
	if a.SessionID == "" {
		c.fail(cmd, errors.New("attach needs a sessionId"))
		return
	}
	r := controller
	switch a.Role {
	case "", "controller":
	case "observer":
		r = observer
	default:
		c.fail(cmd, fmt.Errorf("unknown role %q (controller or observer)", a.Role))
		return
	}
	lean, err := leanOf(a.Updates, false)
	if err != nil {
		c.fail(cmd, err)
		return
	}
	h, err := c.srv.serve(sessions.Request{ID: a.SessionID, Cwd: c.srv.opts.Cwd, HostUI: c.srv.opts.HostUI})
	if errors.Is(err, sessions.ErrUnknown) && c.srv.opts.Remote != nil {
		// Not a session of this server's: a durable one, which another
		// server or front may have started.
		h, err = c.srv.serveRemote(a.SessionID, false)
		if errors.Is(err, ErrUnknownRemote) {
			err = sessions.ErrUnknown
		}
	}
	if errors.Is(err, sessions.ErrUnknown) {
		err = &unknownSessionError{a.SessionID}
	}
	if err != nil {
		c.fail(cmd, err)
		return
	}
	var from *cursor
	if a.After != nil {
		from = &cursor{after: *a.After, epoch: a.Epoch}
	}
	c.subscribe(cmd, h, r, lean, from)
}

// subscribe attaches the client to h (once: attaching again moves the
// cursor) and answers cmd first of the frames it will read of h.
func (c *client) subscribe(cmd *command, h *hub, r role, lean bool, from *cursor) {
	c.mu.Lock()
	old := c.subs[h.id]
	c.mu.Unlock()
	if old != nil {
		if old.bare {
			c.fail(cmd, errors.New("this is the client's own session: its frames already come without asking"))
			return
		}
		h.detach(old)
	}
	sb := &sub{c: c, role: r, lean: lean}
	err := h.attach(sb, from, func(info attachInfo) []byte {
		d := attachData{SessionID: h.id, Epoch: h.epoch(), Seq: info.seq, Role: r.String(), CursorTooOld: info.tooOld, Durable: h.remote != nil}
		switch {
		case info.remoteMessages != nil:
			d.Messages = info.remoteMessages
		case info.tooOld:
			d.Messages = engine.AppendMessages(nil, info.messages)
		}
		data, _ := engine.MarshalJSON(d)
		return answer(cmd, h.id, data, nil)
	})
	if err != nil {
		c.fail(cmd, err)
		return
	}
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		h.detach(sb)
		return
	}
	c.subs[h.id] = sb
	c.mu.Unlock()
	c.kick()
}

func (c *client) cmdDetach(cmd *command) {
	c.mu.Lock()
	sb := c.subs[cmd.sessionID]
	if sb != nil && !sb.bare {
		delete(c.subs, cmd.sessionID)
	}
	c.mu.Unlock()
	if sb == nil || sb.bare {
		c.fail(cmd, &notAttachedError{cmd.sessionID})
		return
	}
	sb.h.detach(sb)
	c.sendDirect(answer(cmd, cmd.sessionID, nil, nil))
}

func (c *client) cmdCloseSession(cmd *command) {
	c.mu.Lock()
	sb := c.subs[cmd.sessionID]
	c.mu.Unlock()
	switch {
	case sb == nil:
		c.fail(cmd, &notAttachedError{cmd.sessionID})
		return
	case sb.role == observer:
		c.fail(cmd, &observerError{cmd.sessionID, cmd.typ})
		return
	}
	c.srv.close(sb.h, true)
	c.sendDirect(answer(cmd, cmd.sessionID, nil, nil))
}

// leanOf reads an "updates" argument.
func leanOf(updates string, def bool) (bool, error) {
	switch updates {
	case "":
		return def, nil
	case rpc.UpdatesFull:
		return false, nil
	case rpc.UpdatesDelta:
		return true, nil
	}
	return false, fmt.Errorf("invalid updates %q (expected full or delta)", updates)
}
