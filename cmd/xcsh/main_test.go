package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/xcsh-go/xcsh/docs/examples/extensions/wordcount"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/extension/extkit"
	"github.com/xcsh-go/xcsh/engine/extension/exttest"
	"github.com/xcsh-go/xcsh/engine/mcp/mcptest"
	"github.com/xcsh-go/xcsh/engine/provider/anthropic/anthropictest"
	"github.com/xcsh-go/xcsh/engine/provider/bedrock"
	"github.com/xcsh-go/xcsh/engine/provider/bedrock/bedrocktest"
	"github.com/xcsh-go/xcsh/engine/provider/gemini/geminitest"
	"github.com/xcsh-go/xcsh/engine/provider/ollama/ollamatest"
	"github.com/xcsh-go/xcsh/engine/provider/openai/openaitest"
	"github.com/xcsh-go/xcsh/engine/provider/subproc"
	"github.com/xcsh-go/xcsh/rpc/acp/acptest"
	"github.com/xcsh-go/xcsh/rpc/rpctest"
)

// TestMain lets testscript install this test binary as commands on the
// scripts' $PATH: "xcsh" is the real program; "jsonl-echo" is the harness's
// stand-in for an RPC server, which the harness_* scenarios drive;
// "mcp-test-server" is the MCP server of the mcp_* scenarios (stdio);
// "xcsh-testext" is the scripted extension of the ext_* scenarios
// (engine/extension/exttest: the extension a plan file describes).
func TestMain(m *testing.M) {
	// The scenarios' xcsh is this binary: the engine's re-entry check runs
	// in every scenario (a post from the executor panics there).
	engine.CheckReentry(true)
	testscript.Main(m, map[string]func(){
		"xcsh":            main,
		"jsonl-echo":      rpctest.EchoMain,
		"mcp-test-server": mcptest.Main,
		"xcsh-testext":    exttest.Main,
		// The Go example of docs/examples/extensions, as its main builds it.
		"xcsh-ext-wordcount": func() { os.Exit(extkit.Run(wordcount.Extension())) },
		"acp-client":         acptest.Main,
		// The helper that serves Bedrock models (cmd/xcsh-bedrock).
		"xcsh-bedrock": bedrockHelperMain,
		// xcsh whose worker dies right after a tool ran
		// (temporal_script_test.go).
		"xcsh-crash-after-tool": crashAfterToolMain,
		// Stacks Landlock layers, then execs a program (sandbox scenarios).
		"landlock-layers": landlockLayersMain,
	})
}

