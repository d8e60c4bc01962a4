package schema

import "github.com/xcsh-go/xcsh/engine/extension"

// extensionsSchema describes the extension protocol (engine/extension,
// docs/extensions.md): JSON-RPC 2.0 over an extension's stdio, every
// method name the host sends and serves, as closed sets. The params of
// each are docs/extensions.md's; this schema names the methods, not yet
// their params (they are open objects here).
func extensionsSchema() (*Schema, error) {
	b := newBuilder()
	to, from := extension.Methods()
	b.define("HostMethod", enum("A method the host sends an extension: an event or hook it subscribed to, the lifecycle's, a tool or command to run.", to...))
	b.define("ExtensionMethod", enum("A method an extension may call or notify.", from...))
	msg := func(name, desc, method string) {
		b.define(name, &Schema{Description: desc, Type: "object", Required: []string{"jsonrpc", "method"},
			Properties: &Props{{"jsonrpc", constant("2.0")}, {"id", anyValue("The request's id; absent on a notification.")},
				{"method", ref(method)}, {"params", anyValue("The method's params (docs/extensions.md).")}}})
	}
	msg("HostMessage", "A request or notification from the host to an extension.", "HostMethod")
	msg("ExtensionMessage", "A request or notification from an extension to the host.", "ExtensionMethod")
	b.define("Response", &Schema{Description: "The answer to a request, either way.", Type: "object", Required: []string{"jsonrpc", "id"},
		Properties: &Props{{"jsonrpc", constant("2.0")}, {"id", anyValue("")}, {"result", anyValue("")},
			{"error", object("", Props{{"code", &Schema{Type: "integer"}}, {"message", str("")}, {"data", anyValue("")}}, "data")}}})
	return b.root("extensions.json", "xcsh extension protocol",
		"JSON-RPC 2.0 between xcsh and an extension process, one message per line (docs/extensions.md).",
		&Schema{AnyOf: []*Schema{ref("HostMessage"), ref("ExtensionMessage"), ref("Response")}})
}
