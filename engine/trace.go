package engine

import "context"

// Tracer is the tracing port: the spans a session opens while it works,
// after OpenTelemetry's GenAI conventions (engine/otel implements it with
// the OpenTelemetry SDK; cmd/xcsh wires it). Config.Tracer is nil unless
// tracing is configured, and then the engine opens no span and asks
// nothing: a nil check per run, model call and tool call is the whole
// cost.
//
// The engine calls it from the run's goroutine and from tool calls'
// goroutines, never from the executor, so an implementation may take a
// lock or allocate; it must not block on I/O (the SDK's batch processor
// exports on its own goroutine).
type Tracer interface {
	// StartRun opens the span of one run of the agent (invoke_agent):
	// from the prompt's agent_start to the session going idle after it,
	// retries and post-run work included. parent is the caller's W3C
	// traceparent ("" starts a new trace).
	StartRun(parent string, run RunTrace) Span
	// StartChat opens the span of one model call (chat) under run.
	StartChat(run Span, req *Request) Span
	// StartTool opens the span of one tool call (execute_tool) under run;
	// arguments are the call's, as the model gave them.
	StartTool(run Span, call ToolTrace) Span
}

// RunTrace is what the span of a run is about.
type RunTrace struct {
	SessionID string
	Model     *Model // the session's model when the run starts; nil: none
	// Prompt is the text of the user message the run answers ("" for a
	// run that a custom message started).
	Prompt string
}

// ToolTrace is what the span of a tool call is about.
type ToolTrace struct {
	ID, Name  string
	Arguments []byte
}

// Span is one open span of a Tracer.
type Span interface {
	// TraceParent is the span's W3C traceparent: what a provider's HTTP
	// request, an MCP request's _meta and a tool's child process carry to
	// join the trace.
	TraceParent() string
	// End closes the span with what came of it.
	End(SpanEnd)
}

// SpanEnd is how a span's work ended: one of its fields is set by kind.
type SpanEnd struct {
	// Message is a model call's answer (chat), or the run's last assistant
	// message (invoke_agent; nil when the run produced none).
	Message *AssistantMessage
	// Result is a tool call's result (execute_tool).
	Result *ToolResult
}

// traceKey is the context key of the span (or the caller's traceparent)
// work runs under.
type traceKey struct{}

// WithTraceParent returns ctx carrying a caller's W3C traceparent (print
// mode's TRACEPARENT, a session's prompt from a front that reads one):
// TraceParent(ctx) reports it until a span of the session replaces it.
// An empty tp returns ctx unchanged.
func WithTraceParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, tp)
}

// withSpan returns ctx running under sp (nil: ctx unchanged).
func withSpan(ctx context.Context, sp Span) context.Context {
	if sp == nil {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, sp)
}

// TraceParent is the W3C traceparent of the work ctx belongs to: the span
// of the model call or tool call it runs under when tracing is on, else
// a caller's traceparent given with WithTraceParent, else "". Adapters put
// it on their requests, tools in their children's environment
// (TRACEPARENT) and MCP requests in their _meta.
func TraceParent(ctx context.Context) string {
	switch v := ctx.Value(traceKey{}).(type) {
	case Span:
		return v.TraceParent()
	case string:
		return v
	}
	return ""
}

// runTrace is what the span of a run starting with prompts is about.
// (actor)
func (s *Session) runTrace(prompts []Message) RunTrace {
	t := RunTrace{SessionID: s.set.id}
	if s.set.model != nil {
		m := *s.set.model // the span reads it off the executor
		t.Model = &m
	}
	for _, m := range prompts {
		if u, ok := m.(*UserMessage); ok {
			t.Prompt = joinText(u.Content)
			break
		}
	}
	return t
}

// endRunSpan closes the span of a run that is over (on its goroutine,
// after the step that made the session idle): its last assistant message
// says how it ended.
func endRunSpan(r *run) {
	var last *AssistantMessage
	for i := len(r.newMessages) - 1; i >= 0 && last == nil; i-- {
		last, _ = r.newMessages[i].(*AssistantMessage)
	}
	r.span.End(SpanEnd{Message: last})
}
