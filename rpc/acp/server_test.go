package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
	"github.com/xcsh-go/xcsh/engine/lineio"
	"github.com/xcsh-go/xcsh/engine/sessions"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// fakeSessions builds sessions on the fake provider's demo model, in
// memory (a sessions.Builder).
type fakeSessions struct {
	ids   engine.IDSource
	saved []sessions.Info
}

func (f *fakeSessions) Build(req sessions.Request) (*sessions.Parts, error) {
	if req.ID != "" || req.Path != "" {
		return nil, sessions.ErrUnknown
	}
	p := fakeprovider.Demo()
	m := p.Model()
	return &sessions.Parts{Config: engine.Config{Provider: p, Model: &m, Clock: engine.DeterministicEpoch, IDs: f.ids,
		SessionID: f.ids.NewID("session"), Cwd: req.Cwd, OrderedResults: true}}, nil
}

func (f *fakeSessions) Stored(cwd string) ([]sessions.Info, error) {
	var out []sessions.Info
	for _, s := range f.saved {
		if cwd == "" || s.Cwd == cwd {
			out = append(out, s)
		}
	}
	return out, nil
}

// harness runs a Server on pipes and reads what it writes, line by line.
type harness struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func start(t *testing.T, fake *fakeSessions) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ids := &engine.SequentialIDs{}
	if fake == nil {
		fake = &fakeSessions{}
	}
	fake.ids = ids
	srv := NewServer(outW, Options{Version: "test", IDs: ids, Host: sessions.New(sessions.Options{Builder: fake})})
	h := &harness{t: t, in: inW, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() {
		h.done <- srv.Run(context.Background(), inR)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	t.Cleanup(func() { h.close() })
	return h
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// next returns the next line the server wrote (bounded: a hang guard).
func (h *harness) next() map[string]any {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("the server closed its output")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			h.t.Fatalf("not JSON: %q", l)
		}
		return m
	case <-time.After(20 * time.Second):
		h.t.Fatal("no output within 20s")
	}
	return nil
}

// until returns the first line for which match is true, skipping others.
func (h *harness) until(match func(map[string]any) bool) map[string]any {
	h.t.Helper()
	for {
		if m := h.next(); match(m) {
			return m
		}
	}
}

func byID(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == id && m["method"] == nil }
}

func (h *harness) close() {
	h.in.Close()
	select {
	case err := <-h.done:
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		h.t.Error("Run did not return after EOF")
	}
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// Bad input is answered and the connection lives on.
func TestBadInput(t *testing.T) {
	h := start(t, nil)
	cases := []struct {
		line string
		code float64
	}{
		{`not json`, codeParseError},
		{`{"jsonrpc":"2.0","id":1,"method":`, codeParseError},
		{`[1]`, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":2}`, codeInvalidRequest},
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}`, codeMethodNotFound},
		{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"x","prompt":[]}}`, codeResourceNotFound},
		{`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`, codeInvalidParams},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"one"}}`, codeInvalidParams},
	}
	for _, c := range cases {
		h.send(c.line)
		if got := errCode(h.next()); got != c.code {
			t.Errorf("%s: code %v, want %v", c.line, got, c.code)
		}
	}
	// A notification nobody knows is ignored; the next request is served.
	h.send(`{"jsonrpc":"2.0","method":"_vendor/ping","params":{}}`)
	h.send(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":7}}`)
	m := h.next()
	if m["id"] != "i" || m["result"].(map[string]any)["protocolVersion"].(float64) != 1 {
		t.Errorf("initialize: %v", m)
	}
}

// A turn, a prompt queued behind it, and session/cancel.
func TestTurnsAndCancel(t *testing.T) {
	h := start(t, nil)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	h.until(byID(1))
	// The prompt right behind session/new waits for it.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"demo:block"}]}}`)
	h.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"queued"}]}}`)
	h.until(func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		c, _ := u["content"].(map[string]any)
		return c["text"] == "it"
	})
	h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"0000000000000001"}}`)
	for _, id := range []float64{3, 4} {
		m := h.until(byID(id))
		r, _ := m["result"].(map[string]any)
		if r["stopReason"] != "cancelled" {
			t.Errorf("prompt %v: %v", id, m)
		}
	}
	// The session goes on.
	h.send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"hello"}]}}`)
	m := h.until(byID(5))
	if r, _ := m["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Errorf("prompt 5: %v", m)
	}
	h.send(`{"jsonrpc":"2.0","id":6,"method":"session/close","params":{"sessionId":"0000000000000001"}}`)
	h.until(byID(6))
	h.send(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"gone?"}]}}`)
	if c := errCode(h.until(byID(7))); c != codeResourceNotFound {
		t.Errorf("after close: code %v", c)
	}
}

