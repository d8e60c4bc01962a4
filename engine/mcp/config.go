package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine/project"
)

// serverConfig is one entry of "mcpServers", as Claude Code, Cursor and
// the family write it: a command to run (stdio), or a URL (streamable HTTP
// or SSE).
type serverConfig struct {
	Name      string
	Transport string // "stdio", "http" or "sse"
	Command   string
	Args      []string
	Env       map[string]string // expanded
	Cwd       string            // as written (expanded); relative to Dir
	// Dir is the folder a stdio server runs in when Cwd is unset, and
	// that a relative Cwd starts from: the project folder of the file
	// that defined it; "" for the session's working directory.
	Dir     string
	URL     string
	Headers map[string]string // expanded
	Timeout time.Duration     // per call; 0: the manager's default
	// StartTimeout bounds connecting and listing the tools; 0: the
	// manager's default. A model call waits for a starting server that
	// long at most.
	StartTimeout time.Duration
	Disabled     bool
	File         string // the file that defined it
	// Project says File is the project's own (.xcsh/mcp.json or .mcp.json
	// in Cwd), not the user's: Options.Admit decides whether it runs.
	Project bool
	// Problem is why the entry cannot start (a missing variable, no
	// command); the server is reported failed with it.
	Problem string
	// secrets are the values of Env and Headers, and those of the
	// variables in envVars.
	secrets []string
	// envVars are the variables of xcsh's environment the entry brings
	// to its server (name: value): those it names ($NAME, ${NAME},
	// ${NAME:-default}, in any field) and those whose value is one of its
	// secrets. They leave every other child's environment (the model's
	// commands above all) and go back into this server's.
	envVars map[string]string
}

// Server is one MCP server given in Options.Servers. Its values are used
// as given (no ${VAR} expansion); the values of Env and Headers are
// secrets, as in a file.
type Server struct {
	Name      string
	Transport string // "stdio" (also for ""), "http" or "sse"
	Command   string
	Args      []string
	Env       map[string]string
	URL       string
	Headers   map[string]string
}

// config is the server's entry, as a file's would be.
func (g Server) config() serverConfig {
	c := serverConfig{Name: g.Name, File: "the ACP client", Transport: strings.ToLower(g.Transport),
		Command: g.Command, Args: g.Args, URL: g.URL}
	if c.Transport == "" {
		c.Transport = "stdio"
	}
	switch c.Transport {
	case "stdio":
		if c.Command == "" {
			c.Problem = "no command"
		}
	case "http", "sse":
		if c.URL == "" {
			c.Problem = "no url"
		}
	default:
		c.Problem = fmt.Sprintf("unknown type %q (want stdio, http or sse)", g.Transport)
	}
	if len(g.Env) > 0 {
		c.Env = map[string]string{}
		for k, v := range g.Env {
			c.Env[k] = v
			if len(v) >= minLiteralSecret {
				c.secrets = append(c.secrets, v)
			}
		}
	}
	if len(g.Headers) > 0 {
		c.Headers = map[string]string{}
		for k, v := range g.Headers {
			c.Headers[k] = v
			c.secrets = append(c.secrets, v)
		}
	}
	return c
}

// rawServer is the JSON of one entry; unknown keys are ignored, as the
// other agents do.
type rawServer struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
	Timeout  *float64          `json:"timeout"`        // milliseconds
	Startup  *float64          `json:"startupTimeout"` // milliseconds
}

// configFile is one configuration file and the folder its stdio servers
// run in by default ("" for the session's working directory).
type configFile struct{ path, dir string }

// configFiles lists the configuration files in precedence order (a
// server name defined earlier wins): the command line's, the project's
// (.xcsh/mcp.json, then .mcp.json, in the working directory and each
// parent up to the project root, nearest first: engine/project), the
// user's (<agentDir>/mcp.json). A project file's servers run in the
// project folder that holds it, as they do for the agent the file was
// written for, so its relative paths work from any subfolder.
func configFiles(o Options) []configFile {
	var out []configFile
	for _, p := range o.ConfigPaths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(o.Cwd, p)
		}
		out = append(out, configFile{path: p})
	}
	for _, d := range project.Dirs(o.Cwd) {
		out = append(out, configFile{filepath.Join(d, ".xcsh", "mcp.json"), d}, configFile{filepath.Join(d, ".mcp.json"), d})
	}
	if o.AgentDir != "" {
		out = append(out, configFile{path: filepath.Join(o.AgentDir, "mcp.json")})
	}
	return out
}

