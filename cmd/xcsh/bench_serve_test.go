package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The agent server's benchmarks (issue 28), through the real binary and
// its Unix socket, as clients drive it: the memory of 1,000 idle sessions,
// an attach that replays 10,000 events, one session's 5,000-delta reply
// streamed to 10 clients against 1, and with one more client that stops
// reading.

// startServe starts `xcsh serve` on a Unix socket in a new directory, with
// a stdio client whose ready frame says the socket listens; it returns the
// process and the socket's path.
func startServe(b *testing.B, args ...string) (*benchProc, string) {
	b.Helper()
	// A short directory: a socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "xs")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	cmd := exec.Command(buildBenchBinary(b), append([]string{"serve", "--stdio", "--listen", "unix:" + sock,
		"--session-dir", filepath.Join(dir, "sessions")}, args...)...)
	cmd.Env = append(os.Environ(), "XCSH_DETERMINISTIC=1")
	p := startCmd(b, cmd)
	p.line(b) // ready: the socket listens
	return p, sock
}

// serveClient is a client of the server on its socket.
type serveClient struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialServe(b *testing.B, sock string) *serveClient {
	b.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	c := &serveClient{conn: conn, r: bufio.NewReaderSize(conn, 1<<20)}
	if _, err := c.until(`"type":"ready"`); err != nil {
		b.Fatal(err)
	}
	return c
}

func (c *serveClient) send(b *testing.B, line string) {
	b.Helper()
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		b.Fatal(err)
	}
}

// until reads frames through the first that contains s; it returns that
// frame (safe from any goroutine: an error instead of b.Fatal).
func (c *serveClient) until(s string) ([]byte, error) {
	want := []byte(s)
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading a frame: %v", err)
		}
		if bytes.Contains(line, want) {
			return line, nil
		}
	}
}

func (c *serveClient) must(b *testing.B, s string) []byte {
	b.Helper()
	line, err := c.until(s)
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// openServed opens a session on c and returns its id.
func openServed(b *testing.B, c *serveClient, updates string) string {
	b.Helper()
	c.send(b, `{"id":"o","type":"open_session","updates":"`+updates+`"}`)
	line := c.must(b, `"id":"o"`)
	i := bytes.Index(line, []byte(`"sessionId":"`))
	if i < 0 {
		b.Fatalf("open_session: %s", line)
	}
	rest := line[i+len(`"sessionId":"`):]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

// memory reads a process's proportional and private memory (smaps_rollup),
// in KiB.
func memory(b *testing.B, pid int) (pss, private int) {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		b.Skip("no /proc/PID/smaps_rollup:", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Pss:":
			pss = kb
		case "Private_Clean:", "Private_Dirty:":
			private += kb
		}
	}
	return pss, private
}

// BenchmarkServeIdleMemory1000Sessions: the growth of the server's private
// memory (and Pss) from no session to 1,000 idle ones, opened by
// open_session over the socket, per session (target: at most 2 MiB each).
func BenchmarkServeIdleMemory1000Sessions(b *testing.B) {
	const n = 1000
	for i := 0; i < b.N; i++ {
		p, sock := startServe(b, "--provider", "fake")
		c := dialServe(b, sock)
		pss0, priv0 := memory(b, p.cmd.Process.Pid)
		for s := 0; s < n; s++ {
			openServed(b, c, "full")
		}
		pss1, priv1 := memory(b, p.cmd.Process.Pid)
		b.ReportMetric(float64(priv1-priv0)/n, "KiB-private/session")
		b.ReportMetric(float64(pss1-pss0)/n, "KiB-pss/session")
		b.ReportMetric(float64(priv1)/1024, "MiB-private-total")
		c.conn.Close()
		p.stop(b)
	}
}

// seqOf is the number at the end of an event frame (`,"seq":N}`).
func seqOf(line []byte) int {
	line = bytes.TrimRight(line, "}\n")
	i := bytes.LastIndex(line, []byte(`"seq":`))
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(line[i+len(`"seq":`):]))
	return n
}

