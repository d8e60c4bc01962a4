package engine

import (
	"context"
	"strings"
)

// Hooks is how something outside the engine watches and changes what a
// session does at fixed points of its life (the extension host is the one
// implementation; Config.Hooks wires it). The engine defines it, as it
// defines its other ports, and calls it at the points named by the Hook
// constants; it never knows what answers.
//
// Has is asked before anything is built for a hook, so a hook nobody
// handles costs one call: the session takes its default path, with no
// copy, encoding or goroutine made for it. Observe is called on the
// executor and must not block. Every other method may block (it may wait
// for a process) and is only ever called off the executor, on a run, tool
// or verb goroutine, with a context that ends when the work it belongs to
// is aborted; an implementation bounds its own waiting and answers the
// default (the zero result) on any failure of its own.
type Hooks interface {
	// Has reports whether some handler wants h.
	Has(h Hook) bool
	// Observe tells the handlers about a change of the session that is
	// not an Event (a session started or ended, a model or thinking level
	// selected). It is called on the executor and must not block.
	Observe(ev SessionEvent)
	// Input sees a prompt's text before anything else is done with it;
	// it may replace it or take it over (no model call).
	Input(ctx context.Context, in InputHook) InputResult
	// BeforeAgentStart runs once a prompt is accepted, before agent_start:
	// it may add a message after the prompt and replace the system prompt
	// for this run.
	BeforeAgentStart(ctx context.Context, in AgentStartHook) AgentStartResult
	// Context may replace the messages of one model call (what is sent,
	// never the record); nil keeps them.
	Context(ctx context.Context, msgs []Message) []Message
	// BeforeProviderRequest may change the request of one model call (its
	// system prompt and messages) just before it is sent.
	BeforeProviderRequest(ctx context.Context, req *Request)
	// ToolCall runs after a call's arguments were validated, before it
	// runs: it may block the call or rewrite its arguments.
	ToolCall(ctx context.Context, call ToolCallHook) ToolCallResult
	// ToolResult may rewrite a call's result before the model sees it.
	ToolResult(ctx context.Context, call ToolCallHook, res ToolResult) ToolResult
	// UserBash may supply the result of the user's own shell command (the
	// RPC bash command) instead of running it; nil runs it.
	UserBash(ctx context.Context, command string) *BashResult
	// BeforeSwitch may cancel a session change (new, resume: HookBeforeSwitch;
	// branch, fork, clone: HookBeforeFork).
	BeforeSwitch(ctx context.Context, sw SwitchHook) (cancel bool)
	// RunCommand runs the slash command name (one the handlers list, with
	// Source CommandExtension, through a CommandSource in Config.Commands)
	// with the prompt's arguments, instead of a model call. It may take as
	// long as it needs; ctx ends when the session shuts down.
	RunCommand(ctx context.Context, name, args string)
}

// Hook names a point of the session's life that Hooks may handle.
type Hook uint8

// The hook points.
const (
	HookInput Hook = iota + 1
	HookBeforeAgentStart
	HookContext
	HookBeforeProviderRequest
	HookToolCall
	HookToolResult
	HookUserBash
	HookBeforeSwitch
	HookBeforeFork
	HookCommands
)

// InputHook is a prompt's text as sent, with where it came from ("rpc" for
// a host's prompt, "extension" for sendUserMessage).
type InputHook struct {
	Text   string
	Images []ContentBlock
	Source string
}

// The actions of an InputResult.
const (
	InputContinue  = ""          // go on with the text as it is
	InputTransform = "transform" // go on with Text (and Images when not nil)
	InputHandled   = "handled"   // stop: no run, no message
)

// InputResult is what the Input hook decided.
type InputResult struct {
	Action string
	Text   string
	Images []ContentBlock
}

// AgentStartHook is the accepted prompt and the system prompt the run
// would use.
type AgentStartHook struct {
	Prompt       string
	Images       []ContentBlock
	SystemPrompt string
}

