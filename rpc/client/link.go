package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// link is one connection: the lines the agent writes (r) and the frames
// the client writes (w, one Write each). A process is one kind (its stdout
// and stdin), a Unix socket or WebSocket connection to a server another.
type link struct {
	r io.Reader
	w io.Writer
	// half ends what the client sends: the agent finishes the work it was
	// given, writes it and closes (stdin EOF, a socket's half close, a
	// WebSocket's drain frame). nil when w cannot be closed (New).
	half func() error
	// hard closes the connection at once: the reader returns. nil when r
	// cannot be closed (New): the reader returns when r does.
	hard     func() error
	readDone chan struct{} // closed when the reader has returned
	// dead: a write failed or the reader ended; nothing more is sent on
	// it (guarded by c.mu).
	dead bool
	// wmu serialises writes so every frame goes out in one Write.
	wmu sync.Mutex
}

// Reconnect is how a Dial client connects again when its connection drops
// (the server restarted, the network failed): it dials at once, then waits
// MinDelay, doubling the wait up to MaxDelay, for at most Attempts dials,
// and gives up (the client ends) when all fail or the server refuses the
// token. Close stops it. The zero value is the defaults.
type Reconnect struct {
	// Disabled: the client ends with its first connection, as a process
	// client does.
	Disabled bool
	// Attempts bounds the dials of one reconnection (default 10).
	Attempts int
	// MinDelay is the wait before the second dial (default 100 ms);
	// MaxDelay caps the doubling (default 5 s).
	MinDelay, MaxDelay time.Duration
}

func (r Reconnect) withDefaults() Reconnect {
	if r.Attempts <= 0 {
		r.Attempts = 10
	}
	if r.MinDelay <= 0 {
		r.MinDelay = 100 * time.Millisecond
	}
	if r.MaxDelay < r.MinDelay {
		r.MaxDelay = max(5*time.Second, r.MinDelay)
	}
	return r
}

// Dial connects to an agent server (`xcsh serve`, docs/server.md) and
// waits for its ready frame, bounded by ctx or, without a deadline, by
// Options.Timeout. addr is "unix:PATH" or "ws://HOST:PORT" ("wss://" too);
// a WebSocket server's token is Options.Token.
//
// The typed methods of the returned Client drive the connection's own
// session, exactly as over `xcsh --mode rpc`; OpenSession and Attach give
// sessions by id, which survive a dropped connection: the client dials
// again (Options.Reconnect), attaches each session again from its cursor,
// and its subscribers see every event once, in order.
func Dial(ctx context.Context, addr string, opts Options) (*Client, error) {
	dial, err := dialer(addr, opts.Token)
	if err != nil {
		return nil, err
	}
	ctx, cancel := bound(ctx, opts.timeout())
	defer cancel()
	l, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Reconnect.Disabled {
		dial = nil
	}
	c := newClient(l, dial, opts)
	c.addr = addr
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("xcsh client: %s: %w", addr, err)
	}
	return c, nil
}

// errUnauthorized is a server's refusal of the token: dialing again does
// not help.
var errUnauthorized = errors.New("a wrong or missing token (Options.Token)")

// dialer returns the function that connects to addr.
func dialer(addr, token string) (func(context.Context) (*link, error), error) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		path := strings.TrimPrefix(addr, "unix:")
		return func(ctx context.Context) (*link, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, fmt.Errorf("xcsh client: %w", err)
			}
			uc := conn.(*net.UnixConn)
			return &link{r: conn, w: conn, half: uc.CloseWrite, hard: conn.Close, readDone: make(chan struct{})}, nil
		}, nil
	case strings.HasPrefix(addr, "ws://"), strings.HasPrefix(addr, "wss://"):
		return func(ctx context.Context) (*link, error) { return dialWebSocket(ctx, addr, token) }, nil
	}
	return nil, fmt.Errorf("xcsh client: %q: expected unix:PATH or ws://HOST:PORT", addr)
}

