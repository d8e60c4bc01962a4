package rpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
)

// echoProvider answers every call with the last user text.
type echoProvider struct{}

func (echoProvider) Stream(ctx context.Context, req *engine.Request, fn func(engine.StreamEvent) error) error {
	text := ""
	if u, ok := req.Messages[len(req.Messages)-1].(*engine.UserMessage); ok {
		text = u.Text()
	}
	for _, ev := range []engine.StreamEvent{
		{Kind: engine.StreamTextStart},
		{Kind: engine.StreamTextDelta, Delta: "echo: "},
		{Kind: engine.StreamTextDelta, Delta: text},
		{Kind: engine.StreamTextEnd},
		{Kind: engine.StreamDone, StopReason: engine.StopStop},
	} {
		if err := fn(ev); err != nil {
			return err
		}
	}
	return nil
}

// syncBuffer is a goroutine-safe output sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func serve(t testing.TB, in io.Reader, model bool, opts Options) string {
	t.Helper()
	out := &syncBuffer{}
	opts.Version = "0.0.0-test"
	srv := NewServer(out, opts)
	cfg := engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, Sink: srv, SessionID: "0000000000000001"}
	if model {
		cfg.Model = &engine.Model{ID: "echo", Name: "Echo", API: "fake", Provider: "fake", Input: []string{"text"}}
	}
	srv.Attach(engine.New(cfg))
	if err := srv.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestServerGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"server_framing_errors": "garbage\nnull\n42\n[1]\n\"s\"\n{\"type\":\"prompt\"\n\xff\xfe\n{}\n{\"type\":7,\"id\":1}\n{\"id\":\"u\",\"type\":\"frobnicate\"}\n{\"id\":{\"k\": [1, 2]},\"type\":\"get_last_assistant_text\"}\n",
		"server_prompt_echo":    "{\"id\":\"p1\",\"type\":\"prompt\",\"message\":\"<hi> & bye\"}\n",
	}
	g := goldie.New(t, goldie.WithFixtureDir("../golden"), goldie.WithNameSuffix(".jsonl"))
	for name, input := range cases {
		out := serve(t, strings.NewReader(input), true, Options{})
		if *updateGolden {
			if err := g.Update(t, name, []byte(out)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		g.Assert(t, name, []byte(out))
	}
}

func TestLeanUpdates(t *testing.T) {
	t.Parallel()
	out := serve(t, strings.NewReader(`{"type":"prompt","message":"x"}`+"\n"), true, Options{Updates: UpdatesDelta})
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if gjson.Get(line, "type").String() == "message_update" {
			if gjson.Get(line, "message").Exists() || gjson.Get(line, "assistantMessageEvent.partial").Exists() {
				t.Fatalf("lean frame carries a snapshot: %s", line)
			}
		}
	}
}

// expectedResponses is the number of response frames one input line must
// produce with a model-less session: none for UI responses and well-formed
// host tool frames, two for a well-formed prompt (the ack and the late "No
// model selected" failure), one for everything else.
func expectedResponses(line string) int {
	if strings.TrimSpace(line) == "" {
		return 0
	}
	if !gjson.Valid(line) {
		return 1
	}
	v := gjson.Parse(line)
	if !v.IsObject() {
		return 1
	}
	typ := v.Get("type")
	if typ.Type != gjson.String {
		return 1
	}
	switch typ.Str {
	case "extension_ui_response":
		return 0
	case "host_tool_result", "host_tool_update":
		key := "result.content"
		if typ.Str == "host_tool_update" {
			key = "partialResult.content"
		}
		if v.Get("id").Type == gjson.String && v.Get(key).IsArray() {
			return 0
		}
	case "prompt", "abort_and_prompt":
		if v.Get("message").Type == gjson.String && decodes(line) {
			return 2
		}
	}
	return 1
}

func decodes(line string) bool {
	var a promptArgs
	return decode(&command{line: []byte(line), typ: "prompt"}, &a) == nil
}

func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","type":"get_state"}`, "garbage", "null", `{"type":"prompt","message":"hi"}`,
		`{"type":"set_session_name","name":"  "}`, "\uFEFF{}\r", `{"type":"host_tool_result","id":"h","result":{"content":[]}}`,
		`{"type":"abort"}`, `{"id":5,"type":"steer","message":3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		lines := strings.Split(strings.ReplaceAll(input, "\r", ""), "\n")
		input = strings.Join(lines, "\n") + "\n" + `{"id":"__end","type":"get_state"}` + "\n"
		want := 1
		for i, l := range lines {
			if i == 0 {
				l = strings.TrimPrefix(l, "\uFEFF")
			}
			want += expectedResponses(l)
		}
		var out string
		finished := make(chan struct{})
		go func() { out = serve(t, strings.NewReader(input), false, Options{}); close(finished) }()
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("input %q hung:\n%s", input, buf[:n])
		}
		got := 0
		var last string
		for _, frame := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !gjson.Valid(frame) || !gjson.Parse(frame).IsObject() {
				t.Fatalf("invalid frame %q", frame)
			}
			if gjson.Get(frame, "type").Str == "response" {
				got++
				last = frame
			}
		}
		if got != want {
			t.Fatalf("input %q: %d responses, want %d\n%s", input, got, want, out)
		}
		if gjson.Get(last, "id").Str != "__end" {
			t.Fatalf("last response %s", last)
		}
	})
}

// TestConcurrentCommandsDuringStream interleaves commands with a long
// stream (run it with -race): every frame stays one valid JSON object per
// line, every command is answered once, and the stream completes.
func TestConcurrentCommandsDuringStream(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	out := &syncBuffer{}
	srv := NewServer(out, Options{Version: "t"})
	m := &engine.Model{ID: "m", API: "fake", Provider: "fake"}
	srv.Attach(engine.New(engine.Config{Provider: manyDeltas{2000, "x<&>\n"}, Model: m, Sink: srv, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}}))
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), pr) }()
	io.WriteString(pw, `{"id":"p","type":"prompt","message":"go"}`+"\n")
	const n = 300
	for i := 0; i < n; i++ {
		fmt.Fprintf(pw, `{"id":%d,"type":"get_state"}`+"\n", i)
		if i%50 == 0 {
			fmt.Fprintf(pw, `{"id":"m%d","type":"get_messages"}`+"\n", i)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	responses, updates := 0, 0
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if !gjson.Valid(line) {
			t.Fatalf("invalid frame %q", line)
		}
		switch gjson.Get(line, "type").Str {
		case "response":
			responses++
		case "message_update":
			updates++
		}
	}
	if want := 1 + n + n/50; responses != want {
		t.Fatalf("%d responses, want %d", responses, want)
	}
	if updates != 2002 {
		t.Fatalf("%d updates, want 2002", updates)
	}
}