// TestScripts runs every scenario in testscripts/ against the goldens in
// golden/ (see docs/testing.md).
func TestScripts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopRealOllama)
	t.Cleanup(func() {
		if exampleClient.path != "" {
			os.RemoveAll(filepath.Dir(exampleClient.path))
		}
		// A later run in the same process (go test -count=2) builds its own.
		exampleClient.once, exampleClient.path, exampleClient.err = sync.Once{}, "", nil
	})
	p := rpctest.Params(filepath.Join(root, "testscripts"), filepath.Join(root, "golden"), func(env *testscript.Env) error {
		env.Values[apiServersKey{}] = map[string]recorder{}
		env.Values[otlpKey{}] = map[string]*collector{} // otlp_test.go
		// The example extensions the ext_example_* scenarios run.
		env.Setenv("XCSH_EXAMPLES", filepath.Join(root, "docs", "examples", "extensions"))
		env.Setenv("XCSH_REPO_ROOT", root)
		// Scenarios that use the condition [real-ollama] talk to the real
		// Ollama server of ../shared/ollama, started once for the run
		// that needs it.
		if usesRealOllama(root, strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")) {
			url, err := realOllama(root)
			env.Setenv("REAL_OLLAMA", url)
			if err != nil {
				env.Setenv("REAL_OLLAMA_ERR", err.Error())
			}
		}
		// The live check talks to a real Ollama only when asked to; other
		// scenarios never see the developer's OLLAMA_HOST.
		// The third-party MCP server of mcp_npm_server_everything, when
		// .ci/run installed it (else the scenario runs it through npx).
		env.Setenv("XCSH_MCP_EVERYTHING", mcpEverything())
		// The TypeScript ACP SDK of acp_sdk_ts_client, when .ci/run
		// installed it (else the scenario installs it with npm).
		env.Setenv("ACP_TS_SDK", acpTSSDK())
		// npm and node run by a scenario trust the machine's CAs and read
		// the user's configuration although $HOME is the scenario's.
		for _, k := range []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"} {
			if v := os.Getenv(k); v != "" {
				env.Setenv(k, v)
			}
		}
		if home, err := os.UserHomeDir(); err == nil {
			if rc := filepath.Join(home, ".npmrc"); fileExists(rc) && os.Getenv("NPM_CONFIG_USERCONFIG") == "" {
				env.Setenv("NPM_CONFIG_USERCONFIG", rc)
			}
		}
		if liveOllama() {
			for _, k := range []string{"OLLAMA_HOST", "XCSH_LIVE_OLLAMA_MODEL"} {
				env.Setenv(k, os.Getenv(k))
			}
		}
		return nil
	})
	p.Condition = func(cond string) (bool, error) {
		switch cond {
		case "live-ollama":
			return liveOllama(), nil
		case "real-ollama":
			url, err := realOllama(root)
			return url != "" && err == nil, nil
		case "mcp-everything-installed":
			return mcpEverything() != "", nil
		case "small-fs":
			return smallFS(), nil
		case "acp-ts-sdk-installed":
			return acpTSSDK() != "", nil
		case "temporal": // built with -tags temporal (docs/durable.md)
			return temporalBuilt, nil
		case "temporal-server": // ../shared/temporal's dev server can start
			return temporalServerAvailable(root) == "", nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	p.Cmds["apiserver"] = apiServerCmd
	p.Cmds["otlp"] = otlpCmd            // otlp_test.go
	p.Cmds["atif-valid"] = atifValidCmd // otlp_test.go
	p.Cmds["mcpserver"] = mcpServerCmd
	p.Cmds["render"] = renderCmd
	p.Cmds["acp-example-client"] = acpExampleClientCmd
	p.Cmds["docexamples"] = docExamplesCmd
	p.Cmds["temporal-server"] = temporalServerCmd(root) // temporal_script_test.go
	p.Cmds["event-stream"] = eventStreamCmd
	p.Cmds["front-cursor"] = frontCursorCmd
	p.Cmds["session-of"] = sessionOfCmd
	testscript.Run(t, p)
}

// apiServerCmds are the scenarios' stand-ins for model APIs: the adapters'
// own scripted servers on 127.0.0.1.
//
//	apiserver ollama NAME SCRIPT     start ollamatest with the script; $NAME is its URL
//	apiserver openai NAME SCRIPT     the same with openaitest ($NAME ends in /v1)
//	apiserver anthropic NAME SCRIPT  the same with anthropictest
//	apiserver gemini NAME SCRIPT     the same with geminitest ($NAME has no version: add /v1beta)
//	apiserver bedrock NAME SCRIPT    the same with bedrocktest (Bedrock's ConverseStream)
//	apiserver requests NAME        print the request bodies it received, one per line
//	apiserver header NAME HEADER   print that header of each request (openai, bedrock)
func apiServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: apiserver ollama|openai|anthropic|gemini|bedrock NAME SCRIPT | apiserver requests NAME | apiserver header NAME HEADER")
	}
	servers, _ := ts.Value(apiServersKey{}).(map[string]recorder)
	if args[0] == "header" {
		apiHeaders(ts, servers, args) // otlp_test.go
		return
	}
	if args[0] == "requests" {
		srv, ok := servers[args[1]]
		if !ok {
			ts.Fatalf("apiserver: no server named %q", args[1])
		}
		// Stdout taken even for no request: testscript keeps the
		// previous command's stdout when a builtin never asks for it.
		out := ts.Stdout()
		for _, body := range srv.RequestBodies() {
			fmt.Fprintf(out, "%s\n", body)
		}
		return
	}
	start, ok := apiServers[args[0]]
	if !ok {
		ts.Fatalf("apiserver: unknown kind %q (want ollama, openai, anthropic, gemini, bedrock, requests or header)", args[0])
	}
	if len(args) != 3 {
		ts.Fatalf("usage: apiserver %s NAME SCRIPT", args[0])
	}
	url, rec, stop, err := start(ts.MkAbs(args[2]))
	ts.Check(err)
	ts.Defer(stop)
	servers[args[1]] = rec
	ts.Setenv(args[1], url)
}

// apiServers start each API's scripted server from a script file.
var apiServers = map[string]func(script string) (url string, rec recorder, stop func(), err error){
	"ollama": func(path string) (string, recorder, func(), error) {
		script, err := ollamatest.Load(path)
		if err != nil {
			return "", nil, nil, err
		}
		srv := ollamatest.NewServer(script)
		return srv.URL, ollamaBodies{srv}, srv.Close, nil
	},
	"openai": func(path string) (string, recorder, func(), error) {
		script, err := openaitest.LoadScript(path)
		if err != nil {
			return "", nil, nil, err
		}
		srv := openaitest.NewServer(script)
		return srv.URL, openaiBodies{srv}, srv.Close, nil
	},
	"anthropic": func(path string) (string, recorder, func(), error) {
		script, err := anthropictest.Load(path)
		if err != nil {
			return "", nil, nil, err
		}
		srv := anthropictest.New(script)
		return srv.URL, anthropicBodies{srv}, srv.Close, nil
	},
	"gemini": func(path string) (string, recorder, func(), error) {
		script, err := geminitest.Load(path)
		if err != nil {
			return "", nil, nil, err
		}
		srv := geminitest.New(script)
		return srv.URL, geminiBodies{srv}, srv.Close, nil
	},
	"bedrock": func(path string) (string, recorder, func(), error) {
		script, err := bedrocktest.Load(path)
		if err != nil {
			return "", nil, nil, err
		}
		srv := bedrocktest.New(script)
		return srv.URL, bedrockRequests{srv}, srv.Close, nil
	},
}

