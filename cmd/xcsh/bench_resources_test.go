package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkColdStartResources: process start to ready, and to the first
// answered command, in a project with 50 skills, 50 prompt templates and 3
// MCP servers (the test server, on $PATH through TestMain) against an empty
// one. The two start alternately in each iteration and the medians are
// reported, so a machine busy with other work skews both alike. Discovery
// and server start-up are off the start-up path: ready must not come later;
// the first answer waits for the skills and templates, not for the
// servers.
func BenchmarkColdStartResources(b *testing.B) {
	buildBenchBinary(b)
	none, full := b.TempDir(), b.TempDir()
	writeSetup(b, full)
	var readyNone, readyFull, firstNone, firstFull []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, f := coldStart(b, none)
		readyNone, firstNone = append(readyNone, r), append(firstNone, f)
		r, f = coldStart(b, full)
		readyFull, firstFull = append(readyFull, r), append(firstFull, f)
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(med(readyNone), "µs-ready-empty")
	b.ReportMetric(med(readyFull), "µs-ready-50s50t3mcp")
	b.ReportMetric(med(firstNone), "µs-first-answer-empty")
	b.ReportMetric(med(firstFull), "µs-first-answer-50s50t3mcp")
}

// coldStart starts the binary in dir and returns the time to its ready
// frame and to the answer of a get_state sent at once.
func coldStart(b *testing.B, dir string) (ready, first time.Duration) {
	b.Helper()
	start := time.Now()
	p := startIn(b, dir, "--provider", "fake", "--no-session")
	if _, err := io.WriteString(p.in, `{"id":"s","type":"get_state"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	p.line(b)
	ready = time.Since(start)
	p.line(b)
	first = time.Since(start)
	p.stop(b)
	return ready, first
}

// startIn starts the bench binary in dir, with HOME there too, so the
// user's own setup stays out of the measurement.
func startIn(b *testing.B, dir string, args ...string) *benchProc {
	b.Helper()
	cmd := exec.Command(buildBenchBinary(b), append([]string{"--mode", "rpc"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XCSH_DETERMINISTIC=1", "HOME="+dir, "PI_CODING_AGENT_DIR="+filepath.Join(dir, "agent"))
	return startCmd(b, cmd)
}

// writeSetup writes 50 skills, 50 templates and an .mcp.json naming 3
// servers into dir.
func writeSetup(b *testing.B, dir string) {
	b.Helper()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ {
		write(fmt.Sprintf(".xcsh/skills/skill-%d/SKILL.md", i),
			fmt.Sprintf("---\nname: skill-%d\ndescription: Skill number %d, for benchmarks\n---\n\nDo thing %d carefully.\n", i, i, i))
		write(fmt.Sprintf(".xcsh/prompts/tmpl-%d.md", i),
			fmt.Sprintf("---\ndescription: Template %d\nargument-hint: <what>\n---\nReview $1 for case %d.\n", i, i))
	}
	if _, err := exec.LookPath("mcp-test-server"); err != nil {
		b.Fatalf("mcp-test-server is not on $PATH: %v", err)
	}
	write(".mcp.json", `{"mcpServers":{"a":{"command":"mcp-test-server"},"b":{"command":"mcp-test-server"},"c":{"command":"mcp-test-server"}}}`)
}
