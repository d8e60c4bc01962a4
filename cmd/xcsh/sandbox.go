package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// sandboxFlags are the flags of docs/sandbox.md. No settings file sets
// the sandbox, so flags are the only way to set them.
type sandboxFlags struct {
	mode     string
	addDirs  []string
	network  bool
	fallback bool
	// projectCode says what runs of a project's own MCP servers and
	// extensions under a sandbox (trust.go).
	projectCode string
}

func addSandboxFlags(f *pflag.FlagSet, s *sandboxFlags) {
	f.StringVar(&s.mode, "sandbox", "off", "confine commands and file tools: read-only, workspace-write or off")
	f.StringArrayVar(&s.addDirs, "add-dir", nil, "another directory writable in workspace-write (repeatable)")
	f.BoolVar(&s.network, "sandbox-network", false, "let sandboxed commands use the network")
	f.BoolVar(&s.fallback, "sandbox-fallback", false, "run with what the kernel can enforce instead of refusing to start")
	f.StringVar(&s.projectCode, "project-code", projectAsk, "under a sandbox, a project's own MCP servers and extensions: ask (the host, before they start), sandbox (run them in it) or trust (run them outside it)")
}

// unavailableEnv simulates a kernel without Landlock ("landlock") or
// without user namespaces, so no network or mount namespace ("netns"),
// comma-separated: the sandbox_unavailable_refuses_start scenario and
// hosts that want to test their handling of a refusal. It can only make
// the agent stricter.
const unavailableEnv = "XCSH_SANDBOX_UNAVAILABLE"

var errNoNetNS = errors.New("simulated by " + unavailableEnv)

// sandboxSetup is what setupSandbox gives the rest of the CLI; its
// fields are nil when the sandbox is off.
type sandboxSetup struct {
	policy *sandbox.Policy      // for the file tools
	state  *engine.SandboxState // get_state.sandbox
	// confine makes a process start inside the sandbox the commands run
	// in (a project's MCP server or extension: trust.go).
	confine func(*exec.Cmd) error
}

