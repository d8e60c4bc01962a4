package rpc

import (
	"encoding/json"

	"github.com/xcsh-go/xcsh/engine"
)

// The host's side of host tools read by the Server's own rule, for a
// front that speaks this protocol for a session it does not run (the
// durable front of engine/durable, wired by cmd/xcsh): a durable session
// hears its host as an in-process one does.

// HostToolDefs reads the tools of a set_host_tools command line.
func HostToolDefs(line []byte) ([]engine.HostToolDef, error) {
	raw := member(line, "tools")
	var items []json.RawMessage
	if raw == nil || json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, errMustBe("set_host_tools", "tools", "an array")
	}
	defs := make([]engine.HostToolDef, 0, len(items))
	for _, it := range items {
		var d struct {
			Name        *string         `json:"name"`
			Label       *string         `json:"label"`
			Description *string         `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Hidden      json.RawMessage `json:"hidden"`
		}
		_ = readExact(it, &d)
		defs = append(defs, engine.HostToolDef{Name: str(d.Name), Label: str(d.Label), Description: str(d.Description),
			Parameters: compactRawValue(d.Parameters), Hidden: string(d.Hidden) == "true"})
	}
	return defs, nil
}

// HostToolReply reads a host_tool_result (final) or host_tool_update
// frame: the request's id and the result, or the partial result. ok is
// false for any other frame and for a malformed one (the Server answers
// those as commands).
func HostToolReply(line []byte) (id string, res engine.ToolResult, final, ok bool) {
	var h struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &h) != nil {
		return "", engine.ToolResult{}, false, false
	}
	final, isReply := replyFrames[h.Type]
	c := &command{line: line, typ: h.Type}
	if !isReply || h.Type == "extension_ui_response" || json.Unmarshal(h.ID, &id) != nil || !wellFormedReply(c) {
		return "", engine.ToolResult{}, false, false
	}
	if final {
		return id, hostToolResult(line), true, true
	}
	res, ok = hostToolUpdate(line)
	return id, res, false, ok
}

// DialogReply reads an extension_ui_response frame: the dialog's id and
// the answer, read by key presence as the Server reads it (dialogReply).
// ok is false for any other frame and for one with no string id (the
// Server ignores those).
func DialogReply(line []byte) (id string, reply engine.DialogReply, ok bool) {
	var h struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &h) != nil || h.Type != "extension_ui_response" || json.Unmarshal(h.ID, &id) != nil {
		return "", engine.DialogReply{}, false
	}
	return id, dialogReply(line), true
}
