package engine

import (
	"context"
	"errors"
	"fmt"
)

// Host tools (rpc-protocol.md §7): tools the host owns and runs. A call goes
// out as a host_tool_call frame; host_tool_update frames become
// tool_execution_update; the host_tool_result ends it. Abort withdraws the
// call with a host_tool_cancel frame and fails it at once.

// HostToolDef is a tool the host registers with set_host_tools.
type HostToolDef struct {
	Name        string
	Label       string
	Description string
	Parameters  []byte // JSON Schema object
	Hidden      bool   // registered but not offered to the model
}

// newHostTool returns the Tool that runs def on the host through the
// session's HostLink. Host tools are shared: several calls may be
// outstanding at once.
func (s *Session) newHostTool(def HostToolDef) Tool { return &hostTool{s: s, def: def} }

type hostTool struct {
	s   *Session
	def HostToolDef
}

func (t *hostTool) Name() string             { return t.def.Name }
func (t *hostTool) Description() string      { return t.def.Description }
func (t *hostTool) Schema() []byte           { return t.def.Parameters }
func (t *hostTool) Concurrency() Concurrency { return Shared }

// IsHostTool reports whether t is a host tool (set_host_tools replaces
// those and keeps the others).
func IsHostTool(t Tool) bool {
	_, ok := t.(*hostTool)
	return ok
}

// HostToolCall is the frame that asks the host to run a tool.
type HostToolCall struct {
	ID, ToolCallID, ToolName string
	Arguments                []byte
}

// HostToolCancel withdraws a host tool call.
type HostToolCancel struct{ ID, TargetID string }

// EventType implements Event.
func (HostToolCall) EventType() string { return "host_tool_call" }

// EventType implements Event.
func (HostToolCancel) EventType() string { return "host_tool_cancel" }

// AppendJSON implements Event.
func (e HostToolCall) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "host_tool_call"), "id", e.ID)
	dst = appendStringField(dst, "toolCallId", e.ToolCallID)
	dst = appendStringField(dst, "toolName", e.ToolName)
	dst = appendRawField(dst, "arguments", orEmptyObject(e.Arguments))
	return append(dst, '}')
}

// AppendJSON implements Event.
func (e HostToolCancel) AppendJSON(dst []byte) []byte {
	dst = appendStringField(appendType(dst, "host_tool_cancel"), "id", e.ID)
	dst = appendStringField(dst, "targetId", e.TargetID)
	return append(dst, '}')
}

func (t *hostTool) aborted() ToolResult {
	return errorResult(fmt.Sprintf("Host tool %q was aborted", t.def.Name))
}

// Run implements Tool.
func (t *hostTool) Run(ctx context.Context, call ToolCall, update func(ToolResult)) (ToolResult, error) {
	if ctx.Err() != nil {
		return t.aborted(), nil
	}
	res, err := askHost(t.s, ctx, call.order, ActHostCall, "host",
		func(id string) Event {
			return HostToolCall{ID: id, ToolCallID: call.ID, ToolName: call.Name, Arguments: call.Arguments}
		},
		func(id string) Event { return HostToolCancel{ID: t.s.cfg.IDs.NewID("host_cancel"), TargetID: id} },
		func(ctx context.Context, id string, send func()) (ToolResult, error) {
			return t.s.cfg.Host.AwaitTool(ctx, id, send, update)
		})
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, ErrHostGone):
		return errorResult(ErrHostGone.Error()), nil
	default: // cancelled: abort, a steering interrupt
		return t.aborted(), nil
	}
}
