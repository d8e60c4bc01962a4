package client

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
)

// fakeAgent is the far end of a Client made with New over pipes: the test
// plays the agent, line by line.
type fakeAgent struct {
	t   *testing.T
	in  *bufio.Reader  // what the client wrote
	out *io.PipeWriter // to the client
	c   *Client
}

func newFake(t *testing.T, opts Options) *fakeAgent {
	t.Helper()
	cr, aw := io.Pipe()
	ar, cw := io.Pipe()
	if opts.CloseGrace == 0 {
		opts.CloseGrace = time.Second
	}
	f := &fakeAgent{t: t, in: bufio.NewReader(ar), out: aw, c: New(cr, cw, opts)}
	t.Cleanup(func() {
		aw.Close()
		ar.Close()
		f.c.Close()
	})
	return f
}

func (f *fakeAgent) write(lines ...string) {
	f.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(f.out, l+"\n"); err != nil {
			f.t.Fatal(err)
		}
	}
}

// read returns the next line the client wrote, decoded.
func (f *fakeAgent) read() map[string]any {
	f.t.Helper()
	line, err := f.in.ReadBytes('\n')
	if err != nil {
		f.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		f.t.Fatalf("client wrote %q: %v", line, err)
	}
	return m
}

func TestRequestFrameIDAndTypeWin(t *testing.T) {
	t.Parallel()
	b, err := encodeRequest("c7", "get_state", "", map[string]any{"id": 1, "type": "prompt", "x": "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"id":1,"type":"prompt","x":"<&>","type":"get_state","id":"c7"}`+"\n" {
		t.Errorf("frame %s", got)
	}
	// A session's sessionId also comes after the fields.
	b, err = encodeRequest("c8", "get_state", "s1", map[string]any{"sessionId": "other"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"sessionId":"other","sessionId":"s1","type":"get_state","id":"c8"}`+"\n" {
		t.Errorf("frame %s", got)
	}
	if _, err := encodeRequest("c1", "x", "", []int{1}); err == nil {
		t.Error("an array as fields was accepted")
	}
}

func TestIDLessFramesMatchedByRule(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	ctx := testCtx(t)
	errs := map[string]chan error{"bash": make(chan error, 1), "get_state": make(chan error, 1), "frob": make(chan error, 1)}
	for _, typ := range []string{"bash", "get_state", "frob"} {
		go func() {
			_, err := f.c.Call(ctx, typ, nil)
			errs[typ] <- err
		}()
		if got := f.read()["type"]; got != typ {
			t.Fatalf("client sent %v, want %s", got, typ)
		}
	}
	// A parse frame goes to the oldest request not answered out of order;
	// Unknown command to the oldest of its type.
	f.write(`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: boom"}`,
		`{"type":"response","command":"frob","success":false,"error":"Unknown command: frob"}`,
		`{"type":"response","command":"parse","success":false,"error":"Failed to parse command: again"}`)
	wantCommandError(t, <-errs["get_state"], "parse", "boom")
	wantCommandError(t, <-errs["frob"], "frob", "Unknown command: frob")
	wantCommandError(t, <-errs["bash"], "parse", "again")
}

func TestPromptLateErrorAndSettlement(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	ctx := testCtx(t)
	type ack struct {
		h   *PromptHandle
		err error
	}
	prompt := func() (chan ack, string) {
		ch := make(chan ack, 1)
		go func() {
			h, err := f.c.Prompt(ctx, "hi", PromptOptions{StreamingBehavior: "steer", Images: []Image{{Data: "AA==", MimeType: "image/png"}}})
			ch <- ack{h, err}
		}()
		req := f.read()
		if req["streamingBehavior"] != "steer" || req["images"] == nil {
			t.Errorf("prompt frame %v", req)
		}
		return ch, req["id"].(string)
	}

	// Success, then the late failure with the same id.
	ch, id := prompt()
	f.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"prompt","success":true}`, id),
		fmt.Sprintf(`{"id":%q,"type":"response","command":"prompt","success":false,"error":"No API key found for x."}`, id))
	a := <-ch
	if a.err != nil {
		t.Fatal(a.err)
	}
	wantCommandError(t, a.h.Err(ctx), "prompt", "No API key")

	// Success, then a run starts: settled without error.
	ch, id = prompt()
	f.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"prompt","success":true}`, id), `{"type":"agent_start"}`)
	a = <-ch
	if a.err != nil || a.h.Err(ctx) != nil {
		t.Fatalf("prompt = %v, late %v", a.err, a.h.Err(ctx))
	}

	// The original writes a synchronous failure before the success frame:
	// the failure is the acknowledgement's.
	ch, id = prompt()
	f.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"prompt","success":false,"error":"Agent is already processing."}`, id),
		fmt.Sprintf(`{"id":%q,"type":"response","command":"prompt","success":true}`, id))
	wantCommandError(t, (<-ch).err, "prompt", "already processing")
}

func TestFramingWholeAndTorn(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	ctx := testCtx(t)
	events, cancel := f.c.Subscribe(0)
	defer cancel()
	big := strings.Repeat("x", 200<<10) // past bufio's and Scanner's defaults
	stream := "{\"type\":\"ready\",\"version\":\"9.9.9\"}\r\n\n  \n" +
		`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"` + big + `"}}` + "\n"
	// Two bytes at a time, as test2json's golden test feeds its reader.
	go func() {
		for i := 0; i < len(stream); i += 2 {
			end := min(i+2, len(stream))
			if _, err := io.WriteString(f.out, stream[i:end]); err != nil {
				return
			}
		}
	}()
	if err := f.c.WaitReady(ctx); err != nil || f.c.Version() != "9.9.9" {
		t.Fatalf("ready: %v, version %q", err, f.c.Version())
	}
	ev := <-events
	if ev.Type != "ready" {
		t.Fatalf("first event %q", ev.Type)
	}
	ev = <-events
	if kind, d, ok := ev.AssistantEvent(); !ok || kind != "text_delta" || d != big {
		t.Fatalf("big event: %v %q (%d bytes)", ok, kind, len(d))
	}
}

func TestTimeoutThenLateResponseIsAnEvent(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{Timeout: 20 * time.Millisecond})
	events, cancel := f.c.Subscribe(0)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.c.GetState(context.Background())
		done <- err
	}()
	id := f.read()["id"].(string)
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	f.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{}}`, id))
	if ev := <-events; ev.Type != "response" {
		t.Errorf("late response delivered as %q", ev.Type)
	}
}

