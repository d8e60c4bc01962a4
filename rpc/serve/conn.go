package serve

import (
	"context"
	"io"

	"github.com/xcsh-go/xcsh/engine"
)

// ConnOptions configure one client's connection.
type ConnOptions struct {
	// DrainAtEOF: the end of the client's input means it sends nothing
	// more but still reads (stdio, a Unix socket's half close): the work
	// of the sessions it drives finishes and is written before the
	// connection closes, as --mode rpc does at stdin EOF. Without it (a
	// WebSocket, whose close is final) the end of input is the client's
	// departure; such a client sends {"type":"drain"} instead.
	DrainAtEOF bool
	// PeerGone, if set, tells at the end of the input whether the client
	// closed the whole connection (it died) rather than only its input:
	// it is then gone at once, as a WebSocket's close is, rather than
	// listed as attached until the work it started is over.
	PeerGone func() bool
	// Lean: the client's own session sends message_update without its
	// snapshots (--rpc-updates delta).
	Lean bool
	// Stream: w is a byte stream (stdio, a Unix socket): frames waiting
	// together go out in one Write. Unset, each frame is one Write (a
	// WebSocket message).
	Stream bool
}

// ServeConn serves one client: lines from r, frames to w (each in one
// Write, or joined on a Stream), until r ends or the server shuts down. closeConn closes the
// connection (r then ends). The sessions the client drove keep running
// after it has gone. ctx is not watched: a signal's cancellation comes
// before Shutdown has aborted the runs, and the client is to read how
// they ended (Shutdown writes its frames, then closes it).
func (s *Server) ServeConn(ctx context.Context, r io.Reader, w io.Writer, closeConn func(), o ConnOptions) error {
	c, err := s.newClient(w, closeConn, o.Lean, o.Stream)
	if err != nil {
		return err
	}
	ready, _ := engine.MarshalJSON(struct {
		Type       string `json:"type"`
		Version    string `json:"version"`
		SchemaHash string `json:"schemaHash"`
	}{"ready", s.opts.Version, s.opts.SchemaHash})
	c.sendDirect(append(ready, '\n'))
	go c.writeLoop()
	// A cancelled ctx does not cut the client: Shutdown writes what it has
	// left, then closes its connection (which ends the reader).
	drain := c.readLoop(r)
	if !drain && o.DrainAtEOF {
		drain = o.PeerGone == nil || !o.PeerGone()
	}
	switch {
	case ctx.Err() != nil || s.isClosing():
		// The server is stopping (its input may end meanwhile: a host
		// closes stdin after its signal): Shutdown writes the client's
		// last frames (the aborted runs' ends), then closes it.
	case drain:
		c.drain()
		c.shutdown()
	default:
		c.disconnect()
	}
	<-c.done
	return nil
}

// drain waits until the sessions the client drives (its own and those it
// controls) have handled everything it sent and their work is over.
func (c *client) drain() {
	c.mu.Lock()
	var hubs []*hub
	for _, sb := range c.subs {
		if sb.role == controller {
			hubs = append(hubs, sb.h)
		}
	}
	c.mu.Unlock()
	for _, h := range hubs {
		done := make(chan struct{})
		h.drainThen(func() { close(done) })
		select {
		case <-done:
		case <-c.done:
			return
		}
	}
}
