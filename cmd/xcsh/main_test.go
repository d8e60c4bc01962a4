package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xcsh-go/xcsh/engine/provider/ollama/ollamatest"
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
	p := rpctest.Params(filepath.Join(root, "testscripts"), filepath.Join(root, "golden"), func(env *testscript.Env) error {
		env.Values[apiServersKey{}] = map[string]recorder{}
		return nil
	})
	p.Cmds["apiserver"] = apiServerCmd
	testscript.Run(t, p)
}

// apiServerCmds are the scenarios' stand-ins for model APIs: the adapters'
// own scripted servers on 127.0.0.1.
//
//	apiserver ollama NAME SCRIPT   start ollamatest with the script; $NAME is its URL
//	apiserver requests NAME        print the request bodies it received, one per line
func apiServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("apiserver: no negation")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: apiserver ollama NAME SCRIPT | apiserver requests NAME")
	}
	servers, _ := ts.Value(apiServersKey{}).(map[string]recorder)
	switch args[0] {
	case "ollama":
		if len(args) != 3 {
			ts.Fatalf("usage: apiserver ollama NAME SCRIPT")
		}
		script, err := ollamatest.Load(ts.MkAbs(args[2]))
		ts.Check(err)
		srv := ollamatest.NewServer(script)
		ts.Defer(srv.Close)
		servers[args[1]] = ollamaBodies{srv}
		ts.Setenv(args[1], srv.URL)
	case "requests":
		srv, ok := servers[args[1]]
		if !ok {
			ts.Fatalf("apiserver: no server named %q", args[1])
		}
		for _, body := range srv.RequestBodies() {
			fmt.Fprintf(ts.Stdout(), "%s\n", body)
		}
	default:
		ts.Fatalf("apiserver: unknown kind %q (want ollama or requests)", args[0])
	}
}

type apiServersKey struct{}

type ollamaBodies struct{ *ollamatest.Server }

func (o ollamaBodies) RequestBodies() [][]byte {
	var out [][]byte
	for _, r := range o.Requests() {
		if r.Path == "/api/chat" {
			out = append(out, r.Body)
		}
	}
	return out
}

// recorder is what every scripted API server offers the scenarios.
type recorder interface{ RequestBodies() [][]byte }
