package mcp

import (
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine/childenv"
)

// childEnv is the one function that builds the environment of an MCP
// server's process: ours without the provider keys and the MCP secret
// variables (engine/childenv), then the entry's env (which wins, and may
// name a key on purpose), where the variables the entry brought are
// (secretEnv puts them there: its own secrets come back to it).
func childEnv(extra map[string]string) []string {
	return childenv.Environ(sortedKV(extra)...)
}

func sortedKV(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kv := make([]string, 0, len(keys))
	for _, k := range keys {
		kv = append(kv, k+"="+m[k])
	}
	return kv
}

// layoutVar reports whether a variable describes the machine or the user
// (where things are, the locale, the terminal) rather than holding a key:
// an entry names $HOME or $PATH to build a path, and every command needs
// them. Such a variable is neither a secret nor removed from commands.
func layoutVar(name string) bool {
	switch name {
	case "HOME", "PATH", "USER", "USERNAME", "LOGNAME", "SHELL", "PWD", "OLDPWD", "SHLVL",
		"TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "TERM", "COLORTERM", "TZ", "HOSTNAME",
		"DISPLAY", "EDITOR", "VISUAL", "PAGER":
		return true
	}
	return strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "XDG_")
}

// secretEnv completes each entry's envVars with the variables of environ
// (KEY=VALUE) whose value is one of its secrets (a key written literally
// in the file, or passed by an ACP client, that the environment also
// holds under some name), gives a stdio entry's process its envVars back
// (in Env, under its own values), and returns every entry's variable
// names: the ones to remove from every other child's environment.
func secretEnv(cfgs []serverConfig, environ []string) []string {
	byValue := map[string][]string{}
	for _, kv := range environ {
		name, v, ok := strings.Cut(kv, "=")
		if ok && len(v) >= minLiteralSecret && !layoutVar(name) {
			byValue[v] = append(byValue[v], name)
		}
	}
	set := map[string]bool{}
	for i := range cfgs {
		c := &cfgs[i]
		for _, v := range c.secrets {
			for _, name := range byValue[v] {
				if c.envVars == nil {
					c.envVars = map[string]string{}
				}
				c.envVars[name] = v
			}
		}
		for name, v := range c.envVars {
			set[name] = true
			if c.Transport != "stdio" {
				continue
			}
			if _, ok := c.Env[name]; !ok { // the entry's own value wins
				if c.Env == nil {
					c.Env = map[string]string{}
				}
				c.Env[name] = v
			}
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// redactor replaces secrets with *** in every text this package reports.
type redactor struct{ r *strings.Replacer }

// minSecret is the shortest value treated as a secret: shorter ones
// ("1", "on") would mangle ordinary text and hide nothing.
const minSecret = 4

// newRedactor redacts each value, and each word of a value ("Bearer
// <token>" hides the token wherever it appears alone), longest first.
func newRedactor(values []string) redactor {
	set := map[string]bool{}
	for _, v := range values {
		if len(v) >= minSecret {
			set[v] = true
		}
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 {
				set[w] = true
			}
		}
	}
	list := make([]string, 0, len(set))
	for v := range set {
		list = append(list, v)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i]) != len(list[j]) {
			return len(list[i]) > len(list[j])
		}
		return list[i] < list[j]
	})
	if len(list) == 0 {
		return redactor{}
	}
	pairs := make([]string, 0, 2*len(list))
	for _, v := range list {
		pairs = append(pairs, v, "***")
	}
	return redactor{strings.NewReplacer(pairs...)}
}

func (r redactor) text(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
