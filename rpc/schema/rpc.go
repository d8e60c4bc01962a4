package schema

import (
	"reflect"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/rpc"
)

// frame is one frame the agent writes that is not a response: its
// definition's name, a value of the engine's event (whose EventType is
// the frame's type), a UI request's method, and its shape.
type frame struct {
	Name   string
	Event  engine.Event
	Method string
	Shape  any
}

// events are the frames of the engine's Sink, in the order docs/rpc.md
// lists them.
var events = []frame{
	{"AgentStartEvent", engine.AgentStart{}, "", agentStart{}},
	{"AgentEndEvent", engine.AgentEnd{}, "", agentEnd{}},
	{"TurnStartEvent", engine.TurnStart{}, "", turnStart{}},
	{"TurnEndEvent", engine.TurnEnd{}, "", turnEnd{}},
	{"MessageStartEvent", engine.MessageStart{}, "", messageStart{}},
	{"MessageUpdateEvent", engine.MessageUpdate{}, "", messageUpdate{}},
	{"MessageEndEvent", engine.MessageEnd{}, "", messageEnd{}},
	{"ToolExecutionStartEvent", engine.ToolExecutionStart{}, "", toolExecutionStart{}},
	{"ToolExecutionUpdateEvent", engine.ToolExecutionUpdate{}, "", toolExecutionUpdate{}},
	{"ToolExecutionEndEvent", engine.ToolExecutionEnd{}, "", toolExecutionEnd{}},
	{"QueueUpdateEvent", engine.QueueUpdate{}, "", queueUpdate{}},
	{"AutoRetryStartEvent", engine.AutoRetryStart{}, "", autoRetryStart{}},
	{"AutoRetryEndEvent", engine.AutoRetryEnd{}, "", autoRetryEnd{}},
	{"AutoCompactionStartEvent", engine.AutoCompactionStart{}, "", autoCompactionStart{}},
	{"AutoCompactionEndEvent", engine.AutoCompactionEnd{}, "", autoCompactionEnd{}},
	{"OutputSchemaRetryEvent", engine.OutputSchemaRetry{}, "", outputSchemaRetry{}},
	{"OutputSchemaEndEvent", engine.OutputSchemaEnd{}, "", outputSchemaEnd{}},
	{"TodoReminderEvent", engine.TodoReminder{}, "", todoReminder{}},
	{"TodoAutoClearEvent", engine.TodoAutoClear{}, "", todoAutoClear{}},
	{"TtsrTriggeredEvent", engine.TTSRTriggered{}, "", ttsrTriggered{}},
	{"ExtensionErrorEvent", engine.ExtensionError{}, "", extensionError{}},
	{"HostToolCall", engine.HostToolCall{}, "", hostToolCall{}},
	{"HostToolCancel", engine.HostToolCancel{}, "", hostToolCancel{}},
}

// uiRequests are the extension_ui_request frames, by method.
var uiRequests = []frame{
	{"UiSelectRequest", engine.DialogOpen{}, engine.DialogSelect, uiSelect{}},
	{"UiConfirmRequest", engine.DialogOpen{}, engine.DialogConfirm, uiConfirm{}},
	{"UiInputRequest", engine.DialogOpen{}, engine.DialogInput, uiInput{}},
	{"UiEditorRequest", engine.DialogOpen{}, engine.DialogEditor, uiEditor{}},
	{"UiCancelRequest", engine.DialogCancel{}, "cancel", uiCancel{}},
	{"UiNotifyRequest", engine.Notify{}, "notify", uiNotify{}},
	{"UiSetStatusRequest", engine.UIStatus{}, "setStatus", uiSetStatus{}},
	{"UiSetWidgetRequest", engine.UIWidget{}, "setWidget", uiSetWidget{}},
	{"UiSetTitleRequest", engine.SetTitle{}, "setTitle", uiSetTitle{}},
	{"UiSetEditorTextRequest", engine.UIEditorText{}, "set_editor_text", uiSetEditorText{}},
}

