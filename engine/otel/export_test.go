package otel

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// sampleSpans makes two spans with every kind of field the encoder
// writes: a remote parent, attributes of each type, an event, a link, an
// error status.
func sampleSpans(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	res := resource.NewSchemaless(attribute.String("service.name", "xcsh"), attribute.Int("n", 7))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	tr := tp.Tracer("scope-a", trace.WithInstrumentationVersion("1.0"))
	ctx := propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	ctx, root := tr.Start(ctx, "root", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("s", "v"), attribute.String("empty", ""), attribute.Int64("i", -3), attribute.Float64("f", 0.25),
		attribute.Bool("b", true), attribute.Bool("no", false), attribute.StringSlice("ss", []string{"a", "b"}),
		attribute.Int64Slice("is", []int64{1, 2}), attribute.Float64Slice("fs", []float64{1.5}), attribute.BoolSlice("bs", []bool{true})))
	root.AddEvent("ev", trace.WithAttributes(attribute.String("k", "x")))
	_, child := tr.Start(ctx, "child", trace.WithLinks(trace.Link{SpanContext: root.SpanContext(), Attributes: []attribute.KeyValue{attribute.Int("l", 1)}}))
	child.SetStatus(codes.Error, "it broke")
	child.End()
	root.End()
	return exp.GetSpans().Snapshots()
}

func decode(t *testing.T, b []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("the official types do not decode the request: %v", err)
	}
	return &req
}

// TestWireDecodes: the hand-written encoding decodes with the protocol's
// generated types to the spans it was made from.
func TestWireDecodes(t *testing.T) {
	t.Parallel()
	spans := sampleSpans(t)
	req := decode(t, encodeRequest(spans))
	if len(req.ResourceSpans) != 1 || len(req.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("structure %v", req)
	}
	rs := req.ResourceSpans[0]
	if a := rs.Resource.Attributes; len(a) != 2 || a[0].Key != "n" || a[0].Value.GetIntValue() != 7 || a[1].Value.GetStringValue() != "xcsh" {
		t.Fatalf("resource %v", a)
	}
	ss := rs.ScopeSpans[0]
	if ss.Scope.Name != "scope-a" || ss.Scope.Version != "1.0" || len(ss.Spans) != 2 {
		t.Fatalf("scope %v", ss)
	}
	child, root := ss.Spans[0], ss.Spans[1]
	for i, s := range []*tracepb.Span{child, root} {
		want := spans[i]
		tid, sid := want.SpanContext().TraceID(), want.SpanContext().SpanID()
		if !bytes.Equal(s.TraceId, tid[:]) || !bytes.Equal(s.SpanId, sid[:]) || s.Name != want.Name() ||
			s.StartTimeUnixNano != uint64(want.StartTime().UnixNano()) || s.EndTimeUnixNano != uint64(want.EndTime().UnixNano()) {
			t.Fatalf("span %d: %v", i, s)
		}
	}
	if root.Kind != tracepb.Span_SPAN_KIND_CLIENT || child.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("kinds %v %v", root.Kind, child.Kind)
	}
	if got := root.ParentSpanId; len(got) != 8 || got[0] != 0xb7 || root.Flags != 0x301 {
		t.Errorf("root's parent %x, flags %x (want b7ad…, remote 0x301)", got, root.Flags)
	}
	if !bytes.Equal(child.ParentSpanId, root.SpanId) || child.Flags != 0x101 {
		t.Errorf("child's parent %x, flags %x", child.ParentSpanId, child.Flags)
	}
	attrs := map[string]string{}
	for _, kv := range root.Attributes {
		attrs[kv.Key] = kv.Value.String()
	}
	for k, want := range map[string]string{"s": `string_value:"v"`, "empty": `string_value:""`, "i": "int_value:-3", "f": "double_value:0.25",
		"b": "bool_value:true", "no": "bool_value:false", "ss": `array_value:{values:{string_value:"a"} values:{string_value:"b"}}`,
		"is": "array_value:{values:{int_value:1} values:{int_value:2}}", "fs": "array_value:{values:{double_value:1.5}}",
		"bs": "array_value:{values:{bool_value:true}}"} {
		if got := strings.ReplaceAll(attrs[k], "  ", " "); got != want {
			t.Errorf("attribute %s = %s, want %s", k, got, want)
		}
	}
	if len(root.Events) != 1 || root.Events[0].Name != "ev" || root.Events[0].Attributes[0].Value.GetStringValue() != "x" {
		t.Errorf("events %v", root.Events)
	}
	if len(child.Links) != 1 || !bytes.Equal(child.Links[0].SpanId, root.SpanId) || child.Links[0].Attributes[0].Value.GetIntValue() != 1 {
		t.Errorf("links %v", child.Links)
	}
	if child.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || child.Status.GetMessage() != "it broke" || root.Status != nil {
		t.Errorf("status %v / %v", child.Status, root.Status)
	}
}

