package mcp

import (
	"context"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// BenchmarkMCPToolRoundTrip: one tools/call over stdio to a local server
// (the test server, this binary) and its result mapped to the engine's,
// through the Tool the model calls.
func BenchmarkMCPToolRoundTrip(b *testing.B) {
	m, _, _ := startManager(b, engine.DeterministicEpoch, "")
	tl := &tool{s: m.servers[0], name: "echo", full: "mcp__t__echo"}
	call := engine.ToolCall{Arguments: []byte(`{"text":"ping"}`)}
	ctx := context.Background()
	for b.Loop() {
		res, err := tl.Run(ctx, call, nil)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