// dialWebSocket connects to a server's WebSocket listener: every frame the
// client writes is one message, and the server's messages are lines.
func dialWebSocket(ctx context.Context, addr, token string) (*link, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	ws, resp, err := websocket.Dial(ctx, addr, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("xcsh client: %s refused the connection: %w", addr, errUnauthorized)
		}
		return nil, fmt.Errorf("xcsh client: %w", err)
	}
	// The connection lives until hard: not bounded by the dial's ctx.
	life, cancel := context.WithCancel(context.Background())
	conn := websocket.NetConn(life, ws, websocket.MessageText)
	return &link{
		r: conn,
		w: conn,
		// A WebSocket has no half close: the server is asked to finish the
		// work and close.
		half: func() error {
			_, err := conn.Write([]byte("{\"type\":\"drain\"}\n"))
			return err
		},
		hard: func() error {
			cancel()
			return ws.CloseNow()
		},
		readDone: make(chan struct{}),
	}, nil
}

// poke tells the supervisor it has work.
func (c *Client) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// supervise is the one goroutine that connects again after a drop and
// attaches the sessions that need it (after a reconnection, a lagged
// notice or a gap), one at a time, so the two never race.
func (c *Client) supervise() {
	defer close(c.superviz)
	for {
		select {
		case <-c.wake:
		case <-c.done:
			return
		}
		if !c.superviseOnce() {
			return
		}
	}
}

// superviseOnce reconnects if the connection is down, then attaches every
// session that is not attached; false when the client is over.
func (c *Client) superviseOnce() bool {
	c.mu.Lock()
	l := c.link
	reconnect := l == nil && c.dial != nil && !c.closed
	c.mu.Unlock()
	if reconnect {
		nl, err := c.redial()
		if errors.Is(err, errStopped) {
			return false
		}
		if err != nil {
			c.end(err)
			return false
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			nl.hard()
			return false
		}
		c.link, c.ownUsed = nl, false
		c.broadcastLocked()
		c.mu.Unlock()
		go c.readLoop(nl)
		l = nl
	}
	if l == nil {
		return true
	}
	for _, s := range c.detached() {
		if err := s.reattach(l); err != nil {
			var ce *CommandError
			if errors.As(err, &ce) {
				s.end(fmt.Errorf("%w: attaching again: %v", ErrSessionClosed, err))
				continue
			}
			// The connection failed meanwhile (its end pokes us again) or
			// the server did not answer: drop it and make it again.
			if !errors.Is(err, ErrDisconnected) && !errors.Is(err, ErrClosed) && l.hard != nil {
				l.hard()
			}
			break
		}
	}
	return true
}

// detached are the sessions to attach again.
func (c *Client) detached() []*Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Session
	for _, s := range c.sessions {
		if s.on == nil && s.gen > 0 && !s.ended {
			out = append(out, s)
		}
	}
	return out
}

// errStopped: Close stopped a reconnection.
var errStopped = errors.New("xcsh client: reconnection stopped by Close")

// redial connects again with backoff (Options.Reconnect).
func (c *Client) redial() (*link, error) {
	r := c.opts.Reconnect.withDefaults()
	delay := r.MinDelay
	var last error
	n := 0
	for n < r.Attempts {
		if n > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-c.stopCtx.Done():
				t.Stop()
				return nil, errStopped
			}
			delay = min(delay*2, r.MaxDelay)
		}
		n++
		ctx, cancel := context.WithTimeout(c.stopCtx, c.opts.timeout())
		l, err := c.dial(ctx)
		cancel()
		if err == nil {
			return l, nil
		}
		if c.stopCtx.Err() != nil {
			return nil, errStopped
		}
		last = err
		if errors.Is(err, errUnauthorized) {
			break
		}
	}
	return nil, fmt.Errorf("%w: the connection to %s dropped and %d attempts to connect again failed; the last: %v", ErrClosed, c.addr, n, last)
}
