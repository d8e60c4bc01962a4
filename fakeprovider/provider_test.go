package fakeprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		turn string // one turn object
		want []string
	}{
		{"empty turn", `{}`, []string{`done stop ""`}},
		{"text string", `{"steps":[{"text":"Hello there world"}]}`, []string{
			"text_start", `text_delta "Hello "`, `text_delta "there "`, `text_delta "world"`, "text_end", `done stop ""`}},
		{"text array", `{"steps":[{"text":["Hel","lo"]}]}`, []string{
			"text_start", `text_delta "Hel"`, `text_delta "lo"`, "text_end", `done stop ""`}},
		{"empty text", `{"steps":[{"text":""}]}`, []string{"text_start", "text_end", `done stop ""`}},
		{"text repeat", `{"steps":[{"text":["a","b"],"repeat":2}]}`, []string{
			"text_start", `text_delta "a"`, `text_delta "b"`, `text_delta "a"`, `text_delta "b"`, "text_end", `done stop ""`}},
		{"thinking with signature", `{"steps":[{"thinking":["Let me ","think"],"signature":"sig1"}]}`, []string{
			"thinking_start", `thinking_delta "Let me "`, `thinking_delta "think"`, `thinking_end sig="sig1"`, `done stop ""`}},
		{"thinking string", `{"steps":[{"thinking":"a b"}]}`, []string{
			"thinking_start", `thinking_delta "a "`, `thinking_delta "b"`, `thinking_end sig=""`, `done stop ""`}},
		{"tool call with argDeltas", `{"steps":[{"toolCall":{"id":"call_1","name":"read","arguments":{"path":"a.txt"}},"argDeltas":["{\"path\":", "\"a.txt\"}"]}]}`, []string{
			"tool_start call_1 read", `tool_delta "{\"path\":"`, `tool_delta "\"a.txt\"}"`, `tool_end call_1 {"path":"a.txt"}`, `done toolUse ""`}},
		{"tool call arguments from argDeltas", `{"steps":[{"toolCall":{"name":"read"},"argDeltas":["{ \"path\" : 1 }"]}]}`, []string{
			"tool_start call_1_1 read", `tool_delta "{ \"path\" : 1 }"`, `tool_end call_1_1 {"path":1}`, `done toolUse ""`}},
		{"cut tool call", `{"stopReason":"length","steps":[{"toolCall":{"name":"bash"},"argDeltas":["{\"command\":", "\"rm -rf vic"],"cut":true}]}`, []string{
			"tool_start call_1_1 bash", `tool_delta "{\"command\":"`, `tool_delta "\"rm -rf vic"`, `tool_end call_1_1 `, `done length ""`}},
		{"tool call split keeps runes whole", `{"steps":[{"toolCall":{"name":"write","arguments":{"t": "aaaaaaaaa€b", "u": "é"}}}]}`, []string{
			// byte 16 falls inside €, so the first piece stops at 15 bytes.
			"tool_start call_1_1 write", `tool_delta "{\"t\":\"aaaaaaaaa"`, `tool_delta "€b\",\"u\":\"é\"}"`,
			`tool_end call_1_1 {"t":"aaaaaaaaa€b","u":"é"}`, `done toolUse ""`}},
		{"tool call without arguments", `{"steps":[{"toolCall":{"name":"ls"}}]}`, []string{
			"tool_start call_1_1 ls", `tool_delta "{}"`, `tool_end call_1_1 {}`, `done toolUse ""`}},
		{"default ids count tool calls", `{"steps":[{"toolCall":{"name":"a"}},{"toolCall":{"id":"x","name":"b"}},{"toolCall":{"name":"c"}}]}`, []string{
			"tool_start call_1_1 a", `tool_delta "{}"`, `tool_end call_1_1 {}`,
			"tool_start x b", `tool_delta "{}"`, `tool_end x {}`,
			"tool_start call_1_3 c", `tool_delta "{}"`, `tool_end call_1_3 {}`, `done toolUse ""`}},
		{"usage sums", `{"steps":[{"usage":{"input":10,"output":5,"cacheRead":2,"cacheWrite":1}}]}`, []string{
			"usage in=10 out=5 cr=2 cw=1 total=18", `done stop ""`}},
		{"usage total given", `{"steps":[{"usage":{"input":10,"totalTokens":99}}]}`, []string{
			"usage in=10 out=0 cr=0 cw=0 total=99", `done stop ""`}},
		{"stop reason and response id", `{"responseId":"resp_1","stopReason":"length","steps":[{"toolCall":{"name":"a"}}]}`, []string{
			"tool_start call_1_1 a", `tool_delta "{}"`, `tool_end call_1_1 {}`, `done length "resp_1"`}},
		{"blocks in order", `{"steps":[{"thinking":["t"]},{"text":["x"]},{"toolCall":{"id":"c","name":"n"}},{"usage":{"output":1}}]}`, []string{
			"thinking_start", `thinking_delta "t"`, `thinking_end sig=""`, "text_start", `text_delta "x"`, "text_end",
			"tool_start c n", `tool_delta "{}"`, "tool_end c {}", "usage in=0 out=1 cr=0 cw=0 total=1", `done toolUse ""`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(mustParse(t, `{"turns":[`+tt.turn+`]}`))
			got, err := stream(p, &engine.Request{})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			equalLines(t, got, tt.want)
		})
	}
}