// setupSandbox builds the sandbox of --sandbox and starts the command
// supervisor in it (before the ready frame: a mode the kernel cannot
// enforce refuses the start, never downgrades silently).
func setupSandbox(s *sandboxFlags, cwd string, env func(string) string, stderr io.Writer) (sandboxSetup, error) {
	mode, err := sandbox.ParseMode(s.mode)
	if err != nil {
		return sandboxSetup{}, &exitError{2, "Error: --sandbox: " + err.Error()}
	}
	if _, err := parseProjectCode(s.projectCode); err != nil {
		return sandboxSetup{}, &exitError{2, "Error: --project-code: " + err.Error()}
	}
	if mode == sandbox.Off {
		shellexec.Use(shellexec.NewSupervisor(shellexec.SupervisorConfig{Log: stderr}))
		protectAgent(env, stderr)
		return sandboxSetup{}, nil
	}
	refuse := func(why, hint string) error {
		// One line, as every start-up error.
		return &exitError{2, strings.TrimSpace(fmt.Sprintf("Error: --sandbox %s cannot be enforced: %s. %s", mode, why, hint))}
	}
	policy, err := sandbox.New(mode, cwd, s.addDirs, s.network)
	if err != nil {
		return sandboxSetup{}, &exitError{2, "Error: --sandbox: " + err.Error()}
	}
	// The agent's own configuration is the user's: a command may not
	// change it even where it lies in a writable root.
	policy.Protect(sessionfile.AgentDir(env))
	unavailable := map[string]bool{}
	for _, w := range strings.Split(env(unavailableEnv), ",") {
		unavailable[strings.TrimSpace(w)] = true
	}
	abi := sandbox.LandlockABI()
	if unavailable["landlock"] {
		abi = 0
	}
	cfg := sandbox.Config{Policy: *policy, Landlock: abi >= 1}
	// What Landlock does not cover: metadata (chmod, chown, utime, xattrs)
	// and, in workspace-write, the configuration paths below the roots. A
	// mount namespace does both where a path must be judged; read-only
	// refuses every change, which a seccomp filter can do without one. The
	// mounts need Landlock, which keeps commands from undoing them.
	cfg.Seccomp = mode == sandbox.ReadOnly
	if mode == sandbox.WorkspaceWrite && cfg.Landlock {
		cfg.MountNS, cfg.Mounts = true, policy.Mounts()
	}
	var degraded []string
	if abi < 1 {
		if !s.fallback {
			return sandboxSetup{}, refuse("this kernel has no Landlock (Linux 5.13 or later, enabled at boot)",
				"Use --sandbox off, or --sandbox-fallback to confine only the file tools.")
		}
		degraded = append(degraded, "commands may write anywhere (no Landlock)")
	}
	start := func(cfg sandbox.Config) (*shellexec.Supervisor, json.RawMessage, error) {
		raw, err := json.Marshal(cfg)
		if err != nil {
			return nil, nil, err
		}
		sup := shellexec.NewSupervisor(shellexec.SupervisorConfig{Config: raw, SysProcAttr: cfg.SysProcAttr(), Required: true, Log: stderr})
		info, err := sup.Start()
		return sup, info, err
	}
	noMounts := func() {
		if cfg.MountNS {
			cfg.MountNS, cfg.Mounts = false, sandbox.Mounts{}
			degraded = append(degraded, "commands may change metadata outside the writable roots and the agent's configuration paths (no mount namespace)")
		}
	}
	var sup *shellexec.Supervisor
	var info json.RawMessage
	if !s.network || cfg.MountNS {
		// Namespaces of its own: a network namespace with only a loopback
		// (network off), a mount namespace (workspace-write).
		cfg.NetNS = !s.network
		err := errNoNetNS
		if !unavailable["netns"] {
			sup, info, err = start(cfg)
		}
		if err != nil {
			what, hint := "no network namespace for commands", "Use --sandbox-network to allow the network, or --sandbox-fallback to run with what the kernel can enforce."
			if s.network {
				what, hint = "no mount namespace for commands", "Use --sandbox-fallback to run with what the kernel can enforce."
			}
			if !s.fallback {
				if errors.Is(err, shellexec.ErrSandboxApply) {
					// The namespaces were made; applying the sandbox in
					// them failed (Landlock, say): that is the cause.
					return sandboxSetup{}, refuse(err.Error(), "Use --sandbox off, or --sandbox-fallback.")
				}
				return sandboxSetup{}, refuse(what+" ("+sandbox.NamespaceError(err)+")", hint)
			}
			if !s.network {
				cfg.NetNS, cfg.NetTCP = false, abi >= 4
				if cfg.NetTCP {
					degraded = append(degraded, "the network is off for TCP only (Landlock), not for UDP")
				} else {
					degraded = append(degraded, "commands may use the network")
				}
			}
			noMounts()
			sup = nil
		}
	}
	if sup == nil {
		if sup, info, err = start(cfg); err != nil && s.fallback && cfg.Seccomp {
			cfg.Seccomp = false
			degraded = append(degraded, "commands may change metadata ("+strings.TrimPrefix(err.Error(), "xcsh supervisor: ")+")")
			sup, info, err = start(cfg)
		}
		if err != nil {
			return sandboxSetup{}, refuse(err.Error(), "Use --sandbox off, or --sandbox-fallback.")
		}
	}
	var e sandbox.Enforcement
	if err := json.Unmarshal(info, &e); err != nil {
		return sandboxSetup{}, refuse("the supervisor did not say what it enforces", "")
	}
	if len(degraded) > 0 {
		fmt.Fprintf(stderr, "xcsh: warning: --sandbox %s with --sandbox-fallback: %s\n", mode, strings.Join(degraded, "; "))
	}
	shellexec.Use(sup)
	if !cfg.NetNS && !cfg.MountNS {
		// No user namespace to write a uid_map for: the agent may be
		// closed to its commands as with --sandbox off (Landlock keeps
		// them from its descriptors, not from its environment).
		protectAgent(env, stderr)
	}
	st := policy.State(e)
	return sandboxSetup{policy: policy, confine: cfg.Wrap,
		state: &engine.SandboxState{Mode: string(st.Mode), Network: st.Network, WritableRoots: st.WritableRoots,
			Enforcement: engine.SandboxEnforcement{Filesystem: e.Filesystem, Network: e.Network}}}, nil
}
