package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpCmd is the scenarios' OpenTelemetry collector: a real OTLP/HTTP
// receiver on 127.0.0.1 that decodes each export with the protocol's
// official types (go.opentelemetry.io/proto/otlp), as a collector would.
//
//	otlp start NAME              start one; $NAME is its endpoint (OTEL_EXPORTER_OTLP_ENDPOINT)
//	otlp spans NAME FILE         write the spans received, one JSON line each, for a golden
//	otlp traceparents NAME SPAN  print the W3C traceparent of each span named SPAN
//
// The spans are written in the order they started, each with its parent
// named by its label (its name, and #n from the second of that name on),
// or, for a parent outside the export (a caller's), by the caller's span
// id; a trace id is the caller's (given in a traceparent) or "new". Span
// attributes are sorted by key; of the resource only service.name is kept
// (the SDK's version is not the agent's behaviour). Ids and times are
// random or the wall clock's: they are not written.
func otlpCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: otlp start NAME | otlp spans NAME FILE | otlp traceparents NAME SPAN")
	}
	cols, _ := ts.Value(otlpKey{}).(map[string]*collector)
	switch args[0] {
	case "start":
		c := &collector{}
		srv := httptest.NewUnstartedServer(c)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		srv.Listener = ln
		srv.Start()
		ts.Defer(srv.Close)
		cols[args[1]] = c
		ts.Setenv(args[1], srv.URL)
	case "spans", "traceparents":
		c, ok := cols[args[1]]
		if !ok || len(args) != 3 {
			ts.Fatalf("usage: otlp spans NAME FILE | otlp traceparents NAME SPAN (a started collector)")
		}
		if c.err() != "" {
			ts.Fatalf("otlp: %s", c.err())
		}
		if args[0] == "traceparents" {
			for _, s := range c.sorted() {
				if s.span.Name == args[2] {
					fmt.Fprintf(ts.Stdout(), "00-%x-%x-%02x\n", s.span.TraceId, s.span.SpanId, s.span.Flags&0xff)
				}
			}
			return
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[2]), c.jsonl(), 0o644))
	default:
		ts.Fatalf("otlp: unknown subcommand %q (want start, spans or traceparents)", args[0])
	}
}

type otlpKey struct{}

// collector receives OTLP/HTTP trace exports (protobuf, not compressed:
// the exporter's default).
type collector struct {
	mu    sync.Mutex
	spans []received
	bad   string // why an export was refused; "" while all were good
}

type received struct {
	span    *tracepb.Span
	service string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	switch {
	case err != nil:
	case r.Method != http.MethodPost || r.URL.Path != "/v1/traces":
		err = fmt.Errorf("%s %s, want POST /v1/traces", r.Method, r.URL.Path)
	case r.Header.Get("Content-Type") != "application/x-protobuf":
		err = fmt.Errorf("content type %q, want application/x-protobuf", r.Header.Get("Content-Type"))
	default:
		err = proto.Unmarshal(body, &req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.bad = err.Error()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, received{s, service})
			}
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (c *collector) err() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// sorted is the spans in the order they started.
func (c *collector) sorted() []received {
	c.mu.Lock()
	out := append([]received(nil), c.spans...)
	c.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].span.StartTimeUnixNano < out[j].span.StartTimeUnixNano })
	return out
}

// spanLine is one span as a golden shows it.
type spanLine struct {
	Label      string         `json:"label"`
	Name       string         `json:"name"`
	Kind       string         `json:"kind"`
	Parent     string         `json:"parent"`
	Trace      string         `json:"trace"`
	Service    string         `json:"service"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"statusMessage,omitempty"`
	Attributes map[string]any `json:"attributes"`
}

func (c *collector) jsonl() []byte {
	spans := c.sorted()
	labels := map[string]string{} // span id -> label
	count := map[string]int{}
	for _, s := range spans {
		count[s.span.Name]++
		l := s.span.Name
		if n := count[s.span.Name]; n > 1 {
			l = fmt.Sprintf("%s#%d", l, n)
		}
		labels[string(s.span.SpanId)] = l
	}
	callers := map[string]bool{} // trace ids a parent outside the export gave
	for _, s := range spans {
		if _, ok := labels[string(s.span.ParentSpanId)]; !ok && len(s.span.ParentSpanId) > 0 {
			callers[string(s.span.TraceId)] = true
		}
	}
	var b strings.Builder
	for _, s := range spans {
		l := spanLine{Label: labels[string(s.span.SpanId)], Name: s.span.Name, Service: s.service,
			Kind: strings.TrimPrefix(s.span.Kind.String(), "SPAN_KIND_"), Trace: "new", Attributes: map[string]any{}}
		switch p, ok := labels[string(s.span.ParentSpanId)]; {
		case ok:
			l.Parent = p
		case len(s.span.ParentSpanId) > 0:
			l.Parent = "caller " + hex.EncodeToString(s.span.ParentSpanId)
		default:
			l.Parent = "none"
		}
		if callers[string(s.span.TraceId)] {
			l.Trace = hex.EncodeToString(s.span.TraceId)
		}
		if st := s.span.GetStatus(); st.GetCode() != tracepb.Status_STATUS_CODE_UNSET {
			l.Status = strings.TrimPrefix(st.GetCode().String(), "STATUS_CODE_")
			l.Message = st.GetMessage()
		}
		for _, kv := range s.span.Attributes {
			l.Attributes[kv.Key] = anyValue(kv.Value)
		}
		line, _ := json.Marshal(l) // map keys sorted
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, anyValue(e))
		}
		return out
	}
	return fmt.Sprint(v)
}

// apiHeaders prints, for `apiserver header NAME HEADER`, that header of
// each request the server received, one line each ("" when absent).
func apiHeaders(ts *testscript.TestScript, servers map[string]recorder, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: apiserver header NAME HEADER")
	}
	srv, ok := servers[args[1]].(interface{ RequestHeaders(string) []string })
	if !ok {
		ts.Fatalf("apiserver: no server named %q that records headers (openai does)", args[1])
	}
	for _, v := range srv.RequestHeaders(args[2]) {
		fmt.Fprintf(ts.Stdout(), "%s\n", v)
	}
}

func (o openaiBodies) RequestHeaders(name string) []string {
	var out []string
	for _, r := range o.Requests() {
		out = append(out, r.Header.Get(name))
	}
	return out
}

// atifValidCmd checks a file (one trajectory per line) against the ATIF
// schema checked in beside the exporter (engine/export/testdata/atif), with
// the validator the tools use.
//
//	atif-valid FILE
func atifValidCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: atif-valid FILE")
	}
	sch, err := os.ReadFile(filepath.Join(ts.Getenv("XCSH_REPO_ROOT"), "engine", "export", "testdata", "atif", "ATIF-v1.6.schema.json"))
	ts.Check(err)
	v := schema.New()
	for i, line := range strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n") {
		if issues := v.Validate(sch, []byte(line)); len(issues) > 0 {
			ts.Fatalf("%s line %d is not ATIF-v1.6:\n%s", args[0], i+1, strings.Join(issues, "\n"))
		}
	}
}
