// Package otel implements the engine's tracing port (engine.Tracer) with
// the OpenTelemetry SDK and exports the spans over OTLP/HTTP: one
// invoke_agent span per run, a chat span per model call and an
// execute_tool span per tool call, after the GenAI semantic conventions,
// each carrying the session id (gen_ai.conversation.id).
//
// Tracing is off unless the standard OTEL_* variables (or xcsh's --otel)
// ask for it: Configure decides, and cmd/xcsh builds a Tracer only then,
// so a process without tracing never reaches the SDK. A Tracer builds its
// exporter and provider on its first span, not at start-up: a process
// that is ready sooner than it is prompted pays nothing on its start.
//
// Prompt and tool text stays out of the spans unless Options.Content
// (--otel-content) says otherwise.
package otel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// AgentName is gen_ai.agent.name and the default service.name.
const AgentName = "xcsh"

// Options configure a Tracer.
type Options struct {
	// Version is the agent's version (service.version, gen_ai.agent.version).
	Version string
	// Content records prompts, answers, tool arguments and results in the
	// spans (gen_ai.input.messages and the like); off, only names, ids,
	// models, token counts and outcomes are recorded.
	Content bool
	// Exporter receives the spans; nil: OTLP over HTTP, configured by the
	// OTEL_EXPORTER_OTLP_* variables (export.go).
	Exporter sdktrace.SpanExporter
	// Getenv reads those variables; nil: os.Getenv.
	Getenv func(string) string
	// Sync exports each span as it ends (tests and benchmarks); the
	// default batches them on the SDK's goroutine (OTEL_BSP_*).
	Sync bool
	// Log receives the exporter's failures; nil discards them.
	Log io.Writer
}

// Tracer implements engine.Tracer. It is safe for concurrent use.
type Tracer struct {
	opts Options
	// sdk builds the provider on the first span (see the package doc).
	sdk func() *state
	// built is set once sdk has run: Shutdown has nothing to flush before.
	mu    sync.Mutex
	built *state
}

// state is the SDK side of a Tracer, built once.
type state struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

var _ engine.Tracer = (*Tracer)(nil)

// New returns a Tracer; nothing of the SDK is built until its first span.
func New(o Options) *Tracer {
	t := &Tracer{opts: o}
	t.sdk = sync.OnceValue(t.build)
	return t
}

