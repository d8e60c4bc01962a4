package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// The ACP benchmarks (issue 20), through the real binary in --mode acp as
// an editor drives it: start to initialize answered, the first
// agent_message_chunk of a prompt, a 5,000-delta reply (compare with
// BenchmarkStream5000DeltasFull and ...Lean: ACP may cost at most 1.5 times
// RPC's time), and the idle memory of one process holding 10 sessions.

// startACP starts the binary in ACP mode with these flags.
func startACP(b *testing.B, args ...string) *benchProc {
	b.Helper()
	cmd := exec.Command(buildBenchBinary(b), append([]string{"--mode", "acp", "--no-session"}, args...)...)
	cmd.Env = append(os.Environ(), "XCSH_DETERMINISTIC=1")
	return startCmd(b, cmd)
}

// request writes one JSON-RPC request.
func (p *benchProc) request(b *testing.B, id int, method, params string) {
	b.Helper()
	if _, err := fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
		b.Fatal(err)
	}
}

// until reads lines until one starts with prefix, and returns the bytes
// read.
func (p *benchProc) until(b *testing.B, prefix string) int64 {
	b.Helper()
	return readUntil(b, p.out, []byte(prefix), nil)
}

// readUntil reads r's lines (each, if set, sees every one) through the
// first that starts with marker, and returns the bytes read.
func readUntil(b *testing.B, r *bufio.Reader, marker []byte, each func(line []byte)) int64 {
	b.Helper()
	var n int64
	for {
		line, err := r.ReadSlice('\n')
		n += int64(len(line))
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			b.Fatalf("stream ended early: %v", err)
		}
		if each != nil {
			each(line)
		}
		if bytes.HasPrefix(line, marker) {
			return n
		}
	}
}

// contains reads lines until one contains s.
func (p *benchProc) contains(b *testing.B, s string) {
	b.Helper()
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			b.Fatalf("stream ended early: %v", err)
		}
		if bytes.Contains(line, []byte(s)) {
			return
		}
	}
}

// newACPSession initializes a process and opens session n (1-based) in the
// test's directory, waiting for its commands.
func newACPSession(b *testing.B, p *benchProc, id int) {
	b.Helper()
	cwd, _ := os.Getwd()
	p.request(b, id, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd))
	p.contains(b, `"available_commands_update"`)
}

// BenchmarkACPColdStartInitialize: process start to the initialize answer.
func BenchmarkACPColdStartInitialize(b *testing.B) {
	buildBenchBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := startACP(b, "--provider", "fake")
		p.request(b, 1, "initialize", `{"protocolVersion":1}`)
		p.line(b)
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
}

// BenchmarkACPFirstChunk: session/prompt to the first agent_message_chunk,
// on a live session (the demo model).
func BenchmarkACPFirstChunk(b *testing.B) {
	p := startACP(b, "--provider", "fake")
	defer p.stop(b)
	p.request(b, 1, "initialize", `{"protocolVersion":1}`)
	p.line(b)
	newACPSession(b, p, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.request(b, 10+i, "session/prompt", `{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"hello"}]}`)
		p.contains(b, `"agent_message_chunk"`)
		b.StopTimer()
		p.contains(b, `"stopReason"`)
		b.StartTimer()
	}
}

// BenchmarkACPStream5000Deltas: a 5,000-delta reply, session/prompt to its
// answer, on fresh processes (as BenchmarkStream5000Deltas* time RPC's).
func BenchmarkACPStream5000Deltas(b *testing.B) {
	script := streamScript(b, 5000)
	var total int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := startACP(b, "--provider", "fake", "--model", script)
		p.request(b, 1, "initialize", `{"protocolVersion":1}`)
		p.line(b)
		newACPSession(b, p, 2)
		b.StartTimer()
		p.request(b, 3, "session/prompt", `{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"go"}]}`)
		total += p.until(b, `{"jsonrpc":"2.0","id":3,`)
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/float64(b.N), "stdout-bytes/op")
}

// BenchmarkACPStream5000DeltasSlowReader: the same reply read by an editor
// that takes 4 KiB a millisecond (unmerged, the 1 MB of chunks would take
// a quarter of a second to read): while stdout is full the deltas piling up
// are merged into one chunk, so the editor gets fewer, longer chunks and
// the text is the same.
func BenchmarkACPStream5000DeltasSlowReader(b *testing.B) {
	script := streamScript(b, 5000)
	marker := []byte(`{"jsonrpc":"2.0","id":3,`)
	var total, chunks int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := startACP(b, "--provider", "fake", "--model", script)
		p.request(b, 1, "initialize", `{"protocolVersion":1}`)
		p.line(b)
		newACPSession(b, p, 2)
		slow := bufio.NewReaderSize(&throttled{r: p.out, chunk: 4 << 10, pause: time.Millisecond}, 1<<20)
		b.StartTimer()
		p.request(b, 3, "session/prompt", `{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"go"}]}`)
		var text int
		n := readUntil(b, slow, marker, func(line []byte) {
			if bytes.Contains(line, []byte(`"agent_message_chunk"`)) {
				chunks++
				text += bytes.Count(line, []byte("lorem ipsum "))
			}
		})
		b.StopTimer()
		if text != 5000 {
			b.Fatalf("the chunks carry %d of the 5000 deltas' texts", text)
		}
		total += n
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/float64(b.N), "stdout-bytes/op")
	b.ReportMetric(float64(chunks)/float64(b.N), "chunks/op")
}

// BenchmarkACPIdleMemory10Sessions: the resident memory of one process
// holding 10 idle sessions, each after one turn.
func BenchmarkACPIdleMemory10Sessions(b *testing.B) {
	for i := 0; i < b.N; i++ {
		p := startACP(b, "--provider", "fake")
		p.request(b, 1, "initialize", `{"protocolVersion":1}`)
		p.line(b)
		for s := 1; s <= 10; s++ {
			newACPSession(b, p, 100+s)
			p.request(b, 200+s, "session/prompt", fmt.Sprintf(`{"sessionId":"%016x","prompt":[{"type":"text","text":"hello"}]}`, s))
			p.contains(b, `"stopReason"`)
		}
		reportRSS(b, p)
		p.stop(b)
	}
}
