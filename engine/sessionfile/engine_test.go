package sessionfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/fakeprovider"
)

// The engine writes through a Store: nothing before the first answer,
// then a file that loads back to the same record and passes the format
// checker.
func TestEngineWritesThroughStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sessions", "-w", FileName(t0, "0123456789abcdef"))
	store := New(path, newHeader())
	s := engine.New(engine.Config{
		Provider: fakeprovider.Demo(),
		Model:    &engine.Model{ID: "demo", API: "fake", Provider: "fake"},
		Store:    store,
		Clock:    engine.DeterministicEpoch,
		IDs:      &engine.RandomIDs{Clock: engine.DeterministicEpoch},
	})
	done := make(chan struct{})
	go func() { s.Loop(); close(done) }()
	defer func() { s.Stop(); <-done; s.Close() }()
	idle := func() {
		ch := make(chan struct{})
		s.Post(func() { s.WhenIdle(func() { close(ch) }) })
		<-ch
	}
	prompt := func(text string) {
		var err error
		s.Call(func() { err = s.Prompt(text, engine.PromptOptions{}) })
		if err != nil {
			t.Fatal(err)
		}
		idle()
	}
	s.Call(func() { s.SetThinkingLevel("off") })
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file before any answer: %v", err)
	}
	prompt("hello")
	prompt("demo:tool read a.go")
	var record []*engine.Entry
	var leaf string
	s.Call(func() { record, leaf = s.Entries(), s.Leaf() })

	checkFormat(t, fileLines(t, path))
	sess, err := Load(path)
	if err != nil || len(sess.Warnings) != 0 {
		t.Fatalf("load: %v %q", err, sess.Warnings)
	}
	if len(sess.Entries) != len(record) || sess.Leaf != leaf || len(record) < 4 {
		t.Fatalf("%d entries loaded, %d recorded; leaf %q, %q", len(sess.Entries), len(record), sess.Leaf, leaf)
	}
	for i, e := range record {
		if got, want := string(sess.Entries[i].AppendJSON(nil)), string(e.AppendJSON(nil)); got != want {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