type apiServersKey struct{}

// bedrockHelperMain is cmd/xcsh-bedrock's main, for the scenarios' $PATH.
func bedrockHelperMain() {
	signal.Ignore(os.Interrupt)
	if err := subproc.Serve(os.Stdin, os.Stdout, bedrock.New(bedrock.Options{}).StreamKey); err != nil {
		fmt.Fprintln(os.Stderr, "xcsh-bedrock:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

type bedrockRequests struct{ *bedrocktest.Server }

func (b bedrockRequests) RequestBodies() [][]byte {
	var out [][]byte
	for _, r := range b.Requests() {
		out = append(out, r.Body)
	}
	return out
}

func (b bedrockRequests) RequestHeaders(name string) []string {
	var out []string
	for _, r := range b.Requests() {
		out = append(out, r.Header.Get(name))
	}
	return out
}

type ollamaBodies struct{ *ollamatest.Server }

type openaiBodies struct{ *openaitest.Server }

func (o openaiBodies) RequestBodies() [][]byte {
	var out [][]byte
	for _, r := range o.Requests() {
		if r.Method != http.MethodGet { // discovery's GETs have no body
			out = append(out, r.Body)
		}
	}
	return out
}

type anthropicBodies struct{ *anthropictest.Server }

type geminiBodies struct{ *geminitest.Server }

func (g geminiBodies) RequestBodies() [][]byte {
	var out [][]byte
	for _, r := range g.Requests() {
		out = append(out, r.Body)
	}
	return out
}

func (a anthropicBodies) RequestBodies() [][]byte {
	var out [][]byte
	for _, r := range a.Requests() {
		out = append(out, r.Body)
	}
	return out
}

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

// renderCmd copies a file, expanding ${VAR} from the script's environment:
// the way a scenario writes a models.json that points at a server whose
// address is only known when it starts.
//
//	render SRC DST
func renderCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: render SRC DST")
	}
	src := ts.ReadFile(args[0])
	dst := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(dst), 0o755))
	ts.Check(os.WriteFile(dst, []byte(os.Expand(src, ts.Getenv)), 0o644))
}

// usesRealOllama reports whether the scenario name needs the real Ollama
// server: its file uses the condition real-ollama ([real-ollama] or
// [!real-ollama], as every ollama_real_* does).
func usesRealOllama(root, name string) bool {
	b, err := os.ReadFile(filepath.Join(root, "testscripts", name+".txtar"))
	return err == nil && (bytes.Contains(b, []byte("[real-ollama]")) || bytes.Contains(b, []byte("[!real-ollama]")))
}

func liveOllama() bool {
	return os.Getenv("OLLAMA_HOST") != "" && os.Getenv("XCSH_LIVE_OLLAMA_MODEL") != ""
}

// The real Ollama server (v0.17.4 with two tiny deterministic models) that
// ../shared/ollama/serve.sh starts on a loopback port: started at most once
// per test run, by the first scenario that needs it, and stopped when
// TestScripts ends. When it cannot start, the scenarios that need it skip
// and print why.
var (
	realOllamaOnce sync.Once
	realOllamaURL  string
	realOllamaPID  int
	realOllamaDir  string
	realOllamaErr  error
)

// serveScript finds serve.sh: $XCSH_OLLAMA_DIR, else a shared/ollama next to
// the repository or one level above it (worktrees).
func serveScript(root string) (string, error) {
	dirs := []string{os.Getenv("XCSH_OLLAMA_DIR"), filepath.Join(root, "..", "shared", "ollama"), filepath.Join(root, "..", "..", "shared", "ollama")}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, "serve.sh"); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("serve.sh not found (set XCSH_OLLAMA_DIR to the folder that holds it)")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func realOllama(root string) (string, error) {
	realOllamaOnce.Do(func() {
		script, err := serveScript(root)
		if err != nil {
			realOllamaErr = err
			return
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			realOllamaErr = err
			return
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		dir, err := os.MkdirTemp("", "xcsh-ollama-")
		if err != nil {
			realOllamaErr = err
			return
		}
		realOllamaDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "bash", script, dir, strconv.Itoa(port)).Output()
		if err != nil {
			realOllamaErr = fmt.Errorf("%s: %v", script, err)
			return
		}
		lines := strings.Fields(string(out))
		if len(lines) == 0 {
			realOllamaErr = fmt.Errorf("%s printed no pid", script)
			return
		}
		realOllamaPID, _ = strconv.Atoi(lines[len(lines)-1])
		realOllamaURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	})
	return realOllamaURL, realOllamaErr
}

