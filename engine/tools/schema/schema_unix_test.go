//go:build unix

package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A schema that refers outside itself is refused by Check, naming the
// reference, and nothing it names is opened: a FIFO would block the
// caller for good, /dev/stdin would read the host's protocol input, and a
// secret's content would reach the model in a validation error.
func TestCheckRefusesExternalRefs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"const":"TOPSECRET-4711"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	v := New()
	for _, c := range []struct{ schema, ref string }{
		{`{"type":"object","properties":{"p":{"$ref":"file://` + fifo + `"}}}`, "file://" + fifo},
		{`{"$ref":"file:///dev/stdin"}`, "file:///dev/stdin"},
		{`{"properties":{"p":{"$ref":"` + secret + `"}}}`, secret},
		{`{"properties":{"p":{"$ref":"secret.json#/const"}}}`, "secret.json"},
		{`{"$ref":"../../etc/passwd"}`, "/etc/passwd"},
		{`{"$ref":"https://example.com/s.json"}`, "https://example.com/s.json"},
		{`{"$schema":"https://example.com/meta","type":"object"}`, "https://example.com/meta"},
		{`{"$id":"file://` + dir + `/","$ref":"secret.json"}`, "file://" + secret},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","id":"file://` + dir + `/","properties":{"p":{"$ref":"secret.json"}}}`, "file://" + secret},
		{`{"$dynamicRef":"secret.json"}`, "secret.json"},
	} {
		done := make(chan error, 1)
		go func() { done <- v.Check([]byte(c.schema)) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(20 * time.Second): // a hang guard: Check opened the FIFO
			t.Fatalf("%s: Check did not return", c.schema)
		}
		if !errors.Is(err, ErrExternalRef) || !strings.Contains(err.Error(), strconv.Quote(c.ref)) {
			t.Errorf("%s: %v, want ErrExternalRef naming %q", c.schema, err, c.ref)
		}
		// Validate reports the same problem and leaks nothing.
		got := strings.Join(v.Validate([]byte(c.schema), []byte(`{"p":"x"}`)), "|")
		if !strings.HasPrefix(got, "schema: it refers to a document outside itself") || strings.Contains(got, "TOPSECRET") {
			t.Errorf("%s: Validate %q", c.schema, got)
		}
	}
}
