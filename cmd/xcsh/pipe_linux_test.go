package main

import (
	"os"
	"testing"
)

// pipeFull reads what the host has not read yet on the write end, and the
// pipe's size, grown or not.
func TestPipeFull(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	full := pipeFull(w)
	if full == nil {
		t.Fatal("a pipe is not seen as one")
	}
	if full(1000) {
		t.Error("an empty pipe is full")
	}
	if _, err := w.Write(make([]byte, 60<<10)); err != nil {
		t.Fatal(err)
	}
	if !full(8 << 10) {
		t.Error("60 KiB unread and 8 KiB more fit a 64 KiB pipe")
	}
	growPipe(w)
	if full(8 << 10) {
		t.Error("the grown pipe's size was not read again")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if pipeFull(f) != nil {
		t.Error("a file is taken for a pipe")
	}
}