func TestRepeatLarge(t *testing.T) {
	t.Parallel()
	p := New(mustParse(t, turn1(`{"text":["ab"],"repeat":5000}`)))
	var text strings.Builder
	deltas := 0
	err := p.Stream(context.Background(), &engine.Request{}, func(ev engine.StreamEvent) error {
		if ev.Kind == engine.StreamTextDelta {
			deltas++
			text.WriteString(ev.Delta)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if deltas != 5000 || text.String() != strings.Repeat("ab", 5000) {
		t.Errorf("got %d deltas totalling %d bytes, want 5000 deltas of \"ab\"", deltas, text.Len())
	}
}

func TestErrorStep(t *testing.T) {
	t.Parallel()
	p := New(mustParse(t, turn1(`{"text":"partial"},{"error":{"status":529,"message":"overloaded_error: Overloaded"}}`)))
	got, err := stream(p, &engine.Request{})
	equalLines(t, got, []string{"text_start", `text_delta "partial"`, "text_end"})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Status != 529 || pe.Message != "overloaded_error: Overloaded" {
		t.Errorf("error = %#v, want ProviderError 529 overloaded_error: Overloaded", err)
	}
}

func TestTurnsLoopAndExhaustion(t *testing.T) {
	t.Parallel()
	const turns = `"turns":[{"steps":[{"text":"one"}]},{"steps":[{"toolCall":{"name":"t"}}]}]`
	t.Run("exhausted", func(t *testing.T) {
		t.Parallel()
		p := New(mustParse(t, `{`+turns+`}`))
		var log bytes.Buffer
		p.Log = &log
		for call, want := range []string{`text_delta "one"`, "tool_start call_2_1 t"} {
			got, err := stream(p, &engine.Request{})
			if err != nil || !slices.Contains(got, want) {
				t.Fatalf("call %d: events %v, error %v; want %s among them", call+1, got, err, want)
			}
		}
		for call := 3; call <= 4; call++ {
			got, err := stream(p, &engine.Request{})
			want := fmt.Sprintf("fake provider: script test.json has no turn for call %d (it has 2)", call)
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Message != want || len(got) != 0 {
				t.Errorf("call %d: events %v, error %v; want no events and %q", call, got, err, want)
			}
		}
		wantLog := "fake provider: script test.json has no turn for call 3 (it has 2)\n" +
			"fake provider: script test.json has no turn for call 4 (it has 2)\n"
		if log.String() != wantLog {
			t.Errorf("log = %q, want %q", log.String(), wantLog)
		}
	})
	t.Run("loop", func(t *testing.T) {
		t.Parallel()
		p := New(mustParse(t, `{"loop":true,`+turns+`}`))
		for call, want := range []string{`text_delta "one"`, "tool_start call_2_1 t", `text_delta "one"`, "tool_start call_4_1 t", `text_delta "one"`} {
			got, err := stream(p, &engine.Request{})
			if err != nil || !slices.Contains(got, want) {
				t.Fatalf("call %d: events %v, error %v; want %s among them", call+1, got, err, want)
			}
		}
	})
	t.Run("no turns", func(t *testing.T) {
		t.Parallel()
		_, err := stream(New(nil), &engine.Request{})
		if want := "fake provider: script empty has no turn for call 1 (it has 0)"; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
	t.Run("directory not in message", func(t *testing.T) {
		t.Parallel()
		s, err := Parse("/some/where/flow.json", []byte(`{"turns":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = stream(New(s), &engine.Request{})
		if want := "fake provider: script flow.json has no turn for call 1 (it has 0)"; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
}

func TestExpectations(t *testing.T) {
	t.Parallel()
	exit1 := 1
	req := &engine.Request{
		SystemPrompt: "You are xcsh. Be brief.",
		Messages: []engine.Message{
			user("hello"),
			&engine.AssistantMessage{Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "c1", Name: "bash", Arguments: []byte(`{"command":"ls"}`)}}},
			&engine.ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: []engine.ContentBlock{engine.TextBlock("a.txt\nb.txt")}},
			&engine.BashExecutionMessage{Command: "make", Output: "built ok", ExitCode: &exit1},
		},
		Tools:         []engine.ToolSpec{{Name: "read"}, {Name: "bash"}},
		ThinkingLevel: engine.ThinkingHigh,
	}
	const prefix = "fake provider: expectation failed on call 1: "
	tests := []struct {
		name, expect string
		want         string // "" when the call must succeed
	}{
		{"all pass", `{"lastUserText":"hello","lastUserTextContains":"ell","systemPromptContains":["xcsh","brief"],
			"toolsOffered":["read","bash"],"toolsAbsent":"write","messageCount":4,"lastRole":"bashExecution",
			"contextContains":["a.txt\\nb.txt","built ok"],"thinkingLevel":"high"}`, ""},
		{"lastUserText", `{"lastUserText":"hi"}`, `lastUserText: want "hi", got "hello"`},
		{"lastUserTextContains", `{"lastUserTextContains":["hell","bye"]}`, `lastUserTextContains: want "bye", got "hello"`},
		{"systemPromptContains", `{"systemPromptContains":"verbose"}`, `systemPromptContains: want "verbose", got "You are xcsh. Be brief."`},
		{"toolsOffered", `{"toolsOffered":["read","write"]}`, `toolsOffered: want "write", got ["read","bash"]`},
		{"toolsAbsent", `{"toolsAbsent":"bash"}`, `toolsAbsent: want no "bash", got ["read","bash"]`},
		{"messageCount", `{"messageCount":1}`, `messageCount: want 1, got 4`},
		{"lastRole", `{"lastRole":"toolResult"}`, `lastRole: want "toolResult", got "bashExecution"`},
		{"contextContains", `{"contextContains":"b.txt\nc.txt"}`, `contextContains: want "b.txt\nc.txt", got 4 messages without it`},
		{"thinkingLevel empty", `{"thinkingLevel":""}`, `thinkingLevel: want "", got "high"`},
		{"several", `{"thinkingLevel":"low","lastUserText":"x","messageCount":0}`,
			`lastUserText: want "x", got "hello"; messageCount: want 0, got 4; thinkingLevel: want "low", got "high"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := New(mustParse(t, `{"turns":[{"expect":`+tt.expect+`,"steps":[{"text":"ok"}]}]}`))
			var log bytes.Buffer
			p.Log = &log
			got, err := stream(p, req)
			if tt.want == "" {
				if err != nil || log.Len() != 0 {
					t.Fatalf("Stream: %v (log %q)", err, log.String())
				}
				return
			}
			want := prefix + tt.want
			var pe *engine.ProviderError
			if !errors.As(err, &pe) || pe.Message != want || pe.Status != 0 {
				t.Errorf("error:\n got  %v\n want %s", err, want)
			}
			if len(got) != 0 {
				t.Errorf("events before the expectation failure: %v", got)
			}
			if log.String() != want+"\n" {
				t.Errorf("log = %q, want %q", log.String(), want+"\n")
			}
		})
	}
	t.Run("empty request", func(t *testing.T) {
		t.Parallel()
		p := New(mustParse(t, `{"turns":[{"expect":{"lastUserText":"","lastRole":"user"}}]}`))
		_, err := stream(p, nil)
		want := prefix + `lastUserText: want "", got no user message; lastRole: want "user", got no messages`
		if err == nil || err.Error() != want {
			t.Errorf("error:\n got  %v\n want %s", err, want)
		}
	})
	t.Run("long values are cut", func(t *testing.T) {
		t.Parallel()
		p := New(mustParse(t, `{"turns":[{"expect":{"systemPromptContains":"zzz"}}]}`))
		_, err := stream(p, &engine.Request{SystemPrompt: strings.Repeat("é", 300)})
		want := prefix + `systemPromptContains: want "zzz", got "` + strings.Repeat("é", 200) + `"…`
		if err == nil || err.Error() != want {
			t.Errorf("error:\n got  %v\n want %s", err, want)
		}
	})
	t.Run("later call number", func(t *testing.T) {
		t.Parallel()
		p := New(mustParse(t, `{"turns":[{},{"expect":{"messageCount":3}}]}`))
		if _, err := stream(p, req); err != nil {
			t.Fatal(err)
		}
		_, err := stream(p, req)
		if want := "fake provider: expectation failed on call 2: messageCount: want 3, got 4"; err == nil || err.Error() != want {
			t.Errorf("error:\n got  %v\n want %s", err, want)
		}
	})
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	const blocking = `{"turns":[{"steps":[{"text":["Working"]},{"block":true}]}]}`
	t.Run("cancelled before the call", func(t *testing.T) {
		t.Parallel()
		for _, src := range []string{blocking, turn1(`{"text":"x"}`), turn1(`{"error":{"message":"x"}}`)} {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			got, err := streamCtx(ctx, New(mustParse(t, src)), &engine.Request{})
			if !errors.Is(err, context.Canceled) || len(got) != 0 {
				t.Errorf("%s: events %v, error %v; want none and context.Canceled", src, got, err)
			}
		}
	})
	t.Run("cancelled from fn", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var got []string
		err := New(mustParse(t, turn1(`{"text":"a b c"}`))).Stream(ctx, &engine.Request{}, func(ev engine.StreamEvent) error {
			got = append(got, describe(ev))
			if ev.Delta == "b " {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		equalLines(t, got, []string{"text_start", `text_delta "a "`, `text_delta "b "`})
	})
	t.Run("block waits for cancel", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ended := make(chan struct{})
		done := make(chan error, 1)
		var got []string
		go func() {
			done <- New(mustParse(t, blocking)).Stream(ctx, &engine.Request{}, func(ev engine.StreamEvent) error {
				got = append(got, describe(ev))
				if ev.Kind == engine.StreamTextEnd {
					close(ended)
				}
				return nil
			})
		}()
		<-ended
		select {
		case err := <-done:
			t.Fatalf("Stream returned %v before cancel", err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		equalLines(t, got, []string{"text_start", `text_delta "Working"`, "text_end"})
	})
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		if _, err := streamCtx(ctx, New(mustParse(t, blocking)), &engine.Request{}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestCallbackError(t *testing.T) {
	t.Parallel()
	errStop := errors.New("consumer gone")
	for _, src := range []string{turn1(`{"text":"a b"}`), turn1(`{"toolCall":{"name":"x"}}`), turn1(`{"usage":{}}`), `{"turns":[{}]}`} {
		calls := 0
		err := New(mustParse(t, src)).Stream(context.Background(), &engine.Request{}, func(engine.StreamEvent) error {
			calls++
			return errStop
		})
		if err != errStop || calls != 1 {
			t.Errorf("%s: error %v after %d events, want the callback's error after 1", src, err, calls)
		}
	}
}

// TestConcurrentCalls exercises the call counter under -race; each call gets
// a distinct call number, so the default tool ids are all different.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	p := New(mustParse(t, `{"loop":true,"turns":[{"steps":[{"toolCall":{"name":"t"}}]}]}`))
	const n = 8
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_ = p.Stream(context.Background(), &engine.Request{}, func(ev engine.StreamEvent) error {
				if ev.Kind == engine.StreamToolCallStart {
					ids <- ev.ToolCallID
				}
				return nil
			})
		})
	}
	wg.Wait()
	close(ids)
	seen := make(map[string]bool)
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("got %d distinct tool ids, want %d: %v", len(seen), n, seen)
	}
}

func TestArgumentsAreCopies(t *testing.T) {
	t.Parallel()
	p := New(mustParse(t, `{"loop":true,"turns":[{"steps":[{"toolCall":{"id":"c","name":"t","arguments":{"a":1}}}]}]}`))
	for range 2 {
		err := p.Stream(context.Background(), &engine.Request{}, func(ev engine.StreamEvent) error {
			if ev.Kind == engine.StreamToolCallEnd {
				if string(ev.Arguments) != `{"a":1}` {
					t.Errorf("arguments = %s", ev.Arguments)
				}
				ev.Arguments[1] = 'X' // a consumer scribbling on the bytes must not change the script
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocExample replays the complete example of docs/fakeprovider.md.
func TestDocExample(t *testing.T) {
	t.Parallel()
	s, err := Parse("examples/hello.json", []byte(`{
  "turns": [
    {
      "expect": {"lastUserText": "read a.txt", "toolsOffered": "read", "messageCount": 1},
      "steps": [
        {"thinking": "I should read it.", "signature": "s1"},
        {"toolCall": {"name": "read", "arguments": {"path": "a.txt"}}}
      ]
    },
    {
      "expect": {"lastRole": "toolResult", "contextContains": "hello from a"},
      "responseId": "resp_2",
      "steps": [
        {"text": "It says hello."},
        {"usage": {"input": 120, "output": 4}}
      ]
    }
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	p := New(s)
	if id := p.Model().ID; id != "hello" {
		t.Errorf("model id = %q, want hello", id)
	}
	req := &engine.Request{Messages: []engine.Message{user("read a.txt")}, Tools: []engine.ToolSpec{{Name: "read"}, {Name: "bash"}}}
	got, err := stream(p, req)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, got, []string{"thinking_start", `thinking_delta "I "`, `thinking_delta "should "`, `thinking_delta "read "`, `thinking_delta "it."`,
		`thinking_end sig="s1"`, "tool_start call_1_1 read", `tool_delta "{\"path\":\"a.txt\"}"`, `tool_end call_1_1 {"path":"a.txt"}`, `done toolUse ""`})

	req.Messages = append(req.Messages,
		&engine.AssistantMessage{Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "call_1_1", Name: "read", Arguments: []byte(`{"path":"a.txt"}`)}}},
		&engine.ToolResultMessage{ToolCallID: "call_1_1", ToolName: "read", Content: []engine.ContentBlock{engine.TextBlock("hello from a\n")}})
	got, err = stream(p, req)
	if err != nil {
		t.Fatal(err)
	}
	equalLines(t, got, []string{"text_start", `text_delta "It "`, `text_delta "says "`, `text_delta "hello."`, "text_end",
		"usage in=120 out=4 cr=0 cw=0 total=124", `done stop "resp_2"`})

	if _, err := stream(p, req); err == nil || err.Error() != "fake provider: script hello.json has no turn for call 3 (it has 2)" {
		t.Errorf("third call: %v", err)
	}
}
