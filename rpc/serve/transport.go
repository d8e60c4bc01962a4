package serve

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/xcsh-go/xcsh/rpc"
)

// The transports: stdio (ServeConn), a Unix socket, and
// WebSocket on a TCP address. Every transport carries the same lines.

// ListenUnix listens on a Unix socket at path, reachable only by the user:
// its directory is made 0700 when it does not exist and the socket is
// 0600. A stale socket file (nobody listening) is replaced; a live one is
// an error.
func ListenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s: another server is listening there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// ConnFunc serves one connection: lines from r, frames to w (each in one
// Write); closeConn closes the connection. The RPC clients' is
// Server.RPC; cmd/xcsh gives one for ACP clients.
type ConnFunc func(ctx context.Context, r io.Reader, w io.Writer, closeConn func()) error

// RPC is the ConnFunc of RPC clients; drainAtEOF: the end of a client's
// input is a half close (ConnOptions.DrainAtEOF).
func (s *Server) RPC(drainAtEOF bool) ConnFunc {
	return func(ctx context.Context, r io.Reader, w io.Writer, closeConn func()) error {
		o := ConnOptions{DrainAtEOF: drainAtEOF, Lean: s.opts.Updates == rpc.UpdatesDelta}
		if uc, ok := r.(*net.UnixConn); ok {
			o.PeerGone = func() bool { return peerClosed(uc) }
			o.Stream = true
		}
		return s.ServeConn(ctx, r, w, closeConn, o)
	}
}

// Accept serves every client that connects to ln with serve (each on its
// own goroutines) until ctx ends or ln fails; it returns once its
// clients' connections are over.
func Accept(ctx context.Context, ln net.Listener, serve ConnFunc, log io.Writer) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			if err := serve(ctx, conn, conn, func() { conn.Close() }); err != nil {
				fmt.Fprintf(log, "xcsh: serve: %v\n", err)
			}
		}()
	}
}

// WebSocket serves clients over WebSocket with serve: each text message
// is one line (a client's message may hold several, one per line) and
// each frame one message. Token, when set, must come with the upgrade
// request, as "Authorization: Bearer <token>" or "?token=<token>" (a
// browser cannot set headers); a wrong or missing one is refused with 401
// before any frame.
func WebSocket(ctx context.Context, token string, serve ConnFunc, log io.Writer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && !tokenOK(r, token) {
			http.Error(w, "a token is required: Authorization: Bearer <token>, or ?token=<token>", http.StatusUnauthorized)
			return
		}
		// The token is the authentication: pages of any origin may use it.
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: token != ""})
		if err != nil {
			return
		}
		ws.SetReadLimit(-1)
		serveWebSocket(ctx, ws, serve, log)
	})
}

// tokenOK compares the request's token with token in constant time.
func tokenOK(r *http.Request, token string) bool {
	got := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		got = strings.TrimPrefix(h, "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

func serveWebSocket(ctx context.Context, ws *websocket.Conn, serve ConnFunc, log io.Writer) {
	// The connection's own context: the server's ending does not cut it
	// (Shutdown writes what the client has left, then closes it).
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		// Messages become lines: each ends with a newline.
		bw := bufio.NewWriter(pw)
		for {
			_, data, err := ws.Read(wctx)
			if err != nil {
				pw.CloseWithError(io.EOF)
				return
			}
			bw.Write(data)
			if len(data) == 0 || data[len(data)-1] != '\n' {
				bw.WriteByte('\n')
			}
			if err := bw.Flush(); err != nil {
				return
			}
		}
	}()
	out := wsWriter{ctx: wctx, ws: ws}
	closeConn := func() {
		cancel()
		ws.Close(websocket.StatusNormalClosure, "")
		pr.Close()
	}
	if err := serve(ctx, pr, out, closeConn); err != nil {
		fmt.Fprintf(log, "xcsh: serve: %v\n", err)
	}
	closeConn()
}

// wsWriter writes each frame as one text message.
type wsWriter struct {
	ctx context.Context
	ws  *websocket.Conn
}

func (w wsWriter) Write(p []byte) (int, error) {
	if err := w.ws.Write(w.ctx, websocket.MessageText, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ServeHTTP serves h on a TCP address until ctx ends.
func ServeHTTP(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	})
	defer stop()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
