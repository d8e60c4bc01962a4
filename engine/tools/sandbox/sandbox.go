// Package sandbox is what the agent's commands and file tools may change:
// a mode (off, read-only, workspace-write), the roots writable in it and
// whether the network is open. The kernel enforces it on commands: the
// command supervisor (engine/tools/shellexec) applies a Config to itself
// before it starts any command (Apply): Landlock for writes, a network
// namespace when the network is off, and for metadata, which Landlock
// does not cover, a mount namespace laid out read-only but the roots
// (workspace-write; it also keeps the configuration paths agents and git
// read, configNames, read-only) or a seccomp filter (read-only). The
// same Config confines any other process through the wrapper (Wrap: a
// project's MCP server or extension). The in-process file tools check
// the same rules on the resolved path of the directory they write in,
// held open while they write (OpenDir, OpenParent), so no symlink swapped
// in between the check and the write leads elsewhere. Reads are not
// confined.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is the sandbox mode of --sandbox.
type Mode string

// The modes. Off is the original's behaviour and the default.
const (
	Off            Mode = "off"
	ReadOnly       Mode = "read-only"
	WorkspaceWrite Mode = "workspace-write"
)

// ParseMode reads a --sandbox value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Off, ReadOnly, WorkspaceWrite:
		return m, nil
	case "":
		return Off, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q (expected read-only, workspace-write or off)", s)
}

// Policy is what commands and file tools may change; fixed for the
// agent's life. A nil *Policy, or one in mode Off, allows everything.
type Policy struct {
	Mode Mode `json:"mode"`
	// Network reports whether commands may use the network.
	Network bool `json:"network"`
	// Roots are the directories writable in workspace-write, resolved
	// (symlinks followed): the working directory, --add-dir roots and the
	// temp dir. Empty in read-only.
	Roots []string `json:"roots"`
	// Devices are the device files writable in every mode (/dev/null and
	// the like: a shell's `> /dev/null` is not a write to guard).
	Devices []string `json:"devices"`
	// Protected are directories kept read-only although they lie in a
	// root (the agent dir: Protect), resolved; the configuration names
	// below every root (configNames) are kept too.
	Protected []string `json:"protected,omitempty"`
	// watch notices the configuration paths a command creates (Planted);
	// nil outside workspace-write and in the supervisor's copy.
	watch *plantWatch
}

// devices are writable in every mode; missing ones are skipped.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// New builds the policy of mode for a session in cwd: in workspace-write
// the writable roots are cwd, each of addDirs (relative to cwd) and the
// temp dir ($TMPDIR, else /tmp) and /dev/shm, resolved. A root that does not
// exist is an error naming it.
func New(mode Mode, cwd string, addDirs []string, network bool) (*Policy, error) {
	p := &Policy{Mode: mode, Network: network, Roots: []string{}, Devices: []string{}}
	for _, d := range devices {
		if _, err := os.Stat(d); err == nil {
			p.Devices = append(p.Devices, d)
		}
	}
	if mode != WorkspaceWrite {
		return p, nil
	}
	add := func(dir string, required bool) error {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			if required {
				return fmt.Errorf("%s: %w", dir, err)
			}
			return nil
		}
		if !slices.Contains(p.Roots, real) {
			p.Roots = append(p.Roots, real)
		}
		return nil
	}
	if err := add(cwd, true); err != nil {
		return nil, err
	}
	for _, d := range addDirs {
		if err := add(d, true); err != nil {
			return nil, fmt.Errorf("--add-dir %w", err)
		}
	}
	_ = add(os.TempDir(), false)
	_ = add("/dev/shm", false)
	p.watchMissing()
	return p, nil
}

// On reports whether the policy confines anything.
func (p *Policy) On() bool { return p != nil && p.Mode != Off && p.Mode != "" }

