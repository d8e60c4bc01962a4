package main

import (
	"io"
	"testing"
)

// BenchmarkBashRoundTrip: an RPC bash command running `true`, request to
// response, on a live process whose supervisor has started: what a
// command start costs through the supervisor, sandbox off and in
// workspace-write with the network off (Landlock and the namespace are
// applied once, to the supervisor, so the two should not differ).
func BenchmarkBashRoundTrip(b *testing.B) {
	for _, mode := range []string{"off", "workspace-write"} {
		b.Run(mode, func(b *testing.B) {
			p := startBench(b, "--provider", "fake", "--sandbox", mode)
			defer p.stop(b)
			p.line(b) // ready
			req := []byte(`{"id":"b","type":"bash","command":"true"}` + "\n")
			for range 5 { // the supervisor's start and warm-up
				if _, err := p.in.Write(req); err != nil {
					b.Fatal(err)
				}
				p.line(b)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.in.Write(req); err != nil {
					b.Fatal(err)
				}
				p.line(b)
			}
		})
	}
}

// BenchmarkBashFirstCommand: process start to the first bash response,
// which pays for the supervisor's start (at the first command when off,
// before ready in a sandbox mode).
func BenchmarkBashFirstCommand(b *testing.B) {
	buildBenchBinary(b)
	for _, mode := range []string{"off", "workspace-write"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				p := startBench(b, "--provider", "fake", "--sandbox", mode)
				if _, err := io.WriteString(p.in, `{"id":"b","type":"bash","command":"true"}`+"\n"); err != nil {
					b.Fatal(err)
				}
				p.line(b) // ready
				p.line(b) // the response
				b.StopTimer()
				p.stop(b)
				b.StartTimer()
			}
		})
	}
}
