package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xcsh-go/xcsh/engine/provider/bedrock/bedrocktest"
)

// What Bedrock's helper process costs: the first call of a session starts
// xcsh-bedrock (a process, AWS's package inits, the configuration load)
// before its request; later calls reuse it. Both against bedrocktest, so
// what is measured is the helper, not a model.

var (
	helperBinOnce sync.Once
	helperBin     string
	helperBinErr  error
)

func buildHelperBinary(b *testing.B) string {
	b.Helper()
	helperBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "xcsh-bedrock-bench-")
		if err != nil {
			helperBinErr = err
			return
		}
		helperBin = filepath.Join(dir, "xcsh-bedrock")
		if out, err := exec.Command("go", "build", "-o", helperBin, "../xcsh-bedrock").CombinedOutput(); err != nil {
			helperBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if helperBinErr != nil {
		b.Fatal(helperBinErr)
	}
	return helperBin
}

type helperProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startHelper(b *testing.B, bin string) *helperProc {
	b.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDBENCH", "AWS_SECRET_ACCESS_KEY=bench", "AWS_REGION=us-east-1", "HOME="+b.TempDir())
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &helperProc{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// call sends one call and reads its lines until its end.
func (h *helperProc) call(b *testing.B, id int, url string) {
	b.Helper()
	fmt.Fprintf(h.in, `{"id":%d,"request":{"model":{"id":"us.anthropic.claude-sonnet-4-20250514-v1:0","api":"bedrock-converse-stream","provider":"amazon-bedrock","baseUrl":%q},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}]}}`+"\n", id, url)
	for {
		l, err := h.out.ReadString('\n')
		if err != nil {
			b.Fatalf("helper: %v", err)
		}
		if strings.Contains(l, `"error"`) {
			b.Fatalf("helper: %s", l)
		}
		if strings.Contains(l, `"end":true`) {
			return
		}
	}
}

func (h *helperProc) stop(b *testing.B) {
	h.in.Close()
	io.Copy(io.Discard, h.out)
	if err := h.cmd.Wait(); err != nil {
		b.Fatalf("helper exited: %v", err)
	}
}

func bedrockBenchServer(n int) *bedrocktest.Server {
	s := bedrocktest.Script{}
	for range n {
		s.Responses = append(s.Responses, bedrocktest.TextResponse("hello"))
	}
	return bedrocktest.New(s)
}

// BenchmarkBedrockHelperFirstCall: the helper's start to the end of its
// first call's stream.
func BenchmarkBedrockHelperFirstCall(b *testing.B) {
	bin := buildHelperBinary(b)
	srv := bedrockBenchServer(b.N)
	defer srv.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := startHelper(b, bin)
		h.call(b, 1, srv.URL)
		b.StopTimer()
		h.stop(b)
		b.StartTimer()
	}
}

// BenchmarkBedrockHelperLaterCall: a call on a running helper.
func BenchmarkBedrockHelperLaterCall(b *testing.B) {
	bin := buildHelperBinary(b)
	srv := bedrockBenchServer(b.N + 1)
	defer srv.Close()
	h := startHelper(b, bin)
	defer h.stop(b)
	h.call(b, 0, srv.URL) // the start, not measured
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.call(b, i+1, srv.URL)
	}
}
