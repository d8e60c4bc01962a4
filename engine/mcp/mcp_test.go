package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/childenv"
	"github.com/xcsh-go/xcsh/engine/mcp/mcptest"
)

// TestMain doubles as the stdio test server: the tests start this binary
// with MCPTEST_SERVE=1.
func TestMain(m *testing.M) {
	if os.Getenv("MCPTEST_SERVE") == "1" {
		mcptest.Main()
	}
	os.Exit(m.Run())
}

func TestExpandVars(t *testing.T) {
	t.Parallel()
	env := map[string]string{"A": "x", "EMPTY": ""}
	get := func(k string) string { return env[k] }
	cases := []struct {
		in, want string
		missing  []string
	}{
		{"${A}-$A", "x-$A", nil},
		{"${B:-def}", "def", nil},
		{"${EMPTY:-d}", "d", nil},
		{"${B}${C}", "", []string{"B", "C"}},
		{"no vars", "no vars", nil},
	}
	for _, c := range cases {
		got, miss := expandVars(c.in, get)
		if got != c.want || !reflect.DeepEqual(miss, c.missing) {
			t.Errorf("expandVars(%q) = %q %v, want %q %v", c.in, got, miss, c.want, c.missing)
		}
	}
}

func TestLoadConfigs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proj/.mcp.json", `{"mcpServers":{"a":{"command":"run-a","args":["--key","${KEY}"],"env":{"TOKEN":"${TOKEN}"}},
		"b":{"type":"http","url":"https://h/${MISSING}","headers":{"Authorization":"Bearer ${TOKEN}"}},
		"c":{"type":"websocket","url":"x"}}}`)
	write("proj/.xcsh/mcp.json", `{"mcpServers":{"a":{"command":"project-a","timeout":1500},"d":{"url":"https://d","disabled":true}}}`)
	write("agent/mcp.json", `not json`)
	env := map[string]string{"KEY": "k1", "TOKEN": "tok-secret"}
	var warnings []string
	cfgs := loadConfigs(Options{Cwd: filepath.Join(dir, "proj"), AgentDir: filepath.Join(dir, "agent")},
		func(k string) string { return env[k] }, func(f string, a ...any) { warnings = append(warnings, f) })
	byName := map[string]serverConfig{}
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name)
		byName[c.Name] = c
	}
	if strings.Join(names, ",") != "a,d,b,c" {
		t.Fatalf("servers %v", names)
	}
	if a := byName["a"]; a.Command != "project-a" || a.Timeout != 1500*time.Millisecond {
		t.Errorf("a: %+v", a)
	}
	if d := byName["d"]; !d.Disabled || d.Transport != "http" {
		t.Errorf("d: %+v", d)
	}
	if b := byName["b"]; b.Problem != "environment variable not set: MISSING (in url)" || b.Headers["Authorization"] != "Bearer tok-secret" {
		t.Errorf("b: %+v", b)
	}
	if a := cfgs[0]; a.Name != "a" || strings.Join(a.secrets, ",") != "" {
		t.Errorf("project a: %+v", a)
	}
	if got := newRedactor(byName["b"].secrets).text("Bearer tok-secret"); got != "***" {
		t.Errorf("b's secrets redact to %q", got)
	}
	if b := byName["b"]; !reflect.DeepEqual(b.envVars, map[string]string{"TOKEN": "tok-secret"}) {
		t.Errorf("b's variables %v", b.envVars)
	}
	if c := byName["c"]; !strings.Contains(c.Problem, "unknown type") {
		t.Errorf("c: %+v", c)
	}
	if len(warnings) != 2 { // the shadowed "a", the invalid agent file
		t.Errorf("warnings %q", warnings)
	}
}

// The variables an entry names (any field, ${VAR}, ${VAR:-d} or a bare
// $VAR a shell expands) and those whose value is one of its secrets are
// its secret variables: redacted, removed from other children's
// environments, given back to its own process. Layout variables (HOME,
// PATH) are neither.
func TestSecretVariables(t *testing.T) {
	t.Parallel()
	env := map[string]string{"API_KEY": "key-value-1", "SH_TOKEN": "sh-token-2", "HOME": "/home/u", "PATH": "/bin:/usr/bin",
		"URL_KEY": "url-key-3", "UNUSED": "unused-value"}
	get := func(k string) string { return env[k] }
	raw := rawServer{Command: "sh", Args: []string{"-c", "srv --token $SH_TOKEN --dir ${HOME}/x"},
		Env: map[string]string{"A": "${API_KEY}", "P": "${PATH}:/opt", "LIT": "literal-secret-4", "MODE": "${MODE_UNSET:-quiet}"}}
	c := parseServer("s", "f", raw, get)
	if c.Problem != "" {
		t.Fatal(c.Problem)
	}
	want := map[string]string{"API_KEY": "key-value-1", "SH_TOKEN": "sh-token-2"}
	if !reflect.DeepEqual(c.envVars, want) {
		t.Errorf("named: %v, want %v", c.envVars, want)
	}
	red := newRedactor(c.secrets)
	if got := red.text("key-value-1 sh-token-2 /home/u/x /bin:/usr/bin"); got != "*** *** /home/u/x /bin:/usr/bin" {
		t.Errorf("redacted: %q", got)
	}
	h := parseServer("h", "f", rawServer{Type: "http", URL: "https://h/?k=${URL_KEY}", Headers: map[string]string{"X": "hdr-literal-5"}}, get)

	// The environment holds some secrets under other names too.
	environ := []string{"API_KEY=key-value-1", "ALIAS=key-value-1", "COPY=literal-secret-4", "HDR=hdr-literal-5",
		"PWD=literal-secret-4", "SHORT=quiet", "UNUSED=unused-value", "NOEQUALS"}
	cfgs := []serverConfig{c, h}
	names := secretEnv(cfgs, environ)
	if want := []string{"ALIAS", "API_KEY", "COPY", "HDR", "SH_TOKEN", "URL_KEY"}; !reflect.DeepEqual(names, want) {
		t.Errorf("dropped %v, want %v", names, want)
	}
	// The stdio server gets its variables back; its own values win.
	got := cfgs[0].Env
	for k, v := range map[string]string{"API_KEY": "key-value-1", "ALIAS": "key-value-1", "COPY": "literal-secret-4",
		"SH_TOKEN": "sh-token-2", "A": "key-value-1", "LIT": "literal-secret-4"} {
		if got[k] != v {
			t.Errorf("server env %s=%q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["HDR"]; ok {
		t.Error("the stdio server got the http server's variable")
	}
	if cfgs[1].Env != nil {
		t.Errorf("an http server got an environment: %v", cfgs[1].Env)
	}
}

// A Manager drops its servers' secret variables from every child's
// environment as soon as it is made, before any command can run.
func TestNewDropsSecretVariables(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"mcpServers":{"x":{"command":"never-started","env":{"T":"${XCSH_MCP_TEST_SECRET}"}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XCSH_MCP_TEST_SECRET", "drop-me-please")
	t.Setenv("XCSH_MCP_TEST_ALIAS", "drop-me-please")
	m := New(Options{Cwd: dir})
	defer m.Close()
	for _, kv := range childenv.Environ() {
		if strings.Contains(kv, "drop-me-please") {
			t.Errorf("still in a child's environment: %s", kv)
		}
	}
	if got := childEnv(m.servers[0].cfg.Env); !slices.Contains(got, "XCSH_MCP_TEST_SECRET=drop-me-please") || !slices.Contains(got, "T=drop-me-please") {
		t.Errorf("the server lost its own: %q", got)
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := newRedactor([]string{"Bearer abcdefgh1234", "abc", "on", "s3cr3t-value"})
	got := r.text("header Bearer abcdefgh1234, token abcdefgh1234, s3cr3t-value, abc on")
	if want := "header ***, token ***, ***, abc on"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if (redactor{}).text("x") != "x" {
		t.Error("the empty redactor changed text")
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	if got := toolName("my server", "do.it"); got != "mcp__my_server__do_it" {
		t.Errorf("got %q", got)
	}
	if got := toolName(strings.Repeat("s", 40), strings.Repeat("t", 40)); len(got) != 64 {
		t.Errorf("len %d", len(got))
	}
	// Cut names end with a hash of the real ones: two tools (of one
	// server or two) that would be one when cut stay two, always named
	// alike.
	long := strings.Repeat("x", 70)
	a, b := toolName("s", long+"a"), toolName("s", long+"b")
	c := toolName(strings.Repeat("s", 30), long)
	if a == b || len(a) != 64 || len(b) != 64 || a[:55] != b[:55] || a != toolName("s", long+"a") {
		t.Errorf("cut names %q %q", a, b)
	}
	if c == toolName(strings.Repeat("s", 30)+"_", long) {
		t.Errorf("two servers' cut names collide: %q", c)
	}
	// Names that sanitize alike in one list: the later one is hashed. A
	// name listed twice stays one (the session keeps the first).
	got := toolNames("s", []string{"a.b", "a_b", "c", long + "a", long + "a"})
	if got[0] != "mcp__s__a_b" || got[1] == got[0] || !strings.HasPrefix(got[1], "mcp__s__a_b_") || got[2] != "mcp__s__c" ||
		got[3] != a || got[4] != a {
		t.Errorf("toolNames %q", got)
	}
}

// get_mcp_servers lists what the session installed: a name skipped because
// another tool has it is left out, one installed is listed once.
func TestInstalledNames(t *testing.T) {
	t.Parallel()
	tools := func(names ...string) []engine.Tool {
		var out []engine.Tool
		for _, n := range names {
			out = append(out, &tool{full: n})
		}
		return out
	}
	cases := []struct {
		list, skipped, want []string
	}{
		{[]string{"a", "b"}, nil, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"b"}, []string{"a"}},
		{[]string{"a", "a", "b"}, []string{"a"}, []string{"a", "b"}},
		{[]string{"a", "a", "b"}, []string{"a", "a"}, []string{"b"}},
	}
	for _, c := range cases {
		if got := installed(tools(c.list...), c.skipped); !reflect.DeepEqual(got, c.want) {
			t.Errorf("installed(%q, skipped %q) = %q, want %q", c.list, c.skipped, got, c.want)
		}
	}
}

func TestFormFields(t *testing.T) {
	t.Parallel()
	fields := formFields(map[string]any{"type": "object", "properties": map[string]any{
		"z": map[string]any{"type": "string"},
		"b": map[string]any{"type": "boolean"},
		"n": map[string]any{"type": "integer", "title": "Count"},
		"e": map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "x", "title": "X"}}},
	}, "required": []any{"n", "b"}})
	var got []string
	for _, f := range fields {
		got = append(got, f.name+":"+f.typ+":"+strings.Join(f.enum, "|"))
	}
	if want := []string{"n:integer:", "b:boolean:", "e:string:x", "z:string:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if v, ok := fields[0].value(engine.DialogReply{Value: " 42 "}); !ok || v != int64(42) {
		t.Errorf("integer %v %v", v, ok)
	}
	if _, ok := fields[0].value(engine.DialogReply{Value: "many"}); ok {
		t.Error("a word converted to an integer")
	}
}

// fakeHost is a Host that runs functions at once and records the groups.
type fakeHost struct {
	mu      sync.Mutex
	groups  map[string][]string
	answers []engine.DialogReply
	asked   []engine.DialogRequest
}

func (h *fakeHost) Call(fn func()) { fn() }

func (h *fakeHost) SetToolGroup(group string, tools []engine.Tool) []engine.SkippedTool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.groups == nil {
		h.groups = map[string][]string{}
	}
	var names []string
	for _, t := range tools {
		names = append(names, t.Name())
	}
	h.groups[group] = names
	return nil
}

func (h *fakeHost) Dialog(_ context.Context, req engine.DialogRequest) (engine.DialogReply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, req)
	if len(h.answers) == 0 {
		return engine.DialogReply{Cancelled: true}, nil
	}
	r := h.answers[0]
	h.answers = h.answers[1:]
	return r, nil
}

// startManager runs a manager over a config naming this test binary as
// the server "t"; extra adds to its env (`,"K":"V"`).
func startManager(t testing.TB, clock engine.Clock, extra string) (*Manager, *fakeHost, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := `{"mcpServers":{"t":{"command":` + quoteJSON(exe) + `,"env":{"MCPTEST_SERVE":"1","MCP_TOKEN":"tok-12345"` + extra + `}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	m := New(Options{Cwd: dir, Clock: clock, Log: &syncWriter{w: &log}, SettleWait: 20 * time.Second})
	h := &fakeHost{}
	m.Start(h, nil)
	t.Cleanup(m.Close)
	m.Settle(context.Background())
	return m, h, &log
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// call runs the server's tool through the engine interface.
func call(t *testing.T, m *Manager, name, args string) engine.ToolResult {
	t.Helper()
	for _, s := range m.servers {
		tl := &tool{s: s, name: name, full: toolName(s.cfg.Name, name)}
		res, err := tl.Run(context.Background(), engine.ToolCall{Arguments: []byte(args)}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	t.Fatal("no server")
	return engine.ToolResult{}
}

func text(r engine.ToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// A crashed server is started again by a call once a minute has passed on
// the engine's clock, not before.
func TestRestartPacedByClock(t *testing.T) {
	t.Parallel()
	clock := engine.NewManualClock(1_000)
	m, h, log := startManager(t, clock, "")
	if got := h.groups["mcp:t"]; len(got) == 0 || got[0] != "mcp__t__crash" {
		t.Fatalf("tools %v", got)
	}
	if got := text(call(t, m, "echo", `{"text":"a"}`)); got != "echo: a" {
		t.Fatalf("echo: %q", got)
	}
	if r := call(t, m, "crash", `{}`); !r.IsError || !strings.Contains(text(r), "exited during the call") {
		t.Fatalf("crash: %+v", r)
	}
	if r := call(t, m, "echo", `{"text":"b"}`); !strings.Contains(text(r), "next in 1m0s") {
		t.Fatalf("before a minute: %q", text(r))
	}
	clock.Advance(30 * time.Second)
	if r := call(t, m, "echo", `{"text":"b"}`); !strings.Contains(text(r), "next in 30s") {
		t.Fatalf("after 30s: %q", text(r))
	}
	clock.Advance(30 * time.Second)
	if got := text(call(t, m, "echo", `{"text":"c"}`)); got != "echo: c" {
		t.Fatalf("after a minute: %q", got)
	}
	if st := m.Servers(); st[0].Status != "connected" || st[0].Error != "" {
		t.Errorf("status %+v", st)
	}
	if strings.Contains(log.String(), "tok-12345") || !strings.Contains(log.String(), "(token ***)") {
		t.Errorf("log not redacted:\n%s", log.String())
	}
}

// An elicitation with no answer (dismissed dialog) is cancelled; answers
// are converted to the form's types.
func TestElicitation(t *testing.T) {
	t.Parallel()
	m, h, _ := startManager(t, engine.DeterministicEpoch, "")
	h.answers = []engine.DialogReply{{Value: "production", HasValue: true}, {Confirmed: false}}
	if got := text(call(t, m, "deploy", `{}`)); got != "action=accept content=map[confirm:false env:production]" {
		t.Errorf("answered: %q", got)
	}
	if got := text(call(t, m, "deploy", `{}`)); got != "action=cancel content=map[]" {
		t.Errorf("dismissed: %q", got)
	}
	if len(h.asked) != 3 || h.asked[0].Method != engine.DialogSelect || h.asked[1].Method != engine.DialogConfirm {
		t.Errorf("dialogs %+v", h.asked)
	}
}

// An abort cancels the call; the error is the context's.
func TestCallCancelled(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	m, _, _ := startManager(t, engine.DeterministicEpoch, `,"MCPTEST_MARKER_DIR":`+quoteJSON(marks))
	ctx, cancel := context.WithCancel(context.Background())
	s := m.servers[0]
	done := make(chan error, 1)
	go func() {
		_, err := (&tool{s: s, name: "slow"}).Run(ctx, engine.ToolCall{Arguments: []byte(`{}`)}, nil)
		done <- err
	}()
	waitFile(t, filepath.Join(marks, "started"))
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("no error after the abort")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end after the abort")
	}
	// The server was told: its handler saw the cancellation.
	waitFile(t, filepath.Join(marks, "cancelled"))
}

// waitFile waits for a file the server writes (a condition, bounded).
func waitFile(t *testing.T, path string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s did not appear", path)
		}
	}
}

// Servers given by the program (an ACP client's) come first, win a name a
// file also defines, and take no ${VAR} expansion; NoConfigFiles reads no
// file.
func TestClientServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"a":{"command":"file-a"},"f":{"command":"file-f"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	given := []Server{
		{Name: "a", Command: "client-a", Args: []string{"${KEY}"}, Env: map[string]string{"TOKEN": "client-secret-1"}},
		{Name: "h", Transport: "http", URL: "https://h", Headers: map[string]string{"Authorization": "Bearer x"}},
		{Name: "bad", Transport: "acp"},
	}
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	get := func(string) string { return "expanded" }
	cfgs := loadConfigs(Options{Cwd: dir, Servers: given}, get, warn)
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name+"="+c.Command+c.URL)
	}
	if got := strings.Join(names, ","); got != "a=client-a,h=https://h,bad=,f=file-f" {
		t.Fatalf("servers %s", got)
	}
	if a := cfgs[0]; a.Args[0] != "${KEY}" || a.Transport != "stdio" || strings.Join(a.secrets, ",") != "client-secret-1" {
		t.Errorf("a: %+v", a)
	}
	if bad := cfgs[2]; !strings.Contains(bad.Problem, "unknown type") {
		t.Errorf("bad: %+v", bad)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "the ACP client defines it") {
		t.Errorf("warnings %q", warnings)
	}
	cfgs = loadConfigs(Options{Cwd: dir, Servers: given[:1], NoConfigFiles: true}, get, warn)
	if len(cfgs) != 1 || cfgs[0].Name != "a" {
		t.Errorf("NoConfigFiles: %+v", cfgs)
	}
}

// A refresh the server's list_changed notification started may have taken
// the mark a call's result set: the model call's settle waits for it
// instead of going on with the old list (a race seen under -race with a
// CPU hog: mcp_tools_list_changed offered the old list). It waits for the
// marks made before it only: a flood that goes on holds it no longer.
func TestSettleWaitsForARefreshUnderWay(t *testing.T) {
	m := New(Options{})
	defer m.Close()
	// A refresher is under way for the mark the call's result made.
	s := &server{m: m, state: stateConnected, refreshed: make(chan struct{}), marks: 1, refresher: true}
	done := make(chan struct{})
	go func() { s.settleList(context.Background()); close(done) }()
	select {
	case <-done:
		t.Fatal("the wait ended while the refresh runs")
	case <-time.After(20 * time.Millisecond):
	}
	// The refresh ends while notifications keep coming: the settle is
	// over, later marks are the refresher's next round.
	s.mu.Lock()
	s.read, s.marks = 1, 1000
	close(s.refreshed)
	s.refreshed = make(chan struct{})
	s.mu.Unlock()
	<-done

	// Bounded: a refresh that hangs holds the model call only until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	s.settleList(ctx)
}

// Marks made while a refresh cannot begin are read at once, by one
// tools/list: the server's count of them says so.
func TestRefreshesCoalesced(t *testing.T) {
	t.Parallel()
	m, _, _ := startManager(t, engine.DeterministicEpoch, `,"`+mcptest.ExtrasEnv+`":"1"`)
	s := m.servers[0]
	if got := text(call(t, m, "lists", `{}`)); got != "tools/list requests: 1" {
		t.Fatalf("at start: %q", got)
	}
	m.Settle(context.Background()) // the call's own mark
	if got := text(call(t, m, "lists", `{}`)); got != "tools/list requests: 2" {
		t.Fatalf("after a call: %q", got)
	}
	m.Settle(context.Background())
	s.mu.Lock()
	for range 1000 { // as the notification handler does
		s.marks++
		s.kickRefresher()
	}
	s.mu.Unlock()
	m.Settle(context.Background())
	if got := text(call(t, m, "lists", `{}`)); got != "tools/list requests: 4" {
		t.Errorf("after 1000 marks: %q, want 4 (2 + the call's + one for the 1000)", got)
	}
}

// TestConfigFilesFromSubfolder: started in a subfolder of a repository,
// the project's .mcp.json at its root is read; a nearer file's server of
// the same name wins; outside a repository a parent's file is not read.
func TestConfigFilesFromSubfolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/.git/HEAD", "ref: refs/heads/main\n")
	write("repo/.mcp.json", `{"mcpServers":{"root":{"command":"root-server"},"both":{"command":"from-root"}}}`)
	write("repo/api/.xcsh/mcp.json", `{"mcpServers":{"both":{"command":"from-api"}}}`)
	write("loose/.mcp.json", `{"mcpServers":{"parent":{"command":"p"}}}`)
	write("loose/sub/keep", "")
	get := func(string) string { return "" }
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	byName := map[string]serverConfig{}
	for _, c := range loadConfigs(Options{Cwd: filepath.Join(dir, "repo", "api", "v1")}, get, warn) {
		byName[c.Name] = c
	}
	// Each runs in the project folder of its file.
	if c := byName["root"]; c.Command != "root-server" || c.Dir != filepath.Join(dir, "repo") {
		t.Errorf("root: %+v", c)
	}
	if c := byName["both"]; c.Command != "from-api" || c.Dir != filepath.Join(dir, "repo", "api") || len(byName) != 2 {
		t.Errorf("both: %+v (of %d)", c, len(byName))
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"both"`) {
		t.Errorf("warnings %q", warnings)
	}
	if cfgs := loadConfigs(Options{Cwd: filepath.Join(dir, "loose", "sub")}, get, warn); len(cfgs) != 0 {
		t.Errorf("outside a repository a parent's .mcp.json was read: %+v", cfgs)
	}
}

// TestCallTraceParent: a call made under a span (tracing on) carries its
// traceparent in the request's _meta; one under none carries no _meta.
func TestCallTraceParent(t *testing.T) {
	t.Parallel()
	m, _, _ := startManager(t, engine.DeterministicEpoch, `,"MCPTEST_TRACE":"1"`)
	s := m.servers[0]
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{
		{engine.WithTraceParent(context.Background(), tp), "traceparent: " + tp},
		{context.Background(), "traceparent: "},
	} {
		res, err := (&tool{s: s, name: "traceparent"}).Run(c.ctx, engine.ToolCall{Arguments: []byte(`{}`)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].Text; got != c.want {
			t.Fatalf("the server saw %q, want %q", got, c.want)
		}
	}
}