// loadConfigs reads every file that exists and returns the servers in
// file order, each file's by name; problems are warnings (warn).
func loadConfigs(o Options, getenv func(string) string, warn func(string, ...any)) []serverConfig {
	var out []serverConfig
	seen := map[string]string{}
	for _, g := range o.Servers {
		if first, ok := seen[g.Name]; ok {
			warn("MCP server %q given twice: the first of %s is used", g.Name, first)
			continue
		}
		seen[g.Name] = "the ACP client"
		out = append(out, g.config())
	}
	if o.NoConfigFiles {
		return out
	}
	// The project's own files are those found in its folders, but for one
	// the command line names or the agent dir's, which are the user's
	// even where they lie in the project.
	user := map[string]bool{}
	if o.AgentDir != "" {
		user[filepath.Join(o.AgentDir, "mcp.json")] = true
	}
	for _, p := range o.ConfigPaths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(o.Cwd, p)
		}
		user[p] = true
	}
	for i, cf := range configFiles(o) {
		path := cf.path
		b, err := readConfig(path)
		if err != nil {
			if !os.IsNotExist(err) || i < len(o.ConfigPaths) {
				warn("MCP config %s: %v", path, err)
			}
			continue
		}
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			warn("MCP config %s: %v", path, err)
			continue
		}
		names := make([]string, 0, len(doc.MCPServers))
		for n := range doc.MCPServers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			if first, ok := seen[name]; ok {
				warn("MCP server %q in %s ignored: %s defines it", name, path, first)
				continue
			}
			seen[name] = path
			var raw rawServer
			if err := json.Unmarshal(doc.MCPServers[name], &raw); err != nil {
				out = append(out, serverConfig{Name: name, File: path, Transport: "stdio", Problem: "invalid entry: " + err.Error(), Project: cf.dir != "" && !user[path]})
				continue
			}
			c := parseServer(name, path, raw, getenv)
			c.Dir = cf.dir
			c.Project = cf.dir != "" && !user[path]
			out = append(out, c)
		}
	}
	return out
}

// readConfig reads a configuration file (a small JSON file).
func readConfig(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil, fmt.Errorf("not a regular file of at most 1 MiB")
	}
	return os.ReadFile(path)
}

// parseServer checks an entry and expands ${VAR} and ${VAR:-default} in
// its command, arguments, URL, environment and headers.
func parseServer(name, file string, raw rawServer, getenv func(string) string) serverConfig {
	c := serverConfig{Name: name, File: file, Disabled: raw.Disabled, Cwd: raw.Cwd}
	if raw.Timeout != nil && *raw.Timeout > 0 {
		c.Timeout = time.Duration(*raw.Timeout * float64(time.Millisecond))
	}
	if raw.Startup != nil && *raw.Startup > 0 {
		c.StartTimeout = time.Duration(*raw.Startup * float64(time.Millisecond))
	}
	var missing []string
	expand := func(s, field string) string {
		out, miss := expandVars(s, getenv)
		for _, m := range miss {
			missing = append(missing, m+" (in "+field+")")
		}
		// A variable the entry names may hold a key wherever it lands (a
		// URL's query, an argument, a shell's $TOKEN): its value is a
		// secret, redacted and kept for the server.
		for _, name := range namedVars(s) {
			if v := getenv(name); v != "" {
				if c.envVars == nil {
					c.envVars = map[string]string{}
				}
				c.envVars[name] = v
				c.secrets = append(c.secrets, v)
			}
		}
		return out
	}
	switch t := strings.ToLower(raw.Type); {
	case t == "http" || t == "streamable-http" || t == "streamablehttp" || (t == "" && raw.URL != "" && raw.Command == ""):
		c.Transport = "http"
	case t == "sse":
		c.Transport = "sse"
	case t == "" || t == "stdio":
		c.Transport = "stdio"
	default:
		c.Transport = t
		c.Problem = fmt.Sprintf("unknown type %q (want stdio, http or sse)", raw.Type)
		return c
	}
	if c.Transport == "stdio" {
		c.Command = expand(raw.Command, "command")
		if c.Command == "" {
			c.Problem = "no command"
		}
		for i, a := range raw.Args {
			c.Args = append(c.Args, expand(a, fmt.Sprintf("args[%d]", i)))
		}
		c.Cwd = expand(raw.Cwd, "cwd")
	} else {
		c.URL = expand(raw.URL, "url")
		if c.URL == "" {
			c.Problem = "no url"
		}
	}
	if len(raw.Env) > 0 {
		c.Env = map[string]string{}
		for k, v := range raw.Env {
			c.Env[k] = expand(v, "env."+k)
			// A literal value long enough to be a key is one; a short one
			// ("warn", "1") would only mangle text.
			if len(c.Env[k]) >= minLiteralSecret {
				c.secrets = append(c.secrets, c.Env[k])
			}
		}
	}
	if len(raw.Headers) > 0 {
		c.Headers = map[string]string{}
		for k, v := range raw.Headers {
			c.Headers[k] = expand(v, "headers."+k)
			c.secrets = append(c.secrets, c.Headers[k])
		}
	}
	if len(missing) > 0 && c.Problem == "" {
		sort.Strings(missing)
		c.Problem = "environment variable not set: " + strings.Join(missing, ", ")
	}
	return c
}

// minLiteralSecret is the shortest literal env value treated as a secret.
const minLiteralSecret = 8

var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`) })

// expandVars replaces ${VAR} and ${VAR:-default}; it returns the names of
// variables that are unset and have no default.
func expandVars(s string, getenv func(string) string) (string, []string) {
	var missing []string
	out := varRef().ReplaceAllStringFunc(s, func(m string) string {
		sub := varRef().FindStringSubmatch(m)
		if v := getenv(sub[1]); v != "" {
			return v
		}
		if strings.Contains(m, ":-") {
			return sub[2]
		}
		missing = append(missing, sub[1])
		return ""
	})
	return out, missing
}

var varName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`) })

// namedVars are the variables s names as ${NAME}, ${NAME:-default} or
// $NAME (expanded or not: a stdio server may be a shell that expands
// $NAME itself), less the layout variables (layoutVar).
func namedVars(s string) []string {
	var out []string
	for _, m := range varName().FindAllStringSubmatch(s, -1) {
		if !layoutVar(m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}
