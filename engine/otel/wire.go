package otel

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP trace export request in protobuf's wire format, written by hand
// from opentelemetry-proto's trace.proto, common.proto and resource.proto
// (field numbers below). The generated Go types would link the protobuf
// runtime and gRPC into every start of the agent, tracing or not (their
// package initialisers run at start-up); these few functions cost nothing
// until a span is exported. The scenarios' collector decodes the output
// with the official types (go.opentelemetry.io/proto/otlp), and so does
// TestWireDecodes.

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func appendString(b []byte, field int, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, field, wireBytes)
	b = appendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, field int, p []byte) []byte {
	b = appendTag(b, field, wireBytes)
	b = appendVarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendUint(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

// appendMessage appends field as a nested message that body writes.
func appendMessage(b []byte, field int, body func([]byte) []byte) []byte {
	return appendBytes(b, field, body(nil))
}

// encodeRequest is an ExportTraceServiceRequest for spans: one
// ResourceSpans per resource, one ScopeSpans per instrumentation scope,
// in the order they first appear.
func encodeRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		r, sc := s.Resource(), s.InstrumentationScope()
		if _, ok := scopes[r]; !ok {
			resources = append(resources, r)
			scopes[r] = nil
		}
		k := scopeKey{r, sc}
		if _, ok := byScope[k]; !ok {
			scopes[r] = append(scopes[r], sc)
		}
		byScope[k] = append(byScope[k], s)
	}
	var out []byte
	for _, r := range resources {
		out = appendMessage(out, 1, func(b []byte) []byte { // resource_spans
			b = appendMessage(b, 1, func(b []byte) []byte { // resource
				if r != nil {
					for _, kv := range r.Attributes() {
						b = appendMessage(b, 1, func(b []byte) []byte { return appendKeyValue(b, kv) })
					}
				}
				return b
			})
			for _, sc := range scopes[r] {
				b = appendMessage(b, 2, func(b []byte) []byte { // scope_spans
					b = appendMessage(b, 1, func(b []byte) []byte { // scope
						b = appendString(b, 1, sc.Name)
						return appendString(b, 2, sc.Version)
					})
					for _, s := range byScope[scopeKey{r, sc}] {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendString(b, 3, sc.SchemaURL)
				})
			}
			if r != nil {
				b = appendString(b, 3, r.SchemaURL())
			}
			return b
		})
	}
	return out
}

// Span.flags bits beside the trace flags: whether the parent is remote is
// known, and it is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if parent.SpanID().IsValid() {
		psid := parent.SpanID()
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendUint(b, 6, uint64(protoKind(s.SpanKind())))
	b = appendFixed64(b, 7, uint64(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, 9, func(b []byte) []byte { return appendKeyValue(b, kv) })
	}
	b = appendUint(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64(b, 1, uint64(e.Time.UnixNano()))
			b = appendString(b, 2, e.Name)
			for _, kv := range e.Attributes {
				b = appendMessage(b, 3, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			return appendUint(b, 4, uint64(e.DroppedAttributeCount))
		})
	}
	b = appendUint(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, 1, ltid[:])
			b = appendBytes(b, 2, lsid[:])
			b = appendString(b, 3, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				b = appendMessage(b, 4, func(b []byte) []byte { return appendKeyValue(b, kv) })
			}
			b = appendUint(b, 5, uint64(l.DroppedAttributeCount))
			return appendFixed32(b, 6, linkFlags(l.SpanContext))
		})
	}
	b = appendUint(b, 14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendString(b, 2, st.Description)
			return appendUint(b, 3, uint64(statusCode(st.Code)))
		})
	}
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if parent.IsRemote() {
		flags |= flagIsRemote
	}
	return appendFixed32(b, 16, flags)
}

func linkFlags(sc trace.SpanContext) uint32 {
	f := uint32(sc.TraceFlags()) | flagHasIsRemote
	if sc.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// protoKind is the proto's SpanKind: the API's numbering, which starts at
// Internal = 1 as the proto's does.
func protoKind(k trace.SpanKind) int {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return int(trace.SpanKindInternal)
	}
	return int(k)
}

// statusCode is the proto's StatusCode (UNSET 0, OK 1, ERROR 2); the API
// numbers Error 1 and Ok 2.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendString(b, 1, string(kv.Key))
	return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
}

// appendAnyValue writes an attribute value; a value of a type the proto
// has none for is written as its string.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, 2, wireVarint)
		if v.AsBool() {
			return append(b, 1)
		}
		return append(b, 0)
	case attribute.INT64:
		return appendVarint(appendTag(b, 3, wireVarint), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return binary.LittleEndian.AppendUint64(appendTag(b, 4, wireFixed64), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		// A oneof's field is written even when empty: "" is a value.
		b = appendTag(b, 1, wireBytes)
		b = appendVarint(b, uint64(len(v.AsString())))
		return append(b, v.AsString()...)
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		return appendMessage(b, 5, func(b []byte) []byte {
			for _, e := range sliceValues(v) {
				b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, e) })
			}
			return b
		})
	}
	return appendString(b, 1, v.Emit())
}

func sliceValues(v attribute.Value) []attribute.Value {
	var out []attribute.Value
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, x := range v.AsBoolSlice() {
			out = append(out, attribute.BoolValue(x))
		}
	case attribute.INT64SLICE:
		for _, x := range v.AsInt64Slice() {
			out = append(out, attribute.Int64Value(x))
		}
	case attribute.FLOAT64SLICE:
		for _, x := range v.AsFloat64Slice() {
			out = append(out, attribute.Float64Value(x))
		}
	case attribute.STRINGSLICE:
		for _, x := range v.AsStringSlice() {
			out = append(out, attribute.StringValue(x))
		}
	}
	return out
}
