package sessionfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// benchFile writes a session of about n entries (a realistic mix of
// ~300 bytes each) and returns its path.
func benchFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	s := New(path, newHeader())
	es := conversation(n / 3)
	parent := ""
	for i, e := range es {
		e.ID = fmt.Sprintf("%08x", i+1)
		e.ParentID = parent
		parent = e.ID
	}
	appendAll(b, s, es)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchLoad(b *testing.B, n int) {
	path := benchFile(b, n)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	var s *Session
	for i := 0; i < b.N; i++ {
		var err error
		if s, err = Load(path); err != nil || len(s.Warnings) != 0 {
			b.Fatal(err, s.Warnings)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(fi.Size())/float64(len(s.Entries)), "B/entry")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "liveMiB")
	runtime.KeepAlive(s)
}

func BenchmarkLoad1k(b *testing.B)   { benchLoad(b, 1_000) }
func BenchmarkLoad10k(b *testing.B)  { benchLoad(b, 10_000) }
func BenchmarkLoad100k(b *testing.B) { benchLoad(b, 100_000) }

// bigFile writes a session of about size bytes shaped like a long coding
// session: prompts, assistant text, tool calls, and tool results that
// carry source code (this package's own files, so tabs, quotes, newlines
// and escapes occur as they do in real output), each up to 64 KiB.
func bigFile(b *testing.B, size int64) string {
	b.Helper()
	var src []byte
	for _, name := range []string{"load.go", "store.go", "list.go", "header.go", "truncate.go"} {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, data...)
	}
	path := filepath.Join(b.TempDir(), "big.jsonl")
	s := New(path, newHeader())
	parent := ""
	var written int64
	for i := 0; written < size; i++ {
		var e *engine.Entry
		switch i % 3 {
		case 0:
			e = userEntry(fmt.Sprintf("step %d: read the next file and fix what looks wrong — «carefully»", i))
		case 1:
			a := assistantEntry("Reading it now.\n\n```go\n" + string(src[:200+i%800]) + "\n```")
			a.Message.(*engine.AssistantMessage).Content = append(a.Message.(*engine.AssistantMessage).Content,
				engine.ContentBlock{Type: engine.BlockToolCall, ID: fmt.Sprintf("call_%d", i), Name: "read",
					Arguments: []byte(`{"path":"engine/sessionfile/load.go"}`)})
			e = a
		default:
			off := (i * 7919) % (len(src) / 2)
			n := min(len(src)-off, 1<<10+(i*104729)%(64<<10))
			e = &engine.Entry{Type: engine.EntryMessage, Message: &engine.ToolResultMessage{
				ToolCallID: fmt.Sprintf("call_%d", i-1), ToolName: "read",
				Content: []engine.ContentBlock{engine.TextBlock(string(src[off : off+n]))}, Timestamp: t0}}
		}
		e.ID = fmt.Sprintf("%08x", i+1)
		e.ParentID = parent
		parent = e.ID
		line := e.AppendJSON(nil)
		written += int64(len(line)) + 1
		if err := s.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoad256MiB loads a 256 MiB session of large entries: the speed
// a long session resumes at (at least 100 MB/s) and the memory it takes
// (liveMiB: the entries; the reader holds a few chunks at a time).
func BenchmarkLoad256MiB(b *testing.B) {
	path := bigFile(b, 256<<20)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	var s *Session
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s = nil
		runtime.GC() // the previous load's entries are not this one's garbage
		b.StartTimer()
		var err error
		if s, err = Load(path); err != nil || len(s.Warnings) != 0 {
			b.Fatal(err, s.Warnings)
		}
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "liveMiB")
	runtime.KeepAlive(s)
}

func benchAppendAt(b *testing.B, n int) {
	path := benchFile(b, n)
	sess, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := OpenAppend(path, sess)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e := chain(userEntry("one more question about main.go, please keep it short"))[0]
	e.ParentID = sess.Leaf
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.ID = fmt.Sprintf("f%07x", i)
		if err := st.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendAt10(b *testing.B)   { benchAppendAt(b, 10) }
func BenchmarkAppendAt100k(b *testing.B) { benchAppendAt(b, 100_000) }

// BenchmarkDecodeEntry is the per-line cost of Load.
func BenchmarkDecodeEntry(b *testing.B) {
	line := conversation(1)[3].AppendJSON(nil) // an assistant message with a tool call
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := engine.DecodeEntry(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendSynced is what an fsync per entry would cost (the policy
// this package does not take; see the package comment).
func BenchmarkAppendSynced(b *testing.B) {
	path := benchFile(b, 10)
	sess, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := OpenAppend(path, sess)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e := chain(userEntry("one more question"))[0]
	e.ParentID = sess.Leaf
	for i := 0; i < b.N; i++ {
		e.ID = fmt.Sprintf("f%07x", i)
		if err := st.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
		if err := st.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList100 lists 100 sessions of 1,000 entries: only the head of
// each file is read.
func BenchmarkList100(b *testing.B) {
	src, err := os.ReadFile(benchFile(b, 1_000))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for i := range 100 {
		if err := os.WriteFile(filepath.Join(dir, FileName(t0, fmt.Sprintf("%016x", i))), src, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		infos, err := List(dir)
		if err != nil || len(infos) != 100 || infos[0].FirstMessage == "" {
			b.Fatal(err, len(infos))
		}
	}
}
