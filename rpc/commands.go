package rpc

import (
	"encoding/json"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// handler handles one command on the session actor.
type handler func(s *Server, c *command)

// handlers maps every command type of the protocol to its handler. A
// handler decodes its arguments, calls one verb of the session and encodes
// the answer: no decision of its own beyond argument shape and wire text.
// (A map literal, not init registration: commandName interns its keys.)
var handlers = map[string]handler{
	"prompt":                  (*Server).cmdPrompt,
	"abort":                   (*Server).cmdAbort,
	"abort_and_prompt":        (*Server).cmdAbortAndPrompt,
	"steer":                   (*Server).cmdSteer,
	"follow_up":               (*Server).cmdFollowUp,
	"get_state":               (*Server).cmdGetState,
	"get_messages":            (*Server).cmdGetMessages,
	"get_last_assistant_text": (*Server).cmdLastAssistantText,
	"set_session_name":        (*Server).cmdSetSessionName,
	"set_steering_mode":       modeSetter((*engine.Session).SetSteeringMode),
	"set_follow_up_mode":      modeSetter((*engine.Session).SetFollowUpMode),
	"set_interrupt_mode":      modeSetter((*engine.Session).SetInterruptMode),
	"extension_ui_response":   (*Server).ignore,
	"host_tool_result":        (*Server).cmdHostToolFrame,
	"host_tool_update":        (*Server).cmdHostToolFrame,
	"bash":                    (*Server).cmdBash,
	"abort_bash":              (*Server).cmdAbortBash,
	"set_auto_retry":          (*Server).cmdSetAutoRetry,
	"abort_retry":             (*Server).cmdAbortRetry,
	"set_thinking_level":      (*Server).cmdSetThinkingLevel,
	"cycle_thinking_level":    (*Server).cmdCycleThinkingLevel,
	"get_available_models":    (*Server).cmdGetAvailableModels,
	"set_model":               (*Server).cmdSetModel,
	"cycle_model":             (*Server).cmdCycleModel,
	"get_branch_messages":     (*Server).cmdGetBranchMessages,
	"get_fork_messages":       (*Server).cmdGetForkMessages,
	"get_session_stats":       (*Server).cmdGetSessionStats,
	"get_messages_page":       (*Server).cmdGetMessagesPage,
	"get_commands":            (*Server).cmdGetCommands,
	"get_available_commands":  (*Server).cmdGetAvailableCommands,
	"get_mcp_servers":         (*Server).cmdGetMCPServers,
	"new_session":             (*Server).cmdNewSession,
	"switch_session":          (*Server).cmdSwitchSession,
	"branch":                  (*Server).cmdBranch,
	"fork":                    (*Server).cmdFork,
	"clone":                   (*Server).cmdClone,
	"export_html":             (*Server).cmdExportHTML,
	"set_host_tools":          (*Server).cmdSetHostTools,
	// omp's commands this agent has no counterpart for: answered at once,
	// with the id, so omp's client does not wait out its timeout.
	"set_fast_mode":             (*Server).unsupported,
	"get_subagents":             (*Server).unsupported,
	"get_subagent_messages":     (*Server).unsupported,
	"set_subagent_subscription": (*Server).unsupported,
	"get_login_providers":       (*Server).unsupported,
	"login":                     (*Server).unsupported,
	"handoff":                   (*Server).unsupported,
	"set_todos":                 (*Server).cmdSetTodos,
	"compact":                   (*Server).cmdCompact,
	"set_auto_compaction":       (*Server).cmdSetAutoCompaction,
	"set_budget":                (*Server).cmdSetBudget, // ours: commands_budget.go
	"continue":                  (*Server).cmdContinue,  // ours
}

// decode reads the command's fields into v by the reading rule
// (jsonread.go).
func decode(c *command, v any) error {
	if err := readExact(c.line, v); err != nil {
		return errInvalid(c.typ, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

type imageContent struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

type promptArgs struct {
	Message           *string         `json:"message"`
	Images            []imageContent  `json:"images"`
	StreamingBehavior string          `json:"streamingBehavior"`
	OutputSchema      json.RawMessage `json:"outputSchema"` // ours: commands_budget.go
	// TraceParent is the host's W3C traceparent: the run's spans join its
	// trace when tracing is on (docs/automation.md).
	TraceParent string `json:"traceparent"`
}

func (a *promptArgs) check(c *command) error {
	if a.Message == nil {
		return errMustBe(c.typ, "message", "a string")
	}
	return nil
}

func images(in []imageContent) []engine.ContentBlock {
	out := make([]engine.ContentBlock, 0, len(in))
	for _, im := range in {
		out = append(out, engine.ContentBlock{Type: engine.BlockImage, Data: im.Data, MimeType: im.MimeType})
	}
	return out
}

func (s *Server) parsePrompt(c *command) (*promptArgs, bool) {
	var a promptArgs
	err := decode(c, &a)
	if err == nil {
		err = a.check(c)
	}
	if err != nil {
		s.fail(c, err)
		return nil, false
	}
	return &a, true
}

// cmdPrompt acknowledges at once; a failure to start comes as a second
// response with the same id, always after the success frame. The input
// behind the prompt waits (holdPassing) until the prompt has left its
// input steps: at once, or once an extension's input hook has answered,
// so a piped "prompt, prompt" keeps its order.
func (s *Server) cmdPrompt(c *command) {
	a, ok := s.parsePrompt(c)
	if !ok {
		return
	}
	schema, ok := s.outputSchema(c, a.OutputSchema)
	if !ok {
		return
	}
	s.ok(c, nil)
	opts := engine.PromptOptions{Images: images(a.Images), StreamingBehavior: a.StreamingBehavior, OutputSchema: schema,
		Failed: func(err error) { s.fail(c, err) }, Taken: c.later()}
	opts.TraceParent = a.TraceParent
	if err := s.sess.Prompt(*a.Message, opts); err != nil {
		s.fail(c, err)
	}
}

// cmdAbort answers once the aborted run has emitted its closing events;
// the input behind it waits until then (holdPassing).
func (s *Server) cmdAbort(c *command) {
	release := c.later()
	s.sess.Abort(func() {
		s.ok(c, nil)
		release()
	})
}

func (s *Server) cmdAbortAndPrompt(c *command) {
	a, ok := s.parsePrompt(c)
	if !ok {
		return
	}
	schema, ok := s.outputSchema(c, a.OutputSchema)
	if !ok {
		return
	}
	release := c.later()
	s.sess.Abort(func() {
		s.ok(c, nil)
		opts := engine.PromptOptions{Images: images(a.Images), OutputSchema: schema, Failed: func(err error) { s.fail(c, err) }, Taken: release}
		opts.TraceParent = a.TraceParent
		if err := s.sess.Prompt(*a.Message, opts); err != nil {
			s.fail(c, err)
		}
	})
}

func (s *Server) queueCmd(c *command, enqueue func(text string, images []engine.ContentBlock) error) {
	a, ok := s.parsePrompt(c)
	if !ok {
		return
	}
	if a.OutputSchema != nil && string(a.OutputSchema) != "null" {
		s.fail(c, engine.ErrOutputQueued)
		return
	}
	s.answer(c, nil, enqueue(*a.Message, images(a.Images)))
}

func (s *Server) cmdSteer(c *command)    { s.queueCmd(c, s.sess.Steer) }
func (s *Server) cmdFollowUp(c *command) { s.queueCmd(c, s.sess.FollowUp) }

func modeSetter(set func(*engine.Session, string) error) handler {
	return func(s *Server, c *command) {
		mode, ok := s.stringArg(c, "mode")
		if !ok {
			return
		}
		if err := set(s.sess, mode); err != nil {
			s.fail(c, errInvalidMode(c.typ, mode))
			return
		}
		s.ok(c, nil)
	}
}

func (s *Server) okJSON(c *command, v any) {
	data, err := engine.MarshalJSON(v)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, data)
}

func (s *Server) cmdGetState(c *command) {
	s.responseWith(c.from, c.id, quote(c.typ), true, s.sess.AppendStateJSON, "")
}

func (s *Server) cmdGetMessages(c *command) {
	msgs := s.sess.Messages()
	s.responseWith(c.from, c.id, quote(c.typ), true, func(b []byte) []byte {
		return append(engine.AppendMessages(append(b, `{"messages":`...), msgs), '}')
	}, "")
}

// cmdLastAssistantText answers {"text":...}, or {} when there is no text
// (the key absent, as the original sends it).
func (s *Server) cmdLastAssistantText(c *command) {
	text, ok := s.sess.LastAssistantText()
	if !ok {
		s.ok(c, []byte("{}"))
		return
	}
	s.okJSON(c, textData{text})
}

func (s *Server) cmdSetSessionName(c *command) {
	name, ok := s.stringArg(c, "name")
	if !ok {
		return
	}
	release := c.later()
	s.sess.SetSessionName(name, func(err error) {
		s.answer(c, nil, err)
		release()
	})
}

// answer answers c: its failure, or success with data (nil: no data key).
func (s *Server) answer(c *command, data []byte, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, data)
}

// stringArg decodes the command's required string field, answering the
// failure (with the id) when it is missing or not a string.
func (s *Server) stringArg(c *command, field string) (string, bool) {
	raw := member(c.line, field)
	var v string
	// null decodes to "" and passes, as it always has.
	if raw == nil || json.Unmarshal(raw, &v) != nil {
		s.fail(c, errMustBe(c.typ, field, "a string"))
		return "", false
	}
	return v, true
}

// ignore swallows frames that never get a response (UI responses with no
// pending dialog).
func (s *Server) ignore(c *command) {}

// cmdHostToolFrame handles a host tool frame that resolved no pending call
// (see pendingTable.resolve): a well-formed one is a late or unknown reply
// and is ignored; a malformed one falls through to "Unknown command", as
// in the original.
func (s *Server) cmdHostToolFrame(c *command) {
	if !wellFormedReply(c) {
		s.unknown(c)
	}
}

// wellFormedReply reports whether a reply frame has the fields its type
// requires: a string id and, for host tool frames, a content array.
func wellFormedReply(c *command) bool {
	var a struct {
		ID     *string `json:"id"`
		Result *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"result"`
		PartialResult *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"partialResult"`
	}
	if readExact(c.line, &a) != nil || a.ID == nil {
		return false
	}
	switch c.typ {
	case "host_tool_result":
		return a.Result != nil && a.Result.Content != nil
	case "host_tool_update":
		return a.PartialResult != nil && a.PartialResult.Content != nil
	}
	return true
}

// unsupported answers a command of the family that this agent does not
// offer (docs/compat.md), with its id.
func (s *Server) unsupported(c *command) { s.fail(c, errUnsupported) }

// cmdBash runs the command in the background; its response comes when it
// ends, so commands sent meanwhile (abort_bash, get_state) are answered
// first. The response is queued behind the input already read, like a
// command: an abort_bash that stopped the command was read (and queued)
// before the command could end, so its answer always comes first.
func (s *Server) cmdBash(c *command) {
	command, ok := s.stringArg(c, "command")
	if !ok {
		return
	}
	s.bg.Add(1)
	s.sess.ExecuteBash(command, func(res engine.BashResult, err error) {
		s.in.push(inboxItem{pass: true, fn: func(func()) {
			defer s.bg.Done()
			if err != nil {
				s.fail(c, err)
				return
			}
			s.okJSON(c, res)
		}})
	})
}

// cmdAbortBash answers at once; the cancellation itself happened when the
// line was read (see dispatch).
func (s *Server) cmdAbortBash(c *command) {
	s.sess.AbortBash()
	s.ok(c, nil)
}
