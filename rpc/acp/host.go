package acp

import (
	"context"
	"strconv"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
)

// The engine's questions to the user (engine.HostLink): a confirmation
// (the bash confirmation policy, writes outside the project) or a choice
// (the ask tool, an MCP server's enum) becomes session/request_permission;
// a text answer (input, editor) becomes elicitation/create when the client
// offers form elicitation, and is otherwise cancelled with a notice.
// "Always allow" is remembered for the session, per tool and question.

// dialog is one question waiting for the client.
type dialog struct {
	id    string          // the engine's
	ctx   context.Context // the asker's: when it ends the request is withdrawn
	reply chan engine.DialogReply
}

// AwaitTool implements engine.HostLink: ACP has no host tools.
func (ss *session) AwaitTool(context.Context, string, func(), func(engine.ToolResult)) (engine.ToolResult, error) {
	return engine.ToolResult{}, engine.ErrHostGone
}

// AwaitDialog implements engine.HostLink. send emits the engine's
// DialogOpen through the executor; the Sink turns it into our request
// (openDialog), and a goroutine of the session delivers the answer.
func (ss *session) AwaitDialog(ctx context.Context, id string, send func()) (engine.DialogReply, error) {
	d := &dialog{id: id, ctx: ctx, reply: make(chan engine.DialogReply, 1)}
	ss.dmu.Lock()
	ss.dialogs[id] = d
	ss.dmu.Unlock()
	defer func() {
		ss.dmu.Lock()
		delete(ss.dialogs, id)
		ss.dmu.Unlock()
	}()
	send()
	select {
	case r := <-d.reply:
		return r, nil
	case <-ctx.Done():
		return engine.DialogReply{}, context.Cause(ctx)
	}
}

type permissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  permissionToolCall `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type permissionToolCall struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title,omitempty"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// The options of a confirmation.
const (
	optAllow       = "allow"
	optAllowAlways = "allow_always"
	optReject      = "reject"
)

type elicitationRequest struct {
	SessionID       string            `json:"sessionId"`
	ToolCallID      string            `json:"toolCallId,omitempty"`
	Mode            string            `json:"mode"`
	Message         string            `json:"message"`
	RequestedSchema elicitationSchema `json:"requestedSchema"`
}

type elicitationSchema struct {
	Type       string                       `json:"type"`
	Properties map[string]elicitationString `json:"properties"`
	Required   []string                     `json:"required"`
}

type elicitationString struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Default     string `json:"default,omitempty"`
}

// answerField is the one field of an elicitation form.
const answerField = "answer"

// openDialog puts a dialog to the client. (actor)
func (ss *session) openDialog(e engine.DialogOpen) {
	ss.dmu.Lock()
	d := ss.dialogs[e.ID]
	ss.dmu.Unlock()
	if d == nil {
		return
	}
	req := e.Request
	callID := req.ToolCallID
	if callID == "" {
		callID = e.ID
	}
	switch req.Method {
	case engine.DialogConfirm:
		key := ss.toolName(req.ToolCallID) + "\x00" + req.Title + "\x00" + req.Scope // allow_always covers this scope only
		if ss.allowAll[key] {
			d.reply <- engine.DialogReply{Confirmed: true}
			return
		}
		title := req.Title
		if req.Message != "" {
			title += " " + req.Message
		}
		p := permissionRequest{SessionID: ss.id, ToolCall: permissionToolCall{ToolCallID: callID, Title: title}, Options: []permissionOption{
			{OptionID: optAllow, Name: "Allow", Kind: string(sdk.PermissionOptionKindAllowOnce)},
			{OptionID: optAllowAlways, Name: "Always allow", Kind: string(sdk.PermissionOptionKindAllowAlways)},
			{OptionID: optReject, Name: "Reject", Kind: string(sdk.PermissionOptionKindRejectOnce)},
		}}
		ask(ss, d, sdk.ClientMethodSessionRequestPermission, p, func(r *sdk.RequestPermissionResponse) engine.DialogReply {
			if r.Outcome.Selected == nil {
				return engine.DialogReply{Cancelled: true}
			}
			switch r.Outcome.Selected.OptionId {
			case optAllowAlways:
				ss.eng.Post(func() { ss.allowAll[key] = true })
				return engine.DialogReply{Confirmed: true}
			case optAllow:
				return engine.DialogReply{Confirmed: true}
			}
			return engine.DialogReply{}
		})
	case engine.DialogSelect:
		p := permissionRequest{SessionID: ss.id, ToolCall: permissionToolCall{ToolCallID: callID, Title: req.Title}}
		for i, o := range req.Options {
			p.Options = append(p.Options, permissionOption{OptionID: "choice_" + strconv.Itoa(i+1), Name: o, Kind: string(sdk.PermissionOptionKindAllowOnce)})
		}
		ask(ss, d, sdk.ClientMethodSessionRequestPermission, p, func(r *sdk.RequestPermissionResponse) engine.DialogReply {
			if r.Outcome.Selected != nil {
				for i, o := range req.Options {
					if string(r.Outcome.Selected.OptionId) == "choice_"+strconv.Itoa(i+1) {
						return engine.DialogReply{Value: o, HasValue: true}
					}
				}
			}
			return engine.DialogReply{Cancelled: true}
		})
	default: // input, editor
		caps := ss.srv.clientCaps()
		if caps.Elicitation == nil || caps.Elicitation.Form == nil {
			ss.notice("The agent asked \"" + req.Title + "\", which needs a typed answer this editor cannot ask for; the question was cancelled.")
			d.reply <- engine.DialogReply{Cancelled: true}
			return
		}
		field := elicitationString{Type: "string", Title: req.Title, Description: req.Placeholder, Default: req.Prefill}
		p := elicitationRequest{SessionID: ss.id, ToolCallID: req.ToolCallID, Mode: "form", Message: req.Title,
			RequestedSchema: elicitationSchema{Type: "object", Properties: map[string]elicitationString{answerField: field}, Required: []string{answerField}}}
		ask(ss, d, sdk.ClientMethodElicitationCreate, p, func(r *elicitationResponse) engine.DialogReply {
			if r.Action != "accept" {
				return engine.DialogReply{Cancelled: true}
			}
			if v, ok := r.Content[answerField].(string); ok {
				return engine.DialogReply{Value: v, HasValue: true}
			}
			return engine.DialogReply{Cancelled: true}
		})
	}
}

type elicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// ask sends a request for dialog d and delivers the converted answer on a
// goroutine of the session: cancelled when the client fails it or has
// gone, withdrawn ($/cancel_request) when the asker's context ends.
// (actor)
func ask[R any](ss *session, d *dialog, method string, params any, convert func(*R) engine.DialogReply) {
	if ps := ss.controllerPeers(); len(ps) > 0 {
		askAll(ss, ps, d, method, params, convert)
		return
	}
	cl, err := ss.srv.c.Call(method, params)
	if err != nil {
		d.reply <- engine.DialogReply{Cancelled: true}
		return
	}
	ss.asked[d.id] = cl.ID()
	ss.wg.Add(1)
	go func() {
		defer ss.wg.Done()
		var r R
		err := await(d.ctx, cl, &r)
		if d.ctx.Err() == nil {
			// Answered (or failed): nothing to withdraw.
			ss.eng.Post(func() { delete(ss.asked, d.id) })
		}
		if err != nil {
			d.reply <- engine.DialogReply{Cancelled: true}
			return
		}
		d.reply <- convert(&r)
	}()
}

// withdrawDialog tells the client a question is no longer asked (the
// engine's DialogCancel: its call was cancelled, or it timed out), in the
// session's order. (actor)
func (ss *session) withdrawDialog(e engine.DialogCancel) {
	if id, ok := ss.asked[e.Target]; ok {
		delete(ss.asked, e.Target)
		ss.srv.c.cancelRequest(id)
	}
}

// toolName is the name of a call the Sink has seen. (actor)
func (ss *session) toolName(callID string) string {
	if c := ss.calls[callID]; c != nil {
		return c.name
	}
	return ""
}