// collectorStub answers with the given statuses in turn, then 200, and
// keeps what it received.
type collectorStub struct {
	mu       sync.Mutex
	statuses []int
	bodies   [][]byte
	headers  []http.Header
	paths    []string
}

func (c *collectorStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, _ = io.ReadAll(zr)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, body)
	c.headers = append(c.headers, r.Header.Clone())
	c.paths = append(c.paths, r.URL.Path)
	if len(c.statuses) > 0 {
		st := c.statuses[0]
		c.statuses = c.statuses[1:]
		w.Header().Set("Retry-After", "0")
		http.Error(w, "not now", st)
	}
}

func TestExporter(t *testing.T) {
	t.Parallel()
	spans := sampleSpans(t)
	for _, c := range []struct {
		name     string
		env      map[string]string // ENDPOINT is set to the stub's URL unless given
		statuses []int
		tries    int
		err      string
		path     string
	}{
		{"base endpoint", nil, nil, 1, "", "/v1/traces"},
		{"traces endpoint as is", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "{URL}/custom"}, nil, 1, "", "/custom"},
		{"headers and gzip", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%20ecret, x-team = a",
			"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip"}, nil, 1, "", "/v1/traces"},
		{"retried after 503", nil, []int{503, 429}, 3, "", "/v1/traces"},
		{"three tries", nil, []int{503, 503, 503}, 3, "503 Service Unavailable: not now", "/v1/traces"},
		{"400 is not retried", nil, []int{400}, 1, "400 Bad Request: not now", "/v1/traces"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stub := &collectorStub{statuses: c.statuses}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL + "/"}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "{URL}", srv.URL)
			}
			e, err := newExporter(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			err = e.ExportSpans(context.Background(), spans)
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			stub.mu.Lock()
			defer stub.mu.Unlock()
			if len(stub.bodies) != c.tries || stub.paths[0] != c.path {
				t.Fatalf("%d tries at %v, want %d at %s", len(stub.bodies), stub.paths, c.tries, c.path)
			}
			if n := len(decode(t, stub.bodies[0]).ResourceSpans[0].ScopeSpans[0].Spans); n != 2 {
				t.Fatalf("%d spans", n)
			}
			h := stub.headers[0]
			if h.Get("Content-Type") != "application/x-protobuf" {
				t.Errorf("content type %q", h.Get("Content-Type"))
			}
			if c.name == "headers and gzip" && (h.Get("api-key") != "s ecret" || h.Get("x-team") != "a" || h.Get("Content-Encoding") != "gzip") {
				t.Errorf("headers %v", h)
			}
		})
	}
}

func TestExporterConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, `the OTLP endpoint "localhost:4318/v1/traces" is not an http:// or https:// URL`},
		{map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, `OTEL_EXPORTER_OTLP_TIMEOUT "soon" is not a positive number of milliseconds`},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, `OTEL_EXPORTER_OTLP_COMPRESSION "zstd" not supported (gzip or none)`},
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent/ca.pem"},
	} {
		_, err := newExporter(func(k string) string { return c.env[k] })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.env, err, c.want)
		}
	}
	e, err := newExporter(func(string) string { return "" })
	if err != nil || e.url != DefaultEndpoint || e.timeout != 10*time.Second {
		t.Fatalf("defaults: %v %+v", err, e)
	}
	e.Shutdown(context.Background())
	if err := e.ExportSpans(context.Background(), sampleSpans(t)); err != errStopped {
		t.Fatalf("export after Shutdown: %v", err)
	}
}
