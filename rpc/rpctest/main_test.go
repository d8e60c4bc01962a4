package rpctest

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain installs jsonl-echo on the scripts' $PATH, so the harness's
// failure tests drive a process without depending on any real binary. It
// is installed as xcsh too: rpc replay records only xcsh, and its tests
// record the echo under that name.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"jsonl-echo": EchoMain,
		"xcsh":       EchoMain,
	})
}
