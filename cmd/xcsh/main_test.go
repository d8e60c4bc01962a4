package main

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xcsh-go/xcsh/rpc/rpctest"
)

// TestMain lets testscript install this test binary as commands on the
// scripts' $PATH: "xcsh" is the real program; "jsonl-echo" is the harness's
// stand-in for an RPC server, which the harness_* scenarios drive.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"xcsh":       main,
		"jsonl-echo": rpctest.EchoMain,
	})
}

// TestScripts runs every scenario in testscripts/ against the goldens in
// golden/ (see docs/testing.md).
func TestScripts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, rpctest.Params(filepath.Join(root, "testscripts"), filepath.Join(root, "golden")))
}
