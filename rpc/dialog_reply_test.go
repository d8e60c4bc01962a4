package rpc

import (
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// DialogReply reads an extension_ui_response as the Server does; other
// frames and ids that are not strings are not replies.
func TestDialogReply(t *testing.T) {
	for _, tc := range []struct {
		line  string
		id    string
		reply engine.DialogReply
		ok    bool
	}{
		{`{"type":"extension_ui_response","id":"ui_1","value":"Postgres"}`, "ui_1", engine.DialogReply{Value: "Postgres", HasValue: true}, true},
		{`{"type":"extension_ui_response","id":"ui_2","confirmed":true}`, "ui_2", engine.DialogReply{Confirmed: true}, true},
		{`{"type":"extension_ui_response","id":"ui_3","confirmed":true,"cancelled":1}`, "ui_3", engine.DialogReply{Cancelled: true}, true},
		{`{"type":"extension_ui_response","id":"ui_4","value":7}`, "ui_4", engine.DialogReply{Value: "7", HasValue: true}, true},
		{`{"type":"extension_ui_response","id":5,"confirmed":true}`, "", engine.DialogReply{}, false},
		{`{"type":"host_tool_result","id":"host_1","result":{"content":[]}}`, "", engine.DialogReply{}, false},
		{`not json`, "", engine.DialogReply{}, false},
	} {
		id, reply, ok := DialogReply([]byte(tc.line))
		if id != tc.id || reply != tc.reply || ok != tc.ok {
			t.Errorf("%s: got %q %+v %v, want %q %+v %v", tc.line, id, reply, ok, tc.id, tc.reply, tc.ok)
		}
	}
}