// BenchmarkServeAttachReplay10000: an attach that replays 10,000 events of
// a session (about 500 turns), from the attach command to the last event
// replayed (target: 50 ms).
func BenchmarkServeAttachReplay10000(b *testing.B) {
	const events = 10000
	p, sock := startServe(b, "--provider", "fake")
	defer p.stop(b)
	a := dialServe(b, sock)
	defer a.conn.Close()
	id := openServed(b, a, "delta")
	last := 0
	for t := 0; last < events+1; t++ {
		a.send(b, fmt.Sprintf(`{"id":"p%d","type":"prompt","sessionId":"%s","message":"turn %d"}`, t, id, t))
		last = seqOf(a.must(b, `"type":"agent_end"`))
	}
	after := last - events
	r := dialServe(b, sock)
	defer r.conn.Close()
	var replayed, bytesRead int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.send(b, fmt.Sprintf(`{"id":"t%d","type":"attach","sessionId":"%s","after":%d,"epoch":"epoch1"}`, i, id, after))
		answer := r.must(b, fmt.Sprintf(`"id":"t%d"`, i))
		if bytes.Contains(answer, []byte(`"cursorTooOld"`)) {
			b.Fatalf("no replay: %s", answer)
		}
		j := bytes.Index(answer, []byte(`"seq":`))
		to, _ := strconv.Atoi(string(answer[j+6 : j+6+bytes.IndexByte(answer[j+6:], ',')]))
		marker := []byte(fmt.Sprintf(`,"seq":%d}`, to))
		replayed, bytesRead = 0, 0
		for {
			line, err := r.r.ReadSlice('\n')
			if err != nil && err != bufio.ErrBufferFull {
				b.Fatal(err)
			}
			bytesRead += len(line)
			if err == nil {
				replayed++
				if bytes.HasSuffix(bytes.TrimSuffix(line, []byte("\n")), marker) {
					break
				}
			}
		}
		b.StopTimer()
		if replayed < events {
			b.Fatalf("replayed %d frames, want %d", replayed, events)
		}
		r.must(b, `"type":"clients_changed"`) // its own arrival
		b.StartTimer()
	}
	b.ReportMetric(float64(replayed), "frames-replayed")
	b.ReportMetric(float64(bytesRead)/(1<<20), "MiB-replayed")
}

// benchServeStream times one session's 5,000-delta reply ("ab" each, full
// frames) from the prompt to agent_end read by every one of its clients
// (the controller that prompts and the rest attached by id), and with a
// client that attached and never reads.
func benchServeStream(b *testing.B, clients int, stalled bool) {
	path := filepath.Join(b.TempDir(), "stream.json")
	if err := os.WriteFile(path, []byte(`{"loop":true,"turns":[{"steps":[{"text":["ab"],"repeat":5000}]}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	p, sock := startServe(b, "--provider", "fake", "--model", path)
	defer p.stop(b)
	a := dialServe(b, sock)
	id := openServed(b, a, "full")
	all := []*serveClient{a}
	attach := func() *serveClient {
		c := dialServe(b, sock)
		c.send(b, `{"id":"t","type":"attach","sessionId":"`+id+`"}`)
		c.must(b, `"id":"t"`)
		return c
	}
	for len(all) < clients {
		all = append(all, attach())
	}
	if stalled {
		defer attach().conn.Close() // it reads nothing more
	}
	defer func() {
		for _, c := range all {
			c.conn.Close()
		}
	}()
	var frames int64
	var mu sync.Mutex
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		errs := make(chan error, len(all))
		for _, c := range all {
			go func() {
				n := 0
				for {
					line, err := c.r.ReadSlice('\n')
					if err == bufio.ErrBufferFull {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					n++
					if bytes.HasPrefix(line, []byte(`{"type":"agent_end"`)) {
						break
					}
				}
				mu.Lock()
				frames += int64(n)
				mu.Unlock()
				errs <- nil
			}()
		}
		a.send(b, fmt.Sprintf(`{"id":"p%d","type":"prompt","sessionId":"%s","message":"go"}`, i, id))
		for range all {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(frames)/float64(b.N)/float64(len(all)), "frames/client/op")
}

// BenchmarkServeStream5000Deltas: clients=1, clients=10 (target: at most
// 1.3 times clients=1), clients=10+stalled (an eleventh client that never
// reads: within 10% of clients=10).
func BenchmarkServeStream5000Deltas(b *testing.B) {
	b.Run("clients=1", func(b *testing.B) { benchServeStream(b, 1, false) })
	b.Run("clients=10", func(b *testing.B) { benchServeStream(b, 10, false) })
	b.Run("clients=10+stalled", func(b *testing.B) { benchServeStream(b, 10, true) })
}
