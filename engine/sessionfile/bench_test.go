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