func TestSlowSubscriberNeverBlocksResponses(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	ctx := testCtx(t)
	stalled, cancelStalled := f.c.Subscribe(0) // never read until the end
	defer cancelStalled()
	done := make(chan error, 1)
	go func() {
		_, err := f.c.GetState(ctx)
		done <- err
	}()
	id := f.read()["id"].(string)
	const n = 2000
	for i := range n {
		f.write(fmt.Sprintf(`{"type":"turn_start","n":%d}`, i))
	}
	f.write(fmt.Sprintf(`{"id":%q,"type":"response","command":"get_state","success":true,"data":{"sessionId":"s"}}`, id))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ev := <-stalled
		var got int
		if !ev.Field("n", &got) || got != i {
			t.Fatalf("event %d: %s", i, ev.Raw)
		}
	}
}

type recordingUI struct {
	notices chan UIRequest
	dialog  func(ctx context.Context, req UIRequest) (UIResponse, error)
}

func (r *recordingUI) Dialog(ctx context.Context, req UIRequest) (UIResponse, error) {
	return r.dialog(ctx, req)
}
func (r *recordingUI) Notify(req UIRequest) { r.notices <- req }

func TestUIDialogs(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	editorCause := make(chan error, 1)
	editorStarted := make(chan struct{})
	ui := &recordingUI{notices: make(chan UIRequest, 4)}
	ui.dialog = func(ctx context.Context, req UIRequest) (UIResponse, error) {
		switch req.Method {
		case "select":
			return UIResponse{Value: req.Options[1]}, nil
		case "confirm":
			return UIResponse{Confirmed: true}, nil
		case "input": // outlives its timeout
			<-ctx.Done()
			return UIResponse{Value: "late"}, nil
		case "editor":
			close(editorStarted)
			<-ctx.Done()
			editorCause <- context.Cause(ctx)
			return UIResponse{Value: "unused"}, nil
		}
		return UIResponse{}, errors.New("unexpected")
	}
	f.c.OnUI(ui)

	f.write(`{"type":"extension_ui_request","id":"u1","method":"select","title":"Pick","options":["a","b"]}`)
	if r := f.read(); r["type"] != "extension_ui_response" || r["id"] != "u1" || r["value"] != "b" {
		t.Errorf("select reply %v", r)
	}
	f.write(`{"type":"extension_ui_request","id":"u2","method":"confirm","title":"Sure?","message":"Really?"}`)
	if r := f.read(); r["id"] != "u2" || r["confirmed"] != true || r["value"] != nil {
		t.Errorf("confirm reply %v", r)
	}
	f.write(`{"type":"extension_ui_request","id":"u3","method":"input","title":"Name","timeout":10}`)
	if r := f.read(); r["id"] != "u3" || r["cancelled"] != true || r["timedOut"] != true {
		t.Errorf("timed-out input reply %v", r)
	}
	f.write(`{"type":"extension_ui_request","id":"u4","method":"editor","title":"Edit","prefill":"x"}`)
	<-editorStarted
	f.write(`{"type":"extension_ui_request","id":"u5","method":"cancel","targetId":"u4"}`)
	if err := <-editorCause; !errors.Is(err, errUICancel) {
		t.Errorf("editor ctx cause %v", err)
	}
	f.write(`{"type":"extension_ui_request","id":"u6","method":"notify","message":"Retrying in 2s","notifyType":"warning"}`,
		`{"type":"extension_ui_request","id":"u7","method":"setStatus","statusKey":"k"}`)
	if n := <-ui.notices; n.Method != "notify" || n.Message != "Retrying in 2s" || n.NotifyType != "warning" {
		t.Errorf("notice %+v", n)
	}
	if n := <-ui.notices; n.Method != "setStatus" || n.StatusText != nil {
		t.Errorf("notice %+v", n)
	}
	// Nothing was answered for the cancelled editor or the notices: the
	// next line is the reply to the next dialog.
	f.write(`{"type":"extension_ui_request","id":"u8","method":"select","title":"Again","options":["x","y"]}`)
	if r := f.read(); r["id"] != "u8" {
		t.Errorf("next reply %v", r)
	}

	// Without a handler, dialogs are cancelled at once.
	f.c.OnUI(nil)
	f.write(`{"type":"extension_ui_request","id":"u9","method":"confirm","title":"?"}`)
	if r := f.read(); r["id"] != "u9" || r["cancelled"] != true {
		t.Errorf("default reply %v", r)
	}
}

func TestCloseOverStreamsFailsPending(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{CloseGrace: 10 * time.Millisecond})
	done := make(chan error, 1)
	go func() {
		_, err := f.c.Call(context.Background(), "get_state", nil)
		done <- err
	}()
	f.read()
	if err := f.c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("pending request: %v", err)
	}
	if _, err := f.in.ReadBytes('\n'); err != io.EOF {
		t.Errorf("stdin not closed: %v", err)
	}
}

func TestStreamEndDrainsSubscribersAndFailsPending(t *testing.T) {
	t.Parallel()
	f := newFake(t, Options{})
	events, cancel := f.c.Subscribe(0)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.c.GetState(context.Background())
		done <- err
	}()
	f.read()
	f.write(`{"type":"agent_start"}`, `{"type":"agent_end","messages":[]}`)
	f.out.Close() // the agent's stdout ends
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("pending request: %v", err)
	}
	var got []string
	for ev := range events { // closed after the queued events
		got = append(got, ev.Type)
	}
	if strings.Join(got, ",") != "agent_start,agent_end" {
		t.Errorf("events %v", got)
	}
	<-f.c.Done()
	if _, err := f.c.WaitFor(context.Background(), IsType("agent_end")); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitFor after the end: %v", err)
	}
}
