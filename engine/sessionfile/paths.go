package sessionfile

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// AgentDir is where sessions and configuration live: $PI_CODING_AGENT_DIR,
// else ~/.xcsh/agent, where $PI_CONFIG_DIR renames ".xcsh" (an absolute
// PI_CONFIG_DIR is the directory itself). env is os.Getenv in production.
// The original's use of an existing $XDG_DATA_HOME/xcsh for data is not
// followed.
func AgentDir(env func(string) string) string {
	if d := env("PI_CODING_AGENT_DIR"); d != "" {
		return d
	}
	name := ".xcsh"
	if d := env("PI_CONFIG_DIR"); d != "" {
		if filepath.IsAbs(d) {
			return filepath.Join(d, "agent")
		}
		name = d
	}
	home := env("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, name, "agent")
}

// Dir is the sessions directory of a working directory:
// <agentDir>/sessions/<EncodeCwd(cwd)>.
func Dir(agentDir, cwd string) string {
	return filepath.Join(agentDir, "sessions", EncodeCwd(cwd))
}

// ResolveDir is the directory a new session file goes to: override
// (--session-dir), else $XCSH_SESSION_DIR, else Dir(AgentDir(env), cwd);
// made absolute.
func ResolveDir(override string, env func(string) string, cwd string) string {
	dir := override
	if dir == "" {
		dir = env("XCSH_SESSION_DIR")
	}
	if dir == "" {
		dir = Dir(AgentDir(env), cwd)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// FileName names a session file as the original does:
// <ISO time with ':' and '.' as '-'>_<id>.jsonl.
func FileName(nowMs int64, id string) string {
	ts := time.UnixMilli(nowMs).UTC().Format(isoMillis)
	return strings.NewReplacer(":", "-", ".", "-").Replace(ts) + "_" + id + ".jsonl"
}

// EncodeCwd maps a working directory to its sessions sub-directory name,
// the original's current scheme: inside $HOME "-" and the relative path
// (home itself "-"), inside the temp dir "-tmp-" and the relative path
// (the temp dir itself "-tmp"), elsewhere "--<path>--"; separators and ':'
// become '-'. Paths are compared after resolving symlinks, as the original
// does, so an alias of the home directory lands in the same place.
func EncodeCwd(cwd string) string {
	sep := strings.NewReplacer("/", "-", "\\", "-", ":", "-")
	cwd = canonical(cwd)
	if home, _ := os.UserHomeDir(); home != "" {
		if rel, ok := within(canonical(home), cwd); ok {
			if rel == "." {
				return "-"
			}
			return "-" + sep.Replace(rel)
		}
	}
	if rel, ok := within(canonical(os.TempDir()), cwd); ok {
		if rel == "." {
			return "-tmp"
		}
		return "-tmp-" + sep.Replace(rel)
	}
	return "--" + sep.Replace(strings.TrimLeft(cwd, `/\`)) + "--"
}

// within returns p relative to root when p is root or below it.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// canonical resolves symlinks in p when it exists, else cleans it.
func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
