package fakeprovider

import (
	"context"
	"fmt"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// describe renders an event as one short line, so tests compare readable
// sequences.
func describe(ev engine.StreamEvent) string {
	switch ev.Kind {
	case engine.StreamTextStart:
		return "text_start"
	case engine.StreamTextDelta:
		return fmt.Sprintf("text_delta %q", ev.Delta)
	case engine.StreamTextEnd:
		return "text_end"
	case engine.StreamThinkingStart:
		return "thinking_start"
	case engine.StreamThinkingDelta:
		return fmt.Sprintf("thinking_delta %q", ev.Delta)
	case engine.StreamThinkingEnd:
		return fmt.Sprintf("thinking_end sig=%q", ev.Signature)
	case engine.StreamToolCallStart:
		return fmt.Sprintf("tool_start %s %s", ev.ToolCallID, ev.ToolName)
	case engine.StreamToolCallDelta:
		return fmt.Sprintf("tool_delta %q", ev.Delta)
	case engine.StreamToolCallEnd:
		return fmt.Sprintf("tool_end %s %s", ev.ToolCallID, ev.Arguments)
	case engine.StreamUsage:
		u := ev.Usage
		return fmt.Sprintf("usage in=%d out=%d cr=%d cw=%d total=%d", u.Input, u.Output, u.CacheRead, u.CacheWrite, u.TotalTokens)
	case engine.StreamDone:
		return fmt.Sprintf("done %s %q", ev.StopReason, ev.ResponseID)
	}
	return fmt.Sprintf("unknown kind %d", ev.Kind)
}

// stream runs one call with a background context and returns the described
// events and the error.
func stream(p *Provider, req *engine.Request) ([]string, error) {
	return streamCtx(context.Background(), p, req)
}

func streamCtx(ctx context.Context, p *Provider, req *engine.Request) ([]string, error) {
	var got []string
	err := p.Stream(ctx, req, func(ev engine.StreamEvent) error {
		got = append(got, describe(ev))
		return nil
	})
	return got, err
}

// mustParse parses a script named "test.json" or fails the test.
func mustParse(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Parse("test.json", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

// userReq is a request whose only message is a user message with text.
func userReq(text string) *engine.Request {
	return &engine.Request{Messages: []engine.Message{user(text)}}
}

func user(text string) *engine.UserMessage {
	return &engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock(text)}}
}

func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("event %d:\n got  %s\n want %s", i, g, w)
		}
	}
}
