package extkit

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// agent plays the agent's end of the wire: it writes lines to the
// extension and reads what it answers.
type agent struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Reader
	done chan error
}

func serve(t *testing.T, x *Extension) *agent {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &agent{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() { a.done <- Serve(context.Background(), x, inR, outW); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after stdin closed")
		}
	})
	return a
}

func (a *agent) send(line string) {
	a.t.Helper()
	if _, err := io.WriteString(a.in, line+"\n"); err != nil {
		a.t.Fatal(err)
	}
}

// next reads the extension's next line as a map.
func (a *agent) next() map[string]any {
	a.t.Helper()
	line, err := a.out.ReadString('\n')
	if err != nil {
		a.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		a.t.Fatalf("%q: %v", line, err)
	}
	return m
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestHandshakeListsWhatIsOffered(t *testing.T) {
	t.Parallel()
	x := &Extension{Name: "demo", Tools: []Tool{{Name: "t", Description: "a tool", Exclusive: true}},
		Commands: []Command{{Name: "c", Description: "a command"}}}
	x.On("agent_end", func(*Context, Event) (any, error) { return nil, nil })
	a := serve(t, x)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"sessionId":"s"}}`)
	m := a.next()
	res := compact(m["result"])
	for _, want := range []string{`"name":"demo"`, `"subscribe":["agent_end"]`, `"concurrency":"exclusive"`,
		`"parameters":{"properties":{},"type":"object"}`, `"commands":[{"description":"a command","name":"c"}]`} {
		if !strings.Contains(res, want) {
			t.Fatalf("no %s in %s", want, res)
		}
	}
	if m["id"].(float64) != 1 {
		t.Fatalf("id %v", m["id"])
	}
}

func TestToolCallAndToolExecute(t *testing.T) {
	t.Parallel()
	x := &Extension{Tools: []Tool{{Name: "echo", Description: "echo", Execute: func(c *Context, call ToolCall) (ToolResult, error) {
		_ = c.Update(ToolResult{Content: Text("partial")})
		return ToolResult{Content: Text("got " + string(call.Input))}, nil
	}}}}
	x.OnToolCall(func(c *Context, ev ToolCallEvent) (*ToolCallResult, error) {
		if ev.ToolName == "bash" {
			return &ToolCallResult{Block: true, Reason: "no"}, nil
		}
		return nil, nil
	})
	a := serve(t, x)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tool_call","params":{"type":"tool_call","sessionId":"s","toolName":"bash","toolCallId":"c1","input":{}}}`)
	if got := compact(a.next()); got != `{"id":1,"jsonrpc":"2.0","result":{"block":true,"reason":"no"}}` {
		t.Fatal(got)
	}
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tool_call","params":{"type":"tool_call","toolName":"read","toolCallId":"c2","input":{}}}`)
	if got := compact(a.next()); got != `{"id":2,"jsonrpc":"2.0","result":null}` {
		t.Fatal(got)
	}
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tool/execute","params":{"toolCallId":"c3","toolName":"echo","input":{"x":1}}}`)
	if got := compact(a.next()); got != `{"jsonrpc":"2.0","method":"tool/update","params":{"partialResult":{"content":[{"text":"partial","type":"text"}]},"toolCallId":"c3"}}` {
		t.Fatal(got)
	}
	if got := compact(a.next()); got != `{"id":3,"jsonrpc":"2.0","result":{"content":[{"text":"got {\"x\":1}","type":"text"}]}}` {
		t.Fatal(got)
	}
}

// A handler's calls carry its session and the request it handles, and
// their answers come back to it; an error answer is an error.
func TestCallsCarrySessionAndDuring(t *testing.T) {
	t.Parallel()
	x := &Extension{}
	x.On("tool_call", func(c *Context, ev Event) (any, error) {
		ok, err := c.Confirm("Sure?", "really", 2*time.Second)
		if err != nil {
			return nil, err
		}
		if err := c.Notify("hi", "info"); err != nil {
			return map[string]any{"reason": err.Error(), "stale": IsStale(err), "confirmed": ok}, nil
		}
		return nil, nil
	})
	a := serve(t, x)
	a.send(`{"jsonrpc":"2.0","id":7,"method":"tool_call","params":{"type":"tool_call","sessionId":"s9","toolName":"x"}}`)
	req := a.next()
	if req["method"] != "ui.confirm" || compact(req["params"]) != `{"during":7,"message":"really","sessionId":"s9","timeout":2000,"title":"Sure?"}` {
		t.Fatal(compact(req))
	}
	a.send(`{"jsonrpc":"2.0","id":` + compact(req["id"]) + `,"result":{"confirmed":true}}`)
	req = a.next()
	if req["method"] != "ui.notify" {
		t.Fatal(compact(req))
	}
	a.send(`{"jsonrpc":"2.0","id":` + compact(req["id"]) + `,"error":{"code":-32001,"message":"stale session: s9"}}`)
	if got := compact(a.next()["result"]); got != `{"confirmed":true,"reason":"stale session: s9 (code -32001)","stale":true}` {
		t.Fatal(got)
	}
}

func TestCancelRequestEndsTheHandler(t *testing.T) {
	t.Parallel()
	x := &Extension{}
	started := make(chan struct{})
	x.On("tool_call", func(c *Context, ev Event) (any, error) {
		close(started)
		<-c.Context().Done()
		return nil, c.Context().Err()
	})
	a := serve(t, x)
	a.send(`{"jsonrpc":"2.0","id":1,"method":"tool_call","params":{}}`)
	<-started
	a.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	m := a.next()
	if compact(m["error"]) != `{"code":-32000,"message":"context canceled"}` {
		t.Fatal(compact(m))
	}
}

// Events are handled one at a time, in the order they came.
func TestEventsInOrder(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	x := &Extension{}
	x.On("message_update", func(c *Context, ev Event) (any, error) {
		var p struct {
			N int `json:"n"`
		}
		_ = ev.Decode(&p)
		mu.Lock()
		seen = append(seen, ev.Type+string(rune('0'+p.N)))
		if len(seen) == 5 {
			close(done)
		}
		mu.Unlock()
		return nil, nil
	})
	a := serve(t, x)
	for i := 0; i < 5; i++ {
		a.send(`{"jsonrpc":"2.0","method":"message_update","params":{"type":"message_update","n":` + string(rune('0'+i)) + `}}`)
	}
	a.send(`not json at all`)
	<-done
	if strings.Join(seen, ",") != "message_update0,message_update1,message_update2,message_update3,message_update4" {
		t.Fatal(seen)
	}
}
