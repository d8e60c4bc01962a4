package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"
)

// newConnectCmd is `xcsh connect ADDR`: stdin and stdout bridged to an
// agent server, so a host that spawns a process (every --mode rpc host)
// drives a served session unchanged.
func newConnectCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "connect ADDR",
		Short: "bridge stdin and stdout to an agent server (unix:PATH or ws://HOST:PORT)",
		Long: `xcsh connect bridges stdin and stdout to a running xcsh serve: each line read is a
command, each frame of the server a line written. A host that drives xcsh --mode rpc as a
child process drives a served session the same way by starting "xcsh connect ADDR".

Documentation: docs/server.md.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if token == "" {
				token = os.Getenv("XCSH_SERVE_TOKEN")
			}
			if err := bridge(cmd.Context(), args[0], token, stdin, stdout); err != nil {
				return &exitError{1, "Error: " + err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "the server's token (default $XCSH_SERVE_TOKEN)")
	return cmd
}

// bridge copies stdin to the server and the server's frames to stdout
// until the server closes the connection (after stdin's end is sent).
func bridge(ctx context.Context, addr, token string, stdin io.Reader, stdout io.Writer) error {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		conn, err := net.Dial("unix", strings.TrimPrefix(addr, "unix:"))
		if err != nil {
			return err
		}
		defer conn.Close()
		go func() {
			io.Copy(conn, stdin)
			if uc, ok := conn.(*net.UnixConn); ok {
				uc.CloseWrite()
			}
		}()
		_, err = io.Copy(stdout, conn)
		return err
	case strings.HasPrefix(addr, "ws://"), strings.HasPrefix(addr, "wss://"):
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		ws, resp, err := websocket.Dial(ctx, addr, &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			if resp != nil && resp.StatusCode == http.StatusUnauthorized {
				return fmt.Errorf("%s refused the connection: a wrong or missing token (--token or XCSH_SERVE_TOKEN)", addr)
			}
			return err
		}
		ws.SetReadLimit(-1)
		defer ws.CloseNow()
		conn := websocket.NetConn(ctx, ws, websocket.MessageText)
		go func() {
			// One message per line: the server reads a message as lines.
			br := bufio.NewReaderSize(stdin, 64<<10)
			for {
				line, err := br.ReadBytes('\n')
				if len(line) > 0 {
					if werr := ws.Write(ctx, websocket.MessageText, line); werr != nil {
						return
					}
				}
				if err != nil {
					break
				}
			}
			// A WebSocket has no half close: ask the server to finish the
			// work and close.
			ws.Write(ctx, websocket.MessageText, []byte(`{"type":"drain"}`))
		}()
		_, err = io.Copy(stdout, conn)
		var ce websocket.CloseError
		if errors.As(err, &ce) || errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	return fmt.Errorf("%q: expected unix:PATH or ws://HOST:PORT", addr)
}