// session/list pages by 50 with an opaque cursor; a bad cursor is -32602.
func TestListPages(t *testing.T) {
	f := &fakeSessions{}
	for i := 0; i < 120; i++ {
		f.saved = append(f.saved, sessions.Info{ID: fmt.Sprintf("s%03d", i), Cwd: "/p", Updated: time.UnixMilli(int64(i))})
	}
	h := start(t, f)
	list := func(id int, params string) map[string]any {
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/list","params":%s}`, id, params))
		return h.until(byID(float64(id)))
	}
	var got []string
	cursor := ""
	for i := 1; ; i++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		r := list(i, params)["result"].(map[string]any)
		for _, s := range r["sessions"].([]any) {
			got = append(got, s.(map[string]any)["sessionId"].(string))
		}
		next, ok := r["nextCursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	if len(got) != 120 || got[0] != "s000" || got[119] != "s119" {
		t.Errorf("listed %d: %v…", len(got), got[:3])
	}
	if c := errCode(list(99, `{"cursor":"x"}`)); c != codeInvalidParams {
		t.Errorf("bad cursor: code %v", c)
	}
}

func TestPromptInput(t *testing.T) {
	t.Parallel()
	mime := "image/png"
	cases := []struct {
		name   string
		blocks []sdk.ContentBlock
		text   string
		images int
		err    string
	}{
		{"text", []sdk.ContentBlock{sdk.TextBlock("a "), sdk.TextBlock("b")}, "a b", 0, ""},
		{"image", []sdk.ContentBlock{sdk.TextBlock("see"), sdk.ImageBlock("AAAA", "image/png")}, "see", 1, ""},
		{"link", []sdk.ContentBlock{sdk.TextBlock("read "), sdk.ResourceLinkBlock("a.go", "file:///a.go")}, "read [@a.go](file:///a.go)", 0, ""},
		{"resource", []sdk.ContentBlock{{Resource: &sdk.ContentBlockResource{Type: "resource", Resource: sdk.EmbeddedResourceResource{
			TextResourceContents: &sdk.TextResourceContents{Uri: "file:///b.go", Text: "package b"}}}}},
			"[@b.go](file:///b.go)\n\n<context ref=\"file:///b.go\">\npackage b\n</context>", 0, ""},
		{"blob image", []sdk.ContentBlock{{Resource: &sdk.ContentBlockResource{Type: "resource", Resource: sdk.EmbeddedResourceResource{
			BlobResourceContents: &sdk.BlobResourceContents{Uri: "file:///c.png", Blob: "AAAA", MimeType: &mime}}}}}, "", 1, ""},
		{"audio", []sdk.ContentBlock{sdk.AudioBlock("AAAA", "audio/wav")}, "", 0, "audio is not supported"},
		{"empty", nil, "", 0, "empty"},
	}
	for _, c := range cases {
		text, images, err := promptInput(c.blocks)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.name, err, c.err)
			}
		case err != nil || text != c.text || len(images) != c.images:
			t.Errorf("%s: %q %d %v", c.name, text, len(images), err)
		}
	}
}

func TestToolMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, args, title, kind string
		locs                    []string
	}{
		{"read", `{"path":"a.txt","offset":3}`, "Read a.txt", "read", []string{"/w/a.txt:3"}},
		{"edit", `{"edits":[{"path":"a"},{"path":"/b"},{"path":"a"}]}`, "Edit a (+2 more)", "edit", []string{"/w/a:0", "/b:0"}},
		{"write", `{"path":"/abs/x"}`, "Write /abs/x", "edit", []string{"/abs/x:0"}},
		{"bash", `{"command":"make\ntest"}`, "`make …`", "execute", nil},
		{"grep", `{"pattern":"foo"}`, `Search for "foo"`, "search", nil},
		{"todo_write", `{}`, "Update the plan", "think", nil},
		{"mcp__srv__echo", `{}`, "echo (MCP server srv)", "other", nil},
		{"other", `not json`, "other", "other", nil},
	}
	for _, c := range cases {
		if got := toolTitle(c.name, []byte(c.args)); got != c.title {
			t.Errorf("%s title %q, want %q", c.name, got, c.title)
		}
		if got := toolKind(c.name); got != c.kind {
			t.Errorf("%s kind %q, want %q", c.name, got, c.kind)
		}
		var locs []string
		for _, l := range toolLocations("/w", c.name, []byte(c.args)) {
			locs = append(locs, fmt.Sprintf("%s:%d", l.Path, l.Line))
		}
		if strings.Join(locs, ",") != strings.Join(c.locs, ",") {
			t.Errorf("%s locations %v, want %v", c.name, locs, c.locs)
		}
	}
	if !isRefusal("Provider stop_reason: refusal") || isRefusal("overloaded") {
		t.Error("isRefusal")
	}
}

