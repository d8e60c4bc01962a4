package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// The servers of the project's own files go to Admit, once, before they
// start; the user's (the agent dir's, --mcp-config's, an ACP client's)
// never do. A refused one is listed disabled with the reason and never
// starts, even on a call; an admitted one starts through its Wrap.
func TestAdmitProjectServers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proj, agent := filepath.Join(dir, "proj"), filepath.Join(dir, "agent")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := func(marker string) string {
		return `{"command":` + quoteJSON(exe) + `,"env":{"MCPTEST_SERVE":"1","MARK":"` + marker + `"}}`
	}
	for path, body := range map[string]string{
		proj + "/.mcp.json":      `{"mcpServers":{"kept":` + server("k") + `,"refused":` + server("r") + `,"web":{"url":"https://web/${TOKEN}"}}}`,
		proj + "/.xcsh/mcp.json": `{"mcpServers":{"off":{"command":"x","disabled":true}}}`,
		proj + "/user.json":      `{"mcpServers":{"flag":` + server("f") + `}}`,
		agent + "/mcp.json":      `{"mcpServers":{"mine":` + server("m") + `}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var seen []ProjectServer
	var wrapped []string
	admit := func(_ context.Context, _ Host, servers []ProjectServer) []Admission {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, servers...)
		out := make([]Admission, len(servers))
		for i, s := range servers {
			switch s.Name {
			case "kept":
				out[i] = Admission{Run: true, Wrap: func(c *exec.Cmd) error {
					mu.Lock()
					wrapped = append(wrapped, s.Name)
					mu.Unlock()
					return nil
				}}
			default:
				out[i] = Admission{Reason: "not started: no"}
			}
		}
		return out
	}
	m := New(Options{Cwd: proj, AgentDir: agent, ConfigPaths: []string{"user.json"}, Admit: admit,
		Getenv: func(k string) string { return map[string]string{"TOKEN": "tok-secret-1"}[k] }, SettleWait: 20 * time.Second})
	h := &fakeHost{}
	m.Start(h, nil)
	t.Cleanup(m.Close)
	m.Settle(context.Background())

	var names []string
	for _, s := range seen {
		names = append(names, s.Name+" "+s.Transport+" "+filepath.Base(s.File))
		if s.Name == "web" && s.Command != "https://web/***" {
			t.Errorf("web's URL is shown with its secret: %q", s.Command)
		}
	}
	slices.Sort(names)
	if want := []string{"kept stdio .mcp.json", "refused stdio .mcp.json", "web http .mcp.json"}; !slices.Equal(names, want) {
		t.Fatalf("asked about %q, want %q", names, want)
	}
	status := map[string]string{}
	for _, s := range m.Servers() {
		status[s.Name] = s.Status + " " + s.Error
	}
	for name, want := range map[string]string{"kept": "connected ", "refused": "disabled not started: no", "web": "disabled not started: no",
		"off": "disabled ", "flag": "connected ", "mine": "connected "} {
		if status[name] != want {
			t.Errorf("%s: %q, want %q", name, status[name], want)
		}
	}
	if !slices.Equal(wrapped, []string{"kept"}) {
		t.Errorf("wrapped %q", wrapped)
	}
	for _, s := range m.servers {
		if s.cfg.Name == "refused" {
			if _, _, res := s.session(context.Background()); res == nil || !res.IsError {
				t.Errorf("a call started a refused server")
			}
		}
	}
}
