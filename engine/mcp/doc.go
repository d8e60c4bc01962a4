// Package mcp is xcsh's Model Context Protocol client, on the official Go
// SDK (github.com/modelcontextprotocol/go-sdk). It reads the servers a
// user already configured for other agents (<agentDir>/mcp.json,
// .xcsh/mcp.json, the de-facto project file .mcp.json, --mcp-config) and
// those the program is given (Options.Servers: an ACP client's mcpServers),
// starts them in the background (stdio, streamable HTTP, SSE) and offers
// their tools to the model as mcp__<server>__<tool>, one engine tool group
// per server.
//
// # Lifecycle
//
// New reads the configuration; Start connects every server on its own
// goroutine, so the session's ready frame never waits for a server. A
// connected server's tools are installed with Session.SetToolGroup on the
// executor. Before each model call the run asks the Manager to settle
// (engine.ToolSource): it waits, bounded, for servers still starting and
// re-reads the tool list of a server that announced a change
// (notifications/tools/list_changed) or that answered a call since (a
// server changes its list while it handles a call, and its notification
// may still be queued when the result arrives), so the call offers the
// tools as they are. Re-reads are coalesced (server.refreshLoop): one
// tools/list under way per server, at most one more queued, whatever the
// number of notifications.
//
// A call runs under the engine's cancellation (abort sends MCP's
// notifications/cancelled, through the SDK) and a per-call timeout. A
// server that exits during a call, or does not answer within the timeout
// (it is then stopped), fails the call with an error the model sees; the
// next call restarts it, at most once a minute on the engine's clock. An
// elicitation request becomes a UI dialog (extension_ui_request in RPC
// mode) through the session.
//
// # A project's servers
//
// The servers of the project's own files (.xcsh/mcp.json and .mcp.json in
// Cwd) are marked Project. When Options.Admit is set (cmd/xcsh sets it
// under a sandbox: the model may have written those files), it decides
// about them once, after the session is ready and before any of them
// starts (it may ask the user through the Host): a refused one is listed
// disabled with the reason and never starts, an admitted one may have its
// command wrapped (to start it confined). The user's servers (the agent
// dir's, --mcp-config's, Options.Servers) start at once, as before.
//
// # Secrets
//
// Values of headers, long values of env and the values of the variables
// an entry names (${VAR}, $VAR; not the layout variables such as HOME and
// PATH) are secrets: they go to the server and nowhere else. Every text
// this package reports (status errors, log lines, tool results) passes
// the redactor, which replaces them with ***. The variables that hold
// them (those named, and any whose value is a secret) are removed from
// every other child's environment through engine/childenv, the rule that
// keeps the provider keys from the model's commands; a stdio server gets
// its own back. Child processes get their environment from childEnv, the
// one function that builds it.
package mcp
