package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/otel"
)

// otelFlags are the tracing flags (docs/automation.md, "Tracing"); the
// standard OTEL_* variables do the rest.
type otelFlags struct {
	on, content bool
	// tracer is the process's, once setupTracing found tracing on; nil
	// otherwise. Every session of the process shares it.
	tracer *otel.Tracer
}

func addOtelFlags(f *pflag.FlagSet, o *otelFlags) {
	f.BoolVar(&o.on, "otel", false, "export OpenTelemetry traces over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318); also on when OTEL_* variables configure an exporter")
	f.BoolVar(&o.content, "otel-content", false, "record prompts, answers, tool arguments and results in the spans (off: names, ids, models, tokens and outcomes only)")
}

// setupTracing returns the tracer of the sessions, or nil (off: nothing of
// the SDK runs, not even its exporter's construction). On, it wraps
// http.DefaultTransport before any adapter builds its client from it, so
// a model call's requests carry its span's traceparent (otel.Transport).
// Called once per process, before the models are set up.
func setupTracing(o *otelFlags, getenv func(string) string, stderr io.Writer) engine.Tracer {
	on, warning := otel.Configure(getenv, o.on)
	if warning != "" {
		fmt.Fprintln(stderr, "xcsh:", warning)
	}
	if !on {
		return nil
	}
	if o.tracer == nil {
		o.tracer = otel.New(otel.Options{Version: version, Content: o.content, Log: stderr})
		http.DefaultTransport = otel.Transport(http.DefaultTransport)
	}
	return o.tracer
}

// stopTracing exports the spans not yet sent before the process exits,
// within otel.ShutdownTimeout; a collector that does not answer costs that
// much and a line on stderr.
func stopTracing(o *otelFlags, stderr io.Writer) {
	if o.tracer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), otel.ShutdownTimeout)
	defer cancel()
	if err := o.tracer.Shutdown(ctx); err != nil {
		fmt.Fprintln(stderr, "xcsh:", err)
	}
}