// build makes the exporter and the provider (the first span's cost).
func (t *Tracer) build() *state {
	exp := t.opts.Exporter
	if exp == nil {
		// Reads OTEL_EXPORTER_OTLP_*; connects to nothing yet.
		getenv := t.opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		e, err := newExporter(getenv)
		if err != nil {
			t.logf("tracing off: %v", err)
			exp = discard{}
		} else {
			exp = logged{e, t}
		}
	}
	res, err := resource.New(context.Background(),
		resource.WithAttributes(keyServiceName.String(AgentName), keyServiceVersion.String(t.opts.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && res == nil {
		res = resource.Default()
	}
	proc := sdktrace.NewBatchSpanProcessor(exp)
	if t.opts.Sync {
		proc = sdktrace.NewSimpleSpanProcessor(exp)
	}
	// The sampler is the SDK's default unless OTEL_TRACES_SAMPLER says
	// otherwise: a caller's sampled flag decides for its children.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(proc), sdktrace.WithResource(res))
	s := &state{tp: tp, tracer: tp.Tracer("github.com/xcsh-go/xcsh", trace.WithInstrumentationVersion(t.opts.Version))}
	t.mu.Lock()
	t.built = s
	t.mu.Unlock()
	return s
}

// Shutdown exports the spans not yet exported and stops the exporter,
// within ctx. A Tracer that never made a span has nothing to do.
func (t *Tracer) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	s := t.built
	t.mu.Unlock()
	if s == nil {
		return nil
	}
	if err := s.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("exporting traces: %w", err)
	}
	return nil
}

func (t *Tracer) logf(format string, args ...any) {
	if t.opts.Log != nil {
		fmt.Fprintf(t.opts.Log, "xcsh: "+format+"\n", args...)
	}
}

// span is one open span and what its children need of it.
type span struct {
	t       *Tracer
	s       trace.Span
	session string
	tp      string // the W3C traceparent, made once
	kind    spanRole
	model   *engine.Model // invoke_agent: the run's model when it started
}

type spanRole int

const (
	kindRun spanRole = iota
	kindChat
	kindTool
)

// StartRun implements engine.Tracer.
func (t *Tracer) StartRun(parent string, r engine.RunTrace) engine.Span {
	ctx := context.Background()
	if parent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": parent})
	}
	attrs := []attribute.KeyValue{
		keyOperation.String("invoke_agent"),
		keyAgentName.String(AgentName),
		keyAgentVersion.String(t.opts.Version),
		keyConversation.String(r.SessionID),
		keySessionID.String(r.SessionID),
	}
	if m := r.Model; m != nil {
		attrs = append(attrs, keyProvider.String(m.Provider), keyRequestModel.String(m.ID))
	}
	if t.opts.Content && r.Prompt != "" {
		attrs = append(attrs, keyInputMessages.String(textMessages("user", r.Prompt)))
	}
	_, s := t.sdk().tracer.Start(ctx, "invoke_agent "+AgentName,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return t.wrap(s, r.SessionID, kindRun, r.Model)
}

// StartChat implements engine.Tracer.
func (t *Tracer) StartChat(run engine.Span, req *engine.Request) engine.Span {
	p := run.(*span)
	m := req.Model
	attrs := []attribute.KeyValue{
		keyOperation.String("chat"),
		keyProvider.String(m.Provider),
		keyRequestModel.String(m.ID),
		keyConversation.String(p.session),
		keySessionID.String(p.session),
	}
	if m.MaxTokens > 0 {
		attrs = append(attrs, keyRequestMaxTokens.Int64(int64(m.MaxTokens)))
	}
	if t.opts.Content {
		if req.SystemPrompt != "" {
			attrs = append(attrs, keySystem.String(textParts(req.SystemPrompt)))
		}
		attrs = append(attrs, keyInputMessages.String(inputMessages(req.Messages)))
	}
	_, s := t.sdk().tracer.Start(p.context(), "chat "+m.ID,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return t.wrap(s, p.session, kindChat, nil)
}

// StartTool implements engine.Tracer.
func (t *Tracer) StartTool(run engine.Span, call engine.ToolTrace) engine.Span {
	p := run.(*span)
	attrs := []attribute.KeyValue{
		keyOperation.String("execute_tool"),
		keyToolName.String(call.Name),
		keyToolCallID.String(call.ID),
		keyToolType.String("function"),
		keyConversation.String(p.session),
		keySessionID.String(p.session),
	}
	if t.opts.Content {
		attrs = append(attrs, keyToolArguments.String(string(call.Arguments)))
	}
	_, s := t.sdk().tracer.Start(p.context(), "execute_tool "+call.Name,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return t.wrap(s, p.session, kindTool, nil)
}

func (t *Tracer) wrap(s trace.Span, session string, kind spanRole, model *engine.Model) *span {
	return &span{t: t, s: s, session: session, tp: traceParent(s.SpanContext()), kind: kind, model: model}
}

// context is a context holding sp, to start its children in.
func (sp *span) context() context.Context {
	return trace.ContextWithSpan(context.Background(), sp.s)
}

// TraceParent implements engine.Span.
func (sp *span) TraceParent() string { return sp.tp }

// End implements engine.Span.
func (sp *span) End(e engine.SpanEnd) {
	switch sp.kind {
	case kindRun, kindChat:
		if m := e.Message; m != nil {
			sp.endMessage(m)
		}
	case kindTool:
		if r := e.Result; r != nil {
			if sp.t.opts.Content {
				sp.s.SetAttributes(keyToolResult.String(resultText(r)))
			}
			if r.IsError {
				sp.s.SetAttributes(keyErrorType.String("tool_error"))
				sp.s.SetStatus(codes.Error, "")
			}
		}
	}
	sp.s.End()
}

// endMessage records an answer: on a chat span the response and its
// usage, on a run's the outcome of its last answer.
func (sp *span) endMessage(m *engine.AssistantMessage) {
	s := sp.s
	if sp.kind == kindChat {
		u := m.Usage
		s.SetAttributes(
			keyResponseModel.String(m.Model),
			keyFinishReasons.StringSlice([]string{finishReason(m.StopReason)}),
			// input_tokens counts every input token, cached ones included,
			// as the conventions ask; the cache's share follows.
			keyInputTokens.Int64(u.Input+u.CacheRead+u.CacheWrite),
			keyOutputTokens.Int64(u.Output),
		)
		if u.CacheRead > 0 {
			s.SetAttributes(keyCacheRead.Int64(u.CacheRead))
		}
		if u.CacheWrite > 0 {
			s.SetAttributes(keyCacheCreation.Int64(u.CacheWrite))
		}
		if u.Cost.Total > 0 {
			s.SetAttributes(attribute.Float64("xcsh.usage.cost_usd", u.Cost.Total))
		}
		if m.ResponseID != "" {
			s.SetAttributes(keyResponseID.String(m.ResponseID))
		}
	}
	if sp.t.opts.Content {
		s.SetAttributes(keyOutputMessages.String(outputMessages(m)))
	}
	switch m.StopReason {
	case engine.StopError:
		s.SetAttributes(keyErrorType.String("provider_error"))
		s.SetStatus(codes.Error, m.ErrorMessage)
	case engine.StopAborted:
		s.SetAttributes(keyErrorType.String("aborted"))
		s.SetStatus(codes.Error, m.ErrorMessage)
	}
}

// finishReason maps a stop reason to the conventions' finish reasons.
func finishReason(r engine.StopReason) string {
	switch r {
	case engine.StopToolUse:
		return "tool_call"
	case engine.StopAborted:
		return "cancelled"
	}
	return string(r) // stop, length, error
}

// traceParent formats sc as a W3C traceparent header value.
func traceParent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
}

// logged tells the log about an export that failed, once per failure:
// the batch processor drops the error otherwise.
type logged struct {
	*exporter
	t *Tracer
}

func (l logged) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := l.exporter.ExportSpans(ctx, spans)
	if err != nil {
		l.t.logf("%v (%d spans lost)", err, len(spans))
	}
	return err
}

// discard is the exporter of a Tracer whose OTLP exporter could not be
// made: spans go nowhere, the agent works on.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// ShutdownTimeout bounds the export of the last spans when the process
// ends: a collector that does not answer must not hold the exit.
const ShutdownTimeout = 5 * time.Second

// ErrUnsupported says which setting asks for something this build does not
// export.
var ErrUnsupported = errors.New("not supported")
