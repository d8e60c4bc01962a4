package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

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
	mu   sync.Mutex
	b    bytes.Buffer
	cond *sync.Cond // signalled on every write (waitFor)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond != nil {
		s.cond.Broadcast()
	}
	return s.b.Write(p)
}

// waitFor waits until the output contains sub.
func (s *syncBuffer) waitFor(sub string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond == nil {
		s.cond = sync.NewCond(&s.mu)
	}
	for !strings.Contains(s.b.String(), sub) {
		s.cond.Wait()
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve runs a Server on in with the echo provider (and its model when
// model is set) and returns its output; configure adjusts the session's
// configuration.
func serve(t testing.TB, in io.Reader, model bool, opts Options, configure ...func(*engine.Config)) string {
	t.Helper()
	out := &syncBuffer{}
	opts.Version = "0.0.0-test"
	// As goldens write every hash (rpc/replay.SchemaHashToken).
	opts.SchemaHash = "$SCHEMA_HASH"
	srv := NewServer(out, opts)
	cfg := engine.Config{Provider: echoProvider{}, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}, Sink: srv, SessionID: "0000000000000001"}
	if model {
		cfg.Model = &engine.Model{ID: "echo", Name: "Echo", API: "fake", Provider: "fake", Input: []string{"text"}}
	}
	for _, f := range configure {
		f(&cfg)
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

// readRule reads a JSON object the way JSON.parse hosts do, independently
// of jsonread.go (this is the fuzz target's oracle): encoding/json stores
// an object's members in a map under their exact names, each in turn, so
// the last duplicate wins. ok is false for anything but an object.
func readRule(raw []byte) (m map[string]json.RawMessage, ok bool) {
	return m, json.Unmarshal(raw, &m) == nil && m != nil
}

func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// optionalStrings reports whether the named members of obj are each
// absent, null or a string.
func optionalStrings(obj map[string]json.RawMessage, names ...string) bool {
	for _, n := range names {
		if raw, ok := obj[n]; ok && string(raw) != "null" && !isJSONString(raw) {
			return false
		}
	}
	return true
}

// validPrompt reports whether the prompt fields of m decode: message a
// string, images absent, null or an array of null or image objects, and
// every string field a string.
func validPrompt(m map[string]json.RawMessage) bool {
	if !isJSONString(m["message"]) || !optionalStrings(m, "streamingBehavior") {
		return false
	}
	raw, ok := m["images"]
	if !ok || string(raw) == "null" {
		return true
	}
	var imgs []json.RawMessage
	if json.Unmarshal(raw, &imgs) != nil || imgs == nil {
		return false
	}
	for _, im := range imgs {
		if string(im) == "null" {
			continue
		}
		o, ok := readRule(im)
		if !ok || !optionalStrings(o, "type", "data", "mimeType") {
			return false
		}
	}
	return true
}

// expectedResponses returns the ids of the response frames one input line
// must produce with a model-less session ("" for a frame without id): none
// for UI responses and well-formed host tool frames, two for a well-formed
// prompt (the ack and the late "No model selected" failure), one for
// everything else. Known commands echo their last id, compacted, with
// U+2028/U+2029 escaped.
func expectedResponses(line string) []string {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	m, ok := readRule([]byte(line))
	if !utf8.ValidString(line) || !ok {
		return []string{""}
	}
	var typ string
	if !isJSONString(m["type"]) || json.Unmarshal(m["type"], &typ) != nil || handlers[typ] == nil {
		return []string{""}
	}
	id := ""
	if raw, ok := m["id"]; ok {
		var buf bytes.Buffer
		json.Compact(&buf, raw)
		id = strings.NewReplacer("\u2028", `\u2028`, "\u2029", `\u2029`).Replace(buf.String())
	}
	switch typ {
	case "extension_ui_response":
		return nil
	case "host_tool_result", "host_tool_update":
		key := "result"
		if typ == "host_tool_update" {
			key = "partialResult"
		}
		body, ok := readRule(m[key])
		var content []json.RawMessage
		if isJSONString(m["id"]) && ok && json.Unmarshal(body["content"], &content) == nil && content != nil {
			return nil
		}
		return []string{""}
	case "prompt", "abort_and_prompt":
		if validPrompt(m) {
			return []string{id, id}
		}
	}
	return []string{id}
}

// FuzzDispatch asserts, for any input, that every line gets exactly the
// responses the reading rule implies (an oracle written independently of
// jsonread.go), that each carries the right id, and that nothing hangs.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","type":"get_state"}`, "garbage", "null", `{"type":"prompt","message":"hi"}`,
		`{"type":"set_session_name","name":"  "}`, "\uFEFF{}\r", `{"type":"host_tool_result","id":"h","result":{"content":[]}}`,
		`{"type":"abort"}`, `{"id":5,"type":"steer","message":3}`,
		// The reading rule: a case-mangled name is not the field; the last
		// duplicate wins, for the envelope too.
		`{"id":1,"type":"prompt","MeSsAgE":"hi"}`, `{"id":1,"Type":"prompt","message":"hi"}`,
		`{"id":"first","type":"get_state","type":"prompt","message":"hi","id":"last"}`,
		`{"id":2,"type":"prompt","message":"hi","message":3}`,
		`{"type":"host_tool_result","id":"h","result":{"content":[]},"result":{"Content":[]}}`,
		`{"id":3,"type":"prompt","message":"x","images":[{"data":"a","DATA":1,"data":"b"}]}`,
		"{\"id\":\"\u2028\",\"type\":\"get_state\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		lines := strings.Split(strings.ReplaceAll(input, "\r", ""), "\n")
		input = strings.Join(lines, "\n") + "\n" + `{"id":"__end","type":"get_state"}` + "\n"
		want := []string{`"__end"`}
		for i, l := range lines {
			if i == 0 {
				l = strings.TrimPrefix(l, "\uFEFF")
			}
			want = append(want, expectedResponses(l)...)
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
		var got []string
		var last string
		for _, frame := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if !gjson.Valid(frame) || !gjson.Parse(frame).IsObject() {
				t.Fatalf("invalid frame %q", frame)
			}
			if gjson.Get(frame, "type").Str == "response" {
				got = append(got, gjson.Get(frame, "id").Raw)
				last = frame
			}
		}
		// Responses may come out of request order (bash answers when it
		// ends), so the ids are compared as multisets.
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("input %q: response ids %q, want %q\n%s", input, got, want, out)
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
	deltas, n := 2000, 300
	if testing.Short() {
		deltas, n = 400, 100
	}
	srv.Attach(engine.New(engine.Config{Provider: manyDeltas{deltas, "x<&>\n"}, Model: m, Sink: srv, Clock: engine.DeterministicEpoch, IDs: &engine.SequentialIDs{}}))
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background(), pr) }()
	io.WriteString(pw, `{"id":"p","type":"prompt","message":"go"}`+"\n")
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
	if updates != deltas+2 {
		t.Fatalf("%d updates, want %d", updates, deltas+2)
	}
}
