//go:build temporal

package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/xcsh-go/xcsh/engine/durable"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
	"github.com/xcsh-go/xcsh/rpc"
	"github.com/xcsh-go/xcsh/rpc/serve"
)

// durableSessions are the agent server's durable sessions (serve
// --temporal, docs/server.md): rpc/serve's port, served by engine/durable.
type durableSessions struct {
	o      durable.FrontOptions // every session's, but its id
	deltas *durable.Deltas      // nil: --temporal-listen off
}

// Open opens a durable session for the server (durable.OpenServed).
func (d *durableSessions) Open(ctx context.Context, id string, create bool, emit func(seq int64, frame []byte)) (serve.RemoteSession, error) {
	o := d.o
	o.Session = id
	s, err := durable.OpenServed(ctx, o, create, d.deltas, emit)
	if errors.Is(err, durable.ErrUnknownSession) {
		return nil, fmt.Errorf("%w: %v", serve.ErrUnknownRemote, err)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// List lists the running durable sessions of the namespace.
func (d *durableSessions) List(ctx context.Context) ([]serve.RemoteInfo, error) {
	infos, err := durable.ListSessions(ctx, d.o.Client)
	if err != nil {
		return nil, err
	}
	out := make([]serve.RemoteInfo, 0, len(infos))
	for _, in := range infos {
		out = append(out, serve.RemoteInfo{ID: in.ID, Updated: in.Started})
	}
	return out, nil
}

// serveRemote is serve's --temporal: the durable sessions on the Temporal
// service the flags name (nil when --temporal is not given); closeFn
// closes the connection once the server has stopped.
func serveRemote(o *options, stderr io.Writer) (serve.RemoteSessions, func(), error) {
	if o.temporal.address == "" {
		return nil, func() {}, nil
	}
	c, err := temporalClient(&o.temporal, stderr)
	if err != nil {
		return nil, nil, &exitError{1, "Error: " + err.Error()}
	}
	d := &durableSessions{o: durable.FrontOptions{Client: c, TaskQueue: o.temporal.taskQueue,
		Start: o.temporal.start(), HostToolDefs: rpc.HostToolDefs, HostToolReply: rpc.HostToolReply, DialogReply: rpc.DialogReply, TodoList: rpc.TodoList, Validator: schema.New(),
		ExportHTML: durableExportHTML}}
	closeFn := c.Close
	if o.temporal.listen != "off" {
		// One endpoint for the deltas of every session served: a fleet's
		// workers reach the server at one address.
		if d.deltas, err = durable.ListenDeltas(o.temporal.listen); err != nil {
			c.Close()
			return nil, nil, &exitError{1, "Error: --temporal-listen: " + err.Error()}
		}
		closeFn = func() { d.deltas.Close(); c.Close() }
	}
	return d, closeFn, nil
}