// Allows reports whether real, a resolved absolute path, may be written.
func (p *Policy) Allows(real string) bool {
	if !p.On() {
		return true
	}
	for _, r := range p.Roots {
		if within(real, r) {
			return true
		}
	}
	return slices.Contains(p.Devices, real)
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// DeniedError is a write the sandbox refused: it names the mode and the
// rule, so the model can tell the user what to widen.
type DeniedError struct {
	Mode  Mode
	Path  string // the resolved path refused
	Roots []string
	// Config is the configuration path Path is or lies in, when that is
	// the rule that refused it (configPath).
	Config string
}

func (e *DeniedError) Error() string {
	if e.Config != "" {
		return fmt.Sprintf("the sandbox (%s) keeps %s read-only: agents and git read it when they start and may run what it names", e.Mode, e.Config)
	}
	if e.Mode == ReadOnly {
		return fmt.Sprintf("the sandbox (read-only) denies every write; %s was not changed", e.Path)
	}
	return fmt.Sprintf("the sandbox (workspace-write) denies writing outside the workspace (writable: %s); %s is outside",
		strings.Join(e.Roots, ", "), e.Path)
}

// check is the refusal to write real, or nil.
func (p *Policy) check(real string) error {
	if !p.Allows(real) {
		return &DeniedError{Mode: p.Mode, Path: real, Roots: p.Roots}
	}
	if c := p.configPath(real); c != "" {
		return &DeniedError{Mode: p.Mode, Path: real, Roots: p.Roots, Config: c}
	}
	return nil
}

// Explain returns a note for the output of a sandboxed command that
// failed in a way the sandbox may have caused (the kernel's refusal reads
// as a bare "Permission denied" or an unreachable network), or "".
func (p *Policy) Explain(output string) string {
	if !p.On() {
		return ""
	}
	var notes []string
	if containsAny(output, "Permission denied", "Operation not permitted", "Read-only file system") {
		if p.Mode == ReadOnly {
			notes = append(notes, "the sandbox (read-only) denies every write")
		} else {
			notes = append(notes, "the sandbox (workspace-write) denies writes outside "+strings.Join(p.Roots, ", ")+
				", and to the configuration agents and git read there (.git/hooks, .git/config, .mcp.json, .xcsh, .claude, …)")
		}
	}
	if !p.Network && containsAny(output, "Network is unreachable", "Could not resolve", "Temporary failure in name resolution",
		"Name or service not known", "No address associated", "Connection refused", "getaddrinfo") {
		notes = append(notes, "the sandbox ("+string(p.Mode)+") keeps the network off (only a private loopback)")
	}
	if len(notes) == 0 {
		return ""
	}
	return "[Sandbox: " + strings.Join(notes, "; ") + ". A denial above may come from it: ask the user before working around it.]"
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Enforcement says how the kernel enforces a policy on commands.
type Enforcement struct {
	// Filesystem is "landlock" (with its ABI version in LandlockABI) or
	// "none" (--sandbox-fallback on a kernel without Landlock: only the
	// file tools are confined).
	Filesystem  string `json:"filesystem"`
	LandlockABI int    `json:"-"`
	// Network is "namespace" (a network namespace with only a loopback),
	// "landlock-tcp" (fallback: TCP connect and bind refused), "none"
	// (fallback with nothing to enforce it) or "open" (allowed).
	Network string `json:"network"`
	// Mounts says the mount namespace of workspace-write is laid out
	// (metadata outside the roots and the configuration paths read-only);
	// Seccomp that read-only's filter refuses metadata changes. The CLI
	// reads them; get_state does not show them (--sandbox-fallback says on
	// stderr when one is missing).
	Mounts  bool `json:"mounts,omitempty"`
	Seccomp bool `json:"seccomp,omitempty"`
}

// State is get_state.sandbox.
type State struct {
	Mode          Mode        `json:"mode"`
	Network       bool        `json:"network"`
	WritableRoots []string    `json:"writableRoots"`
	Enforcement   Enforcement `json:"enforcement"`
}

// State describes the policy as enforced, for get_state.
func (p *Policy) State(e Enforcement) State {
	return State{Mode: p.Mode, Network: p.Network, WritableRoots: p.Roots, Enforcement: e}
}
