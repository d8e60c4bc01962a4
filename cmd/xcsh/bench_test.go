package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The benchmarks drive a real, separately built binary (no race detector,
// no coverage), as a host would. Run them with `make bench`.

var (
	benchBinOnce sync.Once
	benchBin     string
	benchBinErr  error
)

func buildBenchBinary(b *testing.B) string {
	b.Helper()
	benchBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xcsh-bench-")
		if err != nil {
			benchBinErr = err
			return
		}
		benchBin = filepath.Join(dir, "xcsh")
		out, err := exec.Command("go", "build", "-o", benchBin, ".").CombinedOutput()
		if err != nil {
			benchBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if benchBinErr != nil {
		b.Fatal(benchBinErr)
	}
	return benchBin
}

type benchProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startBench(b *testing.B, args ...string) *benchProc {
	b.Helper()
	cmd := exec.Command(buildBenchBinary(b), append([]string{"--mode", "rpc", "--no-session"}, args...)...)
	cmd.Env = append(os.Environ(), "XCSH_DETERMINISTIC=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &benchProc{cmd: cmd, in: in, out: bufio.NewReaderSize(outPipe, 1<<20)}
}

func (p *benchProc) line(b *testing.B) []byte {
	b.Helper()
	l, err := p.out.ReadBytes('\n')
	if err != nil {
		b.Fatalf("reading stdout: %v", err)
	}
	return l
}

func (p *benchProc) stop(b *testing.B) {
	b.Helper()
	p.in.Close()
	io.Copy(io.Discard, p.out)
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("xcsh exited: %v", err)
	}
}

// BenchmarkColdStartFirstResponse: process start to the first answered
// command (ready, then a get_state response).
func BenchmarkColdStartFirstResponse(b *testing.B) {
	buildBenchBinary(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := startBench(b, "--provider", "fake")
		if _, err := io.WriteString(p.in, `{"id":"s","type":"get_state"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		p.line(b) // ready
		p.line(b) // the response
		b.StopTimer()
		p.stop(b)
		b.StartTimer()
	}
}

// BenchmarkGetStateRoundTrip: one get_state request to its response, on a
// live idle process.
func BenchmarkGetStateRoundTrip(b *testing.B) {
	p := startBench(b, "--provider", "fake")
	defer p.stop(b)
	p.line(b)
	req := []byte(`{"id":"s","type":"get_state"}` + "\n")
	// Steady state: the first round trips pay for page faults and the
	// scheduler waking up, which a host's thousandth get_state does not.
	for i := 0; i < 500; i++ {
		if _, err := p.in.Write(req); err != nil {
			b.Fatal(err)
		}
		p.line(b)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.in.Write(req); err != nil {
			b.Fatal(err)
		}
		p.line(b)
	}
}

// BenchmarkIdleMemory reports the resident set of an idle process after
// ready and one answered command.
func BenchmarkIdleMemory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		p := startBench(b, "--provider", "fake")
		p.line(b)
		io.WriteString(p.in, `{"id":"s","type":"get_state"}`+"\n")
		p.line(b)
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
		if err != nil {
			b.Skip("no /proc:", err)
		}
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				kb, _ := strconv.Atoi(strings.Fields(l)[1])
				b.ReportMetric(float64(kb)/1024, "MB-rss")
			}
		}
		p.stop(b)
	}
}

// streamScript writes a fake script of one reply with n text deltas of
// "lorem ipsum " (12 bytes): 5,000 of them give a 60 KB message, whose full
// update frames total about 300 MB, the originals' order of magnitude.
func streamScript(b *testing.B, n int) string {
	path := filepath.Join(b.TempDir(), "stream.json")
	script := fmt.Sprintf(`{"turns":[{"steps":[{"text":["lorem ipsum "],"repeat":%d}]}]}`, n)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchStream(b *testing.B, mode string) {
	script := streamScript(b, 5000)
	marker := []byte(`{"type":"agent_end"`)
	var total int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := startBench(b, "--provider", "fake", "--model", script, "--rpc-updates", mode)
		p.line(b)
		b.StartTimer()
		io.WriteString(p.in, `{"id":"p","type":"prompt","message":"go"}`+"\n")
		var n int64
		for {
			line, err := p.out.ReadSlice('\n')
			n += int64(len(line))
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				b.Fatalf("stream ended early: %v", err)
			}
			if bytes.HasPrefix(line, marker) {
				break
			}
		}
		b.StopTimer()
		total += n
		p.stop(b)
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/float64(b.N), "stdout-bytes/op")
}

// BenchmarkStream5000DeltasFull: the original's frames (two snapshots each).
func BenchmarkStream5000DeltasFull(b *testing.B) { benchStream(b, "full") }

// BenchmarkStream5000DeltasLean: --rpc-updates=delta.
func BenchmarkStream5000DeltasLean(b *testing.B) { benchStream(b, "delta") }
