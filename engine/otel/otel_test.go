package otel

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

// run makes the spans of one run with a tool call: run, chat, tool, chat.
func run(t *testing.T, content bool) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr := New(Options{Version: "1.2.3", Content: content, Exporter: exp, Sync: true})
	m := engine.Model{ID: "gpt-x", Provider: "openai", API: "openai-completions", MaxTokens: 1000}
	r := tr.StartRun(parent, engine.RunTrace{SessionID: "s-1", Model: &m, Prompt: "secret prompt"})
	req := &engine.Request{Model: m, SystemPrompt: "secret system", Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{engine.TextBlock("secret prompt")}}}}
	c := tr.StartChat(r, req)
	call := &engine.AssistantMessage{Model: "gpt-x-2025", StopReason: engine.StopToolUse, ResponseID: "resp-1",
		Content: []engine.ContentBlock{{Type: engine.BlockToolCall, ID: "call-1", Name: "bash", Arguments: []byte(`{"command":"secret cmd"}`)}},
		Usage:   engine.Usage{Input: 10, CacheRead: 5, Output: 7, Cost: engine.Cost{Total: 0.25}}}
	c.End(engine.SpanEnd{Message: call})
	tl := tr.StartTool(r, engine.ToolTrace{ID: "call-1", Name: "bash", Arguments: []byte(`{"command":"secret cmd"}`)})
	tl.End(engine.SpanEnd{Result: &engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock("secret output")}, IsError: true}})
	c2 := tr.StartChat(r, req)
	answer := &engine.AssistantMessage{Model: "gpt-x-2025", StopReason: engine.StopStop, Content: []engine.ContentBlock{engine.TextBlock("secret answer")}}
	c2.End(engine.SpanEnd{Message: answer})
	r.End(engine.SpanEnd{Message: answer})
	spans := exp.GetSpans() // Sync: exported as they ended; Shutdown clears them
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return spans
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestSpans(t *testing.T) {
	t.Parallel()
	spans := run(t, false)
	if len(spans) != 4 {
		t.Fatalf("%d spans", len(spans))
	}
	// Ended in order: chat, tool, chat, run.
	chat, tool, chat2, runSpan := spans[0], spans[1], spans[2], spans[3]
	names := []string{chat.Name, tool.Name, chat2.Name, runSpan.Name}
	if strings.Join(names, ",") != "chat gpt-x,execute_tool bash,chat gpt-x,invoke_agent xcsh" {
		t.Fatalf("names %v", names)
	}
	if got := runSpan.Parent.TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" || !runSpan.Parent.IsRemote() ||
		runSpan.Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("run's parent %v", runSpan.Parent)
	}
	for _, s := range spans[:3] {
		if s.Parent.SpanID() != runSpan.SpanContext.SpanID() || s.SpanContext.TraceID() != runSpan.Parent.TraceID() {
			t.Fatalf("%s is not a child of the run", s.Name)
		}
	}
	if chat.SpanKind != trace.SpanKindClient || tool.SpanKind != trace.SpanKindInternal || runSpan.SpanKind != trace.SpanKindInternal {
		t.Fatal("span kinds")
	}
	ra := attrs(runSpan)
	for k, v := range map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "xcsh", "gen_ai.agent.version": "1.2.3",
		"gen_ai.conversation.id": "s-1", "session.id": "s-1", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-x"} {
		if ra[attribute.Key(k)].AsString() != v {
			t.Errorf("run %s = %q, want %q", k, ra[attribute.Key(k)].Emit(), v)
		}
	}
	ca := attrs(chat)
	for k, v := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-x",
		"gen_ai.response.model": "gpt-x-2025", "gen_ai.conversation.id": "s-1", "gen_ai.response.id": "resp-1"} {
		if ca[attribute.Key(k)].AsString() != v {
			t.Errorf("chat %s = %q, want %q", k, ca[attribute.Key(k)].Emit(), v)
		}
	}
	for k, v := range map[string]int64{"gen_ai.usage.input_tokens": 15, "gen_ai.usage.output_tokens": 7, "gen_ai.usage.cache_read.input_tokens": 5, "gen_ai.request.max_tokens": 1000} {
		if ca[attribute.Key(k)].AsInt64() != v {
			t.Errorf("chat %s = %s, want %d", k, ca[attribute.Key(k)].Emit(), v)
		}
	}
	if fr := ca["gen_ai.response.finish_reasons"].AsStringSlice(); len(fr) != 1 || fr[0] != "tool_call" {
		t.Errorf("finish reasons %v", fr)
	}
	if ca["xcsh.usage.cost_usd"].AsFloat64() != 0.25 {
		t.Error("cost")
	}
	ta := attrs(tool)
	for k, v := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "call-1",
		"gen_ai.tool.type": "function", "gen_ai.conversation.id": "s-1", "error.type": "tool_error"} {
		if ta[attribute.Key(k)].AsString() != v {
			t.Errorf("tool %s = %q, want %q", k, ta[attribute.Key(k)].Emit(), v)
		}
	}
	if tool.Status.Code != codes.Error || chat.Status.Code == codes.Error {
		t.Error("status")
	}
	// No text of the conversation without Content.
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), "secret") {
				t.Errorf("%s carries %s=%s", s.Name, kv.Key, kv.Value.Emit())
			}
		}
	}
}

