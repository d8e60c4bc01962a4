// Package schema generates the JSON Schema (2020-12) of xcsh's protocols
// from the Go types that encode them, and their TypeScript and Python
// types from that schema: `xcsh schema`.
//
// One source of truth: commands and their answers come from rpc's
// command table (rpc.Commands, whose types the handlers decode into and
// answer with), messages and content blocks from the rows the engine's
// message codec is generated from (engine.WireObjects), frames whose
// encoding the engine writes by hand from their shapes here (shapes.go),
// each held to its encoder by a test, and descriptions from the Go doc
// comments (docs_gen.go, written by go generate). Reflection reads the
// encoding/json tags; a type that encodes itself and has no shape is
// refused rather than guessed.
//
// The protocols: "rpc" (`--mode rpc`: commands, responses, events, host
// tool and extension UI frames), "server" (`xcsh serve`: the same frames
// in its envelope, and its own commands and frames), "acp-ext" (our
// `_xcsh` extensions of ACP) and "extensions" (the extension host's
// JSON-RPC methods). Version is the protocol's version; Hash the short
// hash of the rpc schema the ready frame carries.
package schema

//go:generate go run ./internal/docgen/cmd/docgen
//go:generate go run ./internal/hashgen
