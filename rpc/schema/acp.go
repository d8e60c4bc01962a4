package schema

import (
	"reflect"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/rpc/acp"
)

// acpSchema describes our extensions of ACP: the _xcsh methods and
// notifications (JSON-RPC 2.0 requests and notifications, by method) and
// the _meta.xcsh objects of initialize and session/list. ACP's own types
// are ACP's schema's; where ours carry one it is left open here.
func acpSchema() (*Schema, error) {
	b := newBuilder()
	for _, t := range []any{sdk.SessionConfigOption{}, sdk.SessionModeState{}} {
		name := "Acp" + reflect.TypeOf(t).Name()
		b.define(name, anyValue("ACP's "+reflect.TypeOf(t).Name()+", as the ACP schema defines it."))
		b.r.shapes[reflect.TypeOf(t)] = name
	}
	var methods []*Schema
	for _, m := range acp.Extensions() {
		name := pascal(m.Method[len("_xcsh/"):])
		params := b.typeOf(m.Params)
		props := Props{{"jsonrpc", constant("2.0")}}
		if !m.Notification {
			props = append(props, Prop{"id", anyValue("The JSON-RPC request id.")})
		}
		props = append(props, Prop{"method", constant(m.Method)}, Prop{"params", params})
		kind := "Request"
		if m.Notification {
			kind = "Notification"
		}
		b.define(name+kind, object(m.Doc, props))
		methods = append(methods, ref(name+kind))
		if m.Result != nil {
			b.define(name+"Result", object("The result of "+m.Method+".", Props{
				{"jsonrpc", constant("2.0")}, {"id", anyValue("The request's id.")}, {"result", b.typeOf(m.Result)}}))
			methods = append(methods, ref(name+"Result"))
		}
	}
	b.typeOf(acp.InitializeMeta{})
	b.typeOf(acp.LiveMeta{})
	b.define("XcshMessage", &Schema{Description: "Any of our _xcsh requests, notifications and results.", OneOf: methods})
	return b.root("acp-ext.json", "xcsh's extensions of ACP",
		"The _xcsh methods and notifications xcsh adds to the Agent Client Protocol (--mode acp, and the ACP listener of xcsh serve), and the _meta.xcsh objects: InitializeMeta (initialize's result) and LiveMeta (session/list's sessions).",
		ref("XcshMessage"), "InitializeMeta", "LiveMeta")
}