// A response to a request of ours resolves it on the reader; a late one is
// ignored; an answer of the wrong shape is the client's fault; the
// client's departure fails what still waits, and every request after it.
func TestConnCalls(t *testing.T) {
	t.Parallel()
	sent := make(chan string, 16)
	c := &conn{out: lineio.New(writerFunc(func(p []byte) (int, error) {
		sent <- string(p)
		return len(p), nil
	}), nil)}
	c.Conn = jsonrpc.New(c.out, jsonrpc.Options{Decode: decode, BadLine: c.badLine})
	in, client := io.Pipe()
	read := make(chan struct{})
	go func() {
		defer close(read)
		_ = c.Read(lineio.NewReader(in, 0))
		c.Close(errClientGone)
	}()
	answer := func(line string) {
		t.Helper()
		if _, err := io.WriteString(client, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	var r struct {
		Content string `json:"content"`
	}
	go func() { done <- c.call(context.Background(), "fs/read_text_file", map[string]string{"path": "/a"}, &r) }()
	if got := <-sent; got != `{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"path":"/a"}}`+"\n" {
		t.Fatalf("sent %q", got)
	}
	answer(`{"jsonrpc":"2.0","id":1,"result":{"content":"hi"}}`)
	if err := <-done; err != nil || r.Content != "hi" {
		t.Fatalf("call: %v %q", err, r.Content)
	}
	answer(`{"jsonrpc":"2.0","id":1,"result":{}}`) // late: ignored
	go func() { done <- c.call(context.Background(), "fs/read_text_file", nil, &r) }()
	<-sent
	answer(`{"jsonrpc":"2.0","id":2,"result":{"content":5}}`)
	if err := <-done; err == nil || !strings.HasPrefix(err.Error(), "the client's answer: ") {
		t.Fatalf("a malformed answer: %v", err)
	}
	go func() { done <- c.call(context.Background(), "fs/read_text_file", nil, nil) }()
	<-sent
	client.Close()
	<-read
	if err := <-done; err != errClientGone {
		t.Fatalf("after EOF: %v", err)
	}
	if err := c.call(context.Background(), "x", nil, nil); err != errClientGone {
		t.Fatalf("call after EOF: %v", err)
	}
	select {
	case line := <-sent:
		t.Fatalf("sent after EOF: %q", line)
	default:
	}
}

// ACP's rules for a line: -32700 for what is not UTF-8 JSON, -32600 for
// what is no message (its id echoed when it has a usable one), a method
// makes a request (an id of null included), an id with a result or an
// error a response; "jsonrpc" is not checked.
func TestDecodeLines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ line, want string }{
		{"\xff", `bad null -32700 invalid UTF-8`},
		{`{"a":`, `bad null -32700 unexpected end of JSON input`},
		{`[1]`, `bad null -32600 a message is a JSON object`},
		{`{"id":"x","method":5}`, `bad "x" -32600 json: cannot unmarshal number into Go struct field envelope.method of type string`},
		{`{"id":{"o":1},"method":5}`, `bad null -32600 json: cannot unmarshal number into Go struct field envelope.method of type string`},
		{`{"id":3}`, `bad 3 -32600 no method`},
		{`{"result":1}`, `bad null -32600 no method`},
		{`{"id":7,"method":"m","params":{"p":1}}`, `request 7 m {"p":1}`},
		{`{"id":null,"method":""}`, `request null  `},
		{`{"method":"n"}`, `notification n`},
		{`{"id":4,"result":null}`, `response 4 null <nil>`},
		{`{"id":5,"error":{"code":-1,"message":"no"}}`, `response 5  no (code -1)`},
	} {
		m, err := decode([]byte(c.line))
		var got string
		var bad *badMessage
		switch v := m.(type) {
		case *jsonrpc.Request:
			if v.IsCall() {
				got = fmt.Sprintf("request %s %s %s", v.ID, v.Method, v.Params)
			} else {
				got = "notification " + v.Method
			}
		case *jsonrpc.Response:
			var e error
			if v.Error != nil {
				e = v.Error
			}
			got = fmt.Sprintf("response %s %s %v", v.ID, v.Result, e)
		default:
			if !errors.As(err, &bad) {
				t.Fatalf("%s: %v", c.line, err)
			}
			id := string(bad.id)
			if id == "" {
				id = "null"
			}
			got = fmt.Sprintf("bad %s %d %s", id, bad.err.Code, bad.err.Data.(map[string]string)["error"])
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, got, c.want)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The sessions are Backlog Sinks: Backlogged says whether the last message
// found stdout full (Options.OutputFull), so the engine merges a reply's
// deltas while the editor is not reading; without a probe never.
func TestBackloggedFollowsTheLastMessage(t *testing.T) {
	t.Parallel()
	var _ engine.Backlog = (*session)(nil)
	full := false
	var sizes []int
	srv := NewServer(io.Discard, Options{OutputFull: func(n int) bool { sizes = append(sizes, n); return full }})
	ss := &session{srv: srv}
	send := func() {
		bp := srv.c.out.Buf()
		*bp = append(*bp, "{}\n"...)
		srv.c.out.Send(bp)
	}
	if ss.Backlogged() {
		t.Fatal("backlogged before any message")
	}
	full = true
	send()
	if !ss.Backlogged() {
		t.Error("a message that found stdout full does not show a backlog")
	}
	full = false
	send()
	if ss.Backlogged() {
		t.Error("a message that fit still shows a backlog")
	}
	if len(sizes) != 2 || sizes[0] != 3 {
		t.Errorf("OutputFull asked about %v", sizes)
	}
	if (&session{srv: NewServer(io.Discard, Options{})}).Backlogged() {
		t.Error("backlogged without a probe")
	}
}
