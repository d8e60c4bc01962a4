package main

import (
	"time"

	"github.com/spf13/pflag"
)

// temporalFlags are the flags of durable sessions (docs/durable.md):
// where the Temporal service is, for the worker and the front alike.
type temporalFlags struct {
	address, namespace, taskQueue string
	tlsCert, tlsKey, tlsCA        string
	apiKey                        string
	concurrency                   int
	heartbeat                     time.Duration
	since                         int64
	listen                        string
}

func addTemporalFlags(f *pflag.FlagSet, t *temporalFlags) {
	f.StringVar(&t.address, "temporal", "", "drive a durable session on this Temporal service (HOST:PORT) with --mode rpc --session ID; the worker's service address")
	f.StringVar(&t.namespace, "temporal-namespace", "default", "Temporal namespace")
	f.StringVar(&t.taskQueue, "temporal-task-queue", "xcsh", "Temporal task queue of the workers")
	f.StringVar(&t.tlsCert, "temporal-tls-cert", "", "client certificate (PEM) for mTLS to Temporal")
	f.StringVar(&t.tlsKey, "temporal-tls-key", "", "client key (PEM) for mTLS to Temporal")
	f.StringVar(&t.tlsCA, "temporal-tls-ca", "", "CA (PEM) that signed the Temporal service's certificate")
	f.StringVar(&t.apiKey, "temporal-api-key", "", "API key for the Temporal service (default $TEMPORAL_API_KEY); implies TLS")
	f.IntVar(&t.concurrency, "temporal-concurrency", 16, "worker: steps (model and tool calls) run at once")
	f.DurationVar(&t.heartbeat, "temporal-heartbeat", 0, "a model or tool call silent this long counts as lost with its worker (default 30s)")
	f.Int64Var(&t.since, "temporal-since", -1, "front: write the session's events after this seq first (0: all it keeps; -1: only new ones)")
	f.StringVar(&t.listen, "temporal-listen", "", "front: HOST:PORT where workers push deltas (default 127.0.0.1:0; off: none)")
}

// afterToolRun, when set, is called by the worker after each tool it runs
// and before the result is reported (durable.Activities.AfterTool): the
// crash point of the scenarios' xcsh-crash-after-tool. Nil in xcsh.
var afterToolRun func(name string)
