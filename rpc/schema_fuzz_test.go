//go:build unix

package rpc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/schema"
)

// FuzzHostToolSchema registers a host tool with a random schema through
// the real path (set_host_tools on a server whose session has the real
// validator), then validates random arguments against it. Whatever the
// schema names, nothing is opened: the working directory holds a FIFO (an
// open for reading would block, which the bound catches and a probe of
// its write end confirms) and a secret whose random content must appear
// in no frame and no validation line. "@DIR@" in a schema is that
// directory, so the corpus can name both by absolute path and file URL.
func FuzzHostToolSchema(f *testing.F) {
	dir := f.TempDir()
	fifo := filepath.Join(dir, "f.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		f.Fatal(err)
	}
	marker := fmt.Sprintf("TOPSECRET-%d", rand.Int64())
	if err := os.WriteFile(filepath.Join(dir, "secret.json"), []byte(`{"const":"`+marker+`"}`), 0o600); err != nil {
		f.Fatal(err)
	}
	// Relative references meet the files too, had they been resolved
	// against the working directory (as the validator's default did).
	f.Chdir(dir)
	for _, s := range []string{
		`{"type":"object","properties":{"p":{"$ref":"f.fifo"}}}`,
		`{"$ref":"file://@DIR@/f.fifo"}`,
		`{"$ref":"@DIR@/f.fifo"}`,
		`{"$ref":"file:///dev/stdin"}`,
		`{"properties":{"p":{"$ref":"secret.json"}}}`,
		`{"properties":{"p":{"$ref":"file://@DIR@/secret.json#/const"}}}`,
		`{"$schema":"file://@DIR@/secret.json"}`,
		`{"$id":"file://@DIR@/","properties":{"p":{"$ref":"secret.json"}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"file://@DIR@/","properties":{"p":{"$ref":"secret.json"}}}`,
		`{"$dynamicRef":"f.fifo"}`,
		`{"$ref":"https://example.com/s.json"}`,
		`{"$defs":{"k":{"type":"string","minLength":3}},"properties":{"p":{"$ref":"#/$defs/k"}}}`,
		`{"$defs":{"k":{"$anchor":"key","type":"string"}},"properties":{"p":{"$ref":"#key"}}}`,
		`{"$id":"https://example.com/t.json","$defs":{"k":{"$id":"k.json","type":"string"}},"properties":{"p":{"$ref":"k.json"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"p":{"type":"string","pattern":"^a+$"}}}`,
		`{"type":"nope"}`, `{}`, `{"type":`, `[]`,
	} {
		f.Add(s, `{"p":"x"}`)
	}
	f.Fuzz(func(t *testing.T, sch, args string) {
		sch = strings.NewReplacer("@DIR@", dir, "\n", " ", "\r", " ").Replace(sch)
		v := schema.New()
		input := `{"id":"h","type":"set_host_tools","tools":[{"name":"t","description":"d","parameters":` + sch + `}]}` + "\n" +
			`{"id":"__end","type":"get_state"}` + "\n"
		var out string
		var lines []string
		bounded(t, fifo, sch, func() {
			out = serve(t, strings.NewReader(input), false, Options{}, func(c *engine.Config) { c.Validator = v })
			lines = v.Validate([]byte(sch), []byte(args))
		})
		frames := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if last := frames[len(frames)-1]; gjson.Get(last, "id").Str != "__end" {
			t.Fatalf("schema %q: last frame %s", sch, last)
		}
		if strings.Contains(out, marker) || strings.Contains(strings.Join(lines, "\n"), marker) {
			t.Fatalf("schema %q: the secret's content leaked:\n%s\n%s", sch, out, lines)
		}
	})
}

// bounded runs fn with a hang guard; a hang, or a reader left on the
// FIFO, fails t naming schema.
func bounded(t *testing.T, fifo, schema string, fn func()) {
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Fatalf("schema %q hung (FIFO opened: %v):\n%s", schema, fifoOpened(fifo), buf[:n])
	}
	if fifoOpened(fifo) {
		t.Fatalf("schema %q: the FIFO was opened", schema)
	}
}

// fifoOpened reports whether something holds fifo open for reading:
// opening its write end without blocking fails with ENXIO when nothing
// does.
func fifoOpened(fifo string) bool {
	fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		syscall.Close(fd)
		return true
	}
	return !errors.Is(err, syscall.ENXIO)
}