// stopRealOllama asks the server to stop (SIGTERM: it stops its model
// runners too), gives it 10 s, then removes its folder.
func stopRealOllama() {
	if realOllamaPID > 0 {
		if p, err := os.FindProcess(realOllamaPID); err == nil && p.Signal(syscall.SIGTERM) == nil {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if p.Signal(syscall.Signal(0)) != nil {
					break
				}
			}
		}
	}
	if realOllamaDir != "" {
		os.RemoveAll(realOllamaDir)
	}
	// A later run in the same process (go test -count=2) starts its own.
	realOllamaOnce = sync.Once{}
	realOllamaURL, realOllamaPID, realOllamaDir, realOllamaErr = "", 0, "", nil
}

// mcpServerCmd starts the MCP test server over streamable HTTP in this
// process and sets $NAME to its URL; with TOKEN, requests must carry
// "Authorization: Bearer TOKEN"; with -ref REF, the server also has the
// tool peek, whose input schema refers to REF (mcptest.AddRefTool).
//
//	mcpserver http [-ref REF] NAME [TOKEN]
func mcpServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: mcpserver http [-ref REF] NAME [TOKEN]"
	if neg || len(args) < 2 || args[0] != "http" {
		ts.Fatalf(usage)
	}
	args = args[1:]
	ref := ""
	if args[0] == "-ref" {
		if len(args) < 3 {
			ts.Fatalf(usage)
		}
		ref, args = args[1], args[2:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf(usage)
	}
	token := ""
	if len(args) == 2 {
		token = args[1]
	}
	srv := mcptest.NewServer()
	if ref != "" {
		mcptest.AddRefTool(srv, ref)
	}
	url, stop := mcptest.ServeHTTP(srv, token)
	ts.Defer(stop)
	ts.Setenv(args[0], url)
}

// mcpEverything is the entry point of the npm "everything" MCP server:
// $XCSH_MCP_EVERYTHING, else where .ci/run installs it, else "".
func mcpEverything() string {
	return ciInstalled("XCSH_MCP_EVERYTHING", "", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// ciInstalled is $env when set, else the path under the cache folder
// where .ci/run installs npm packages, if check (a file under it, "" for
// the path itself) exists there, else "".
func ciInstalled(env, check string, elem ...string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(append([]string{cache, "xcsh-ci"}, elem...)...)
	if _, err := os.Stat(filepath.Join(p, check)); err != nil {
		return ""
	}
	return p
}

// smallFS reports whether a scenario can mount a small filesystem of its
// own (a tmpfs in new user and mount namespaces, `unshare -Urm`), to fill
// a disk or make it read-only without touching the machine's.
var smallFS = sync.OnceValue(func() bool {
	return exec.Command("unshare", "-Urm", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\"").Run() == nil
})

// acpTSSDK is the directory of the npm package @agentclientprotocol/sdk:
// $XCSH_ACP_TS_SDK, else where .ci/run installs it, else "".
func acpTSSDK() string {
	return ciInstalled("XCSH_ACP_TS_SDK", "package.json", "acp-ts", "node_modules", "@agentclientprotocol", "sdk")
}

// exampleClient is the Go ACP SDK's example client, built once per test
// run from the module cache.
var exampleClient struct {
	once sync.Once
	path string
	err  error
}

// acpExampleClientCmd builds github.com/coder/acp-go-sdk/example/client
// (the module is a dependency, so it is in the module cache) and sets
// $NAME to the program.
//
//	acp-example-client NAME
func acpExampleClientCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: acp-example-client NAME")
	}
	exampleClient.once.Do(func() {
		dir, err := os.MkdirTemp("", "acp-example-client")
		if err != nil {
			exampleClient.err = err
			return
		}
		root := ts.Getenv("XCSH_REPO_ROOT")
		out := filepath.Join(dir, "acp-example-client")
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", out, "github.com/coder/acp-go-sdk/example/client")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			exampleClient.err = fmt.Errorf("building the example client: %v\n%s", err, b)
			return
		}
		exampleClient.path = out
	})
	ts.Check(exampleClient.err)
	ts.Setenv(args[0], exampleClient.path)
}