func TestSpansContent(t *testing.T) {
	t.Parallel()
	spans := run(t, true)
	chat, tool, runSpan := attrs(spans[0]), attrs(spans[1]), attrs(spans[3])
	for _, c := range []struct {
		a    map[attribute.Key]attribute.Value
		k    string
		want string
	}{
		{chat, "gen_ai.system_instructions", `[{"type":"text","content":"secret system"}]`},
		{chat, "gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"secret prompt"}]}]`},
		{chat, "gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"call-1","name":"bash","arguments":{"command":"secret cmd"}}],"finish_reason":"tool_call"}]`},
		{tool, "gen_ai.tool.call.arguments", `{"command":"secret cmd"}`},
		{tool, "gen_ai.tool.call.result", "secret output"},
		{runSpan, "gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"secret prompt"}]}]`},
		{runSpan, "gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"secret answer"}],"finish_reason":"stop"}]`},
	} {
		if got := c.a[attribute.Key(c.k)].AsString(); got != c.want {
			t.Errorf("%s = %s\nwant %s", c.k, got, c.want)
		}
	}
}

func TestNoSpanNoSDK(t *testing.T) {
	t.Parallel()
	tr := New(Options{})
	if err := tr.Shutdown(context.Background()); err != nil || tr.built != nil {
		t.Fatal("a Tracer without spans built the SDK")
	}
}

func TestTraceParentFormat(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tr := New(Options{Exporter: exp, Sync: true})
	sp := tr.StartRun(parent, engine.RunTrace{SessionID: "s"})
	tp := sp.TraceParent()
	if !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || !strings.HasSuffix(tp, "-01") || len(tp) != 55 {
		t.Fatalf("traceparent %q", tp)
	}
	sp.End(engine.SpanEnd{})
	// An unsampled caller: the run is not sampled either, and says so.
	sp = tr.StartRun("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", engine.RunTrace{SessionID: "s"})
	if tp := sp.TraceParent(); !strings.HasSuffix(tp, "-00") {
		t.Fatalf("unsampled traceparent %q", tp)
	}
	sp.End(engine.SpanEnd{})
	// A malformed traceparent starts a new trace.
	sp = tr.StartRun("garbage", engine.RunTrace{SessionID: "s"})
	if tp := sp.TraceParent(); strings.Contains(tp, "0af7651916cd43dd8448eb211c80319c") || len(tp) != 55 {
		t.Fatalf("traceparent %q", tp)
	}
	sp.End(engine.SpanEnd{})
	if n := len(exp.GetSpans()); n != 2 {
		t.Fatalf("%d spans exported, want the 2 sampled", n)
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	defer srv.Close()
	c := &http.Client{Transport: Transport(nil)}
	exp := tracetest.NewInMemoryExporter()
	tr := New(Options{Exporter: exp, Sync: true})
	sp := tr.StartRun("", engine.RunTrace{SessionID: "s"})
	defer sp.End(engine.SpanEnd{})
	for _, ctx := range []context.Context{context.Background(), engine.WithTraceParent(context.Background(), sp.TraceParent())} {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("traceparent") != "" {
			t.Fatal("the caller's request was changed")
		}
	}
	if h := <-got; h != "" {
		t.Fatalf("a request under no span carried %q", h)
	}
	if h := <-got; h != sp.TraceParent() {
		t.Fatalf("traceparent %q, want %q", h, sp.TraceParent())
	}
}

func TestConfigure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		flag bool
		on   bool
		warn string
	}{
		{"nothing", nil, false, false, ""},
		{"flag", nil, true, true, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/v1/traces"}, false, true, ""},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, false, true, ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, true, false, ""},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false, false, ""},
		{"disabled with flag", map[string]string{"OTEL_SDK_DISABLED": "true"}, true, false, "OTEL_SDK_DISABLED"},
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true, false, "tracing off: OTEL_TRACES_EXPORTER console not supported"},
		{"otlp and zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "otlp,zipkin"}, false, true, "OTEL_TRACES_EXPORTER zipkin not supported"},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false, false, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc not supported"},
		{"grpc for traces", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, false, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc"},
		{"http", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, true, true, ""},
		{"grpc but off", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			on, warn := Configure(func(k string) string { return c.env[k] }, c.flag)
			if on != c.on || (c.warn == "") != (warn == "") || !strings.Contains(warn, c.warn) {
				t.Fatalf("Configure = %v, %q; want %v, %q", on, warn, c.on, c.warn)
			}
		})
	}
}