// AgentStartResult may add custom messages after the prompt (recorded and
// sent) and replace the system prompt for the run ("" keeps it).
type AgentStartResult struct {
	Messages     []*CustomMessage
	SystemPrompt string
}

// ToolCallHook is one tool call as the model made it (Input: the JSON
// arguments, after any rewrite by an earlier hook).
type ToolCallHook struct {
	ID, Name string
	Input    []byte
}

// ToolCallResult blocks the call (Reason is the error the model sees; ""
// for the default) or, when Input is not nil, replaces its arguments
// (not validated again).
type ToolCallResult struct {
	Block  bool
	Reason string
	Input  []byte
}

// BlockedMessage is the error result of a call a hook blocked without a
// reason.
const BlockedMessage = "Tool execution was blocked by an extension"

// SwitchHook describes a session change about to happen. Reason is "new"
// or "resume" (HookBeforeSwitch) or "fork" or "clone" (HookBeforeFork);
// Target is the file resumed, EntryID the entry branched from.
type SwitchHook struct {
	Reason, Target, EntryID string
}

// SessionEvent is a change Hooks.Observe is told about. Kind says which,
// and which fields are set.
type SessionEvent struct {
	Kind string // one of the Session* kinds below
	// SessionStart: Reason is "startup", "new", "resume", "fork" or
	// "clone"; PreviousFile the session file replaced ("" for none).
	Reason, PreviousFile string
	// ModelSelect: the model selected, the one before (nil: none), and
	// Source: "set", "cycle" or "restore".
	Model, Previous *Model
	Source          string
	// ThinkingSelect: the level in force and the one before.
	Level, PreviousLevel ThinkingLevel
}

// The kinds of SessionEvent, named as the family's extension events.
const (
	SessionStart    = "session_start"
	SessionShutdown = "session_shutdown"
	ModelSelect     = "model_select"
	ThinkingSelect  = "thinking_level_select"
)

// ErrSwitchCancelled: a hook cancelled a session change (the fronts answer
// cancelled:true, as the original does).
var ErrSwitchCancelled = errorString("cancelled by an extension")

type errorString string

func (e errorString) Error() string { return string(e) }

// CommandQueueError: a steering or follow-up message names a slash command,
// which runs at once or not at all.
type CommandQueueError struct{ Name string }

func (e *CommandQueueError) Error() string {
	return `Extension command "/` + e.Name + `" cannot be queued. Use prompt() or execute the command when not streaming.`
}

// has reports whether the session's hooks want h (false without hooks).
func (s *Session) has(h Hook) bool { return s.cfg.Hooks != nil && s.cfg.Hooks.Has(h) }

// observe tells the hooks about ev. (actor)
func (s *Session) observe(ev SessionEvent) {
	if s.cfg.Hooks != nil {
		s.cfg.Hooks.Observe(ev)
	}
}

// extensionCommand finds the extension command a prompt's text names
// ("/name" or "/name args"), as Commands lists it (first source wins).
// ok is false when the text names none. (actor)
func (s *Session) extensionCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") || !s.has(HookCommands) {
		return "", "", false
	}
	name, args = splitCommand(text[1:])
	if name == "" {
		return "", "", false
	}
	for _, c := range s.Commands() {
		if c.Name == name {
			return name, strings.TrimSpace(args), c.Source == CommandExtension
		}
	}
	return "", "", false
}

// runExtensionCommand is the first input step (commands.go): a prompt
// naming an extension command runs it, on its own goroutine (cancelled
// when the session shuts down: ActCommand), and is consumed; done, if
// set, is called on the executor once the command has finished. (actor)
func (s *Session) runExtensionCommand(in Input, done func()) (Input, bool) {
	name, args, ok := s.extensionCommand(in.Text)
	if !ok {
		return in, false
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	remove := s.acts.add(ActCommand, cancel)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel(nil)
		defer remove()
		s.cfg.Hooks.RunCommand(ctx, name, args)
		if done != nil {
			s.Post(done)
		}
	}()
	return in, true
}