// pascal is a wire name in Pascal case: get_state -> GetState.
func pascal(s string) string {
	var b strings.Builder
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '/' || r == '.' }) {
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// idProp is a command's id: any JSON value, echoed as sent.
func idProp() *Schema {
	return &Schema{Ref: "#/$defs/RequestId"}
}

// withType prepends "type" (and more leading keys) to s's properties, all
// required.
func withType(s *Schema, lead ...Prop) *Schema {
	props := append(Props{}, lead...)
	var req []string
	for _, p := range lead {
		req = append(req, p.Name)
	}
	if s.Properties != nil {
		props = append(props, *s.Properties...)
	}
	s.Properties = &props
	s.Required = append(req, s.Required...)
	return s
}

// frames defines the frames of the rpc protocol; extra keys (the
// server's envelope) are added to each. It returns the names of the
// inputs, the responses and the other frames.
func (b *builder) frames(extra Props, optExtra ...string) (inputs, replies, responses, others []string) {
	b.define("RequestId", anyValue("A command's id: any JSON value (a string or a number as a rule), echoed in its response as sent."))
	addExtra := b.extra(extra, optExtra...)
	inputs, replies, responses = b.commands(rpc.Commands(), addExtra)
	b.define("ErrorResponse", addExtra(object("A failure: of a known command (with its id), an unknown one (without), or a line that is not a command (command \"parse\").",
		Props{{"id", idProp()}, {"type", constant("response")}, {"command", anyValue("The command's type as sent; absent when it had none.")},
			{"success", &Schema{Const: []byte("false")}}, {"error", str("What went wrong, in words.")}, {"code", ref("ErrorCode")}},
		"id", "command", "code")))
	responses = append(responses, "ErrorResponse")

	b.define("ReadyFrame", addExtra(object("The first frame: the agent is ready for commands.",
		Props{{"type", constant("ready")}, {"version", str("The agent's version.")},
			{"schemaHash", str("The hash of the protocol's schema (xcsh schema): a host compares it with the one it was built against.")}})))
	others = append(others, "ReadyFrame")
	for _, f := range events {
		t := reflect.TypeOf(f.Shape)
		s := withType(b.r.fields(t, docOf(t)), Prop{"type", constant(f.Event.EventType())})
		b.define(f.Name, addExtra(s))
		others = append(others, f.Name)
	}
	var ui []*Schema
	for _, f := range uiRequests {
		t := reflect.TypeOf(f.Shape)
		s := withType(b.r.fields(t, docOf(t)), Prop{"type", constant(f.Event.EventType())},
			Prop{"id", str("The request's id; a dialog's answer carries it.")}, Prop{"method", constant(f.Method)})
		b.define(f.Name, addExtra(s))
		ui = append(ui, ref(f.Name))
	}
	b.define("ExtensionUiRequest", &Schema{Description: "A request to the host's user interface, by method: dialogs (select, confirm, input, editor) are answered with extension_ui_response; the others are fire-and-forget.", OneOf: ui})
	others = append(others, "ExtensionUiRequest")
	return inputs, replies, responses, others
}

func refs(names ...[]string) []*Schema {
	var out []*Schema
	for _, ns := range names {
		for _, n := range ns {
			out = append(out, ref(n))
		}
	}
	return out
}

func rpcSchema() (*Schema, error) {
	b := newBuilder()
	inputs, replies, responses, others := b.frames(nil)
	b.unions(inputs, replies, responses, others)
	b.typeSets()
	return b.root("rpc.json", "xcsh RPC protocol",
		"The frames of xcsh --mode rpc: JSON objects, one per line. A host writes an RpcInput; the agent writes an RpcOutput.",
		&Schema{AnyOf: []*Schema{ref("RpcInput"), ref("RpcOutput")}}, "CommandType", "FrameType", "UiMethod")
}

// typeSets defines the closed sets of the discriminators, for a host that
// switches on them: every command's type, every frame's type the agent
// writes, every extension UI method.
func (b *builder) typeSets() {
	var cmds []string
	for _, c := range rpc.Commands() {
		cmds = append(cmds, c.Type)
	}
	b.define("CommandType", enum("The type of every line a host may write.", cmds...))
	frames := []string{"ready", "response"}
	for _, f := range events {
		frames = append(frames, f.Event.EventType())
	}
	frames = append(frames, uiRequests[0].Event.EventType())
	b.define("FrameType", enum("The type of every frame the agent writes.", frames...))
	var methods []string
	for _, f := range uiRequests {
		methods = append(methods, f.Method)
	}
	b.define("UiMethod", enum("The method of every extension_ui_request.", methods...))
}

// unions defines the unions hosts type against.
func (b *builder) unions(inputs, replies, responses, others []string) {
	b.define("RpcCommand", &Schema{Description: "A command: what a host sends that the agent answers.", OneOf: refs(inputs)})
	b.define("RpcInput", &Schema{Description: "Any line a host writes: a command, or a reply to a request of the agent's.", OneOf: refs([]string{"RpcCommand"}, replies)})
	b.define("RpcResponse", &Schema{Description: "The answer to a command.", OneOf: refs(responses)})
	b.define("AgentEvent", &Schema{Description: "Every frame the agent writes that is not a response: events, host tool calls and extension UI requests.", OneOf: refs(others)})
	b.define("RpcOutput", &Schema{Description: "Any line the agent writes.", OneOf: refs([]string{"RpcResponse", "AgentEvent"})})
}

// extra returns a function that adds the keys extra (all required but
// the optional ones) to an object's properties: the server's envelope.
func (b *builder) extra(extra Props, optExtra ...string) func(*Schema) *Schema {
	return func(s *Schema) *Schema {
		if len(extra) == 0 {
			return s
		}
		props := append(*s.Properties, extra...)
		s.Properties = &props
		opt := map[string]bool{}
		for _, o := range optExtra {
			opt[o] = true
		}
		for _, p := range extra {
			if !opt[p.Name] {
				s.Required = append(s.Required, p.Name)
			}
		}
		return s
	}
}

// commands defines each command of list, its success response and, for a
// reply to a request of ours, the reply; addExtra completes each.
func (b *builder) commands(list []rpc.CommandWire, addExtra func(*Schema) *Schema) (inputs, replies, responses []string) {
	argsOf := func(v any) *Schema {
		if v == nil {
			return object("", nil)
		}
		t := reflect.TypeOf(v)
		return b.r.fields(t, docOf(t))
	}
	for _, c := range list {
		name := pascal(c.Type)
		s := withType(argsOf(c.Args), Prop{"type", constant(c.Type)})
		// id is optional and comes first, as hosts write it; a reply's is
		// its own (the request's), required.
		if s.Properties.Get("id") == nil {
			props := append(Props{{"id", idProp()}}, *s.Properties...)
			s.Properties = &props
		}
		s.Description = c.Doc
		if c.Reply {
			name = pascal(c.Type)
			if c.Type == "extension_ui_response" {
				name = "ExtensionUiResponse"
			}
			b.define(name, addExtra(s))
			replies = append(replies, name)
			continue
		}
		b.define(name+"Command", addExtra(s))
		inputs = append(inputs, name+"Command")
		if c.Unsupported {
			continue
		}
		resp := Props{{"id", idProp()}, {"type", constant("response")}, {"command", constant(c.Type)}, {"success", &Schema{Const: []byte("true")}}}
		opt := []string{"id"}
		if c.Data != nil {
			data := b.typeOf(c.Data)
			if c.NullData {
				data = &Schema{AnyOf: []*Schema{data, {Type: "null"}}}
			}
			resp = append(resp, Prop{"data", data})
		}
		b.define(name+"Response", addExtra(object("The success of "+c.Type+".", resp, opt...)))
		responses = append(responses, name+"Response")
	}
	return inputs, replies, responses
}
