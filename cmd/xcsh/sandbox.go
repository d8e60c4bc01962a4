package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// sandboxFlags are the flags of docs/sandbox.md. The project has no
// settings file, so flags are the only way to set them.
type sandboxFlags struct {
	mode     string
	addDirs  []string
	network  bool
	fallback bool
}

func addSandboxFlags(f *pflag.FlagSet, s *sandboxFlags) {
	f.StringVar(&s.mode, "sandbox", "off", "confine commands and file tools: read-only, workspace-write or off")
	f.StringArrayVar(&s.addDirs, "add-dir", nil, "another directory writable in workspace-write (repeatable)")
	f.BoolVar(&s.network, "sandbox-network", false, "let sandboxed commands use the network")
	f.BoolVar(&s.fallback, "sandbox-fallback", false, "run with what the kernel can enforce instead of refusing to start")
}

// unavailableEnv simulates a kernel without Landlock ("landlock") or
// without user and network namespaces ("netns"), comma-separated: the
// sandbox_unavailable_refuses_start scenario and hosts that want to test
// their handling of a refusal. It can only make the agent stricter.
const unavailableEnv = "XCSH_SANDBOX_UNAVAILABLE"

var errNoNetNS = errors.New("simulated by " + unavailableEnv)

// setupSandbox builds the sandbox of --sandbox and starts the command
// supervisor in it (before the ready frame: a mode the kernel cannot
// enforce refuses the start, never downgrades silently). It returns the
// policy for the file tools and get_state.sandbox; both nil when off.
func setupSandbox(s *sandboxFlags, cwd string, env func(string) string, stderr io.Writer) (*sandbox.Policy, *engine.SandboxState, error) {
	mode, err := sandbox.ParseMode(s.mode)
	if err != nil {
		return nil, nil, &exitError{2, "Error: --sandbox: " + err.Error()}
	}
	if mode == sandbox.Off {
		shellexec.Use(shellexec.NewSupervisor(shellexec.SupervisorConfig{Log: stderr}))
		protectAgent(env, stderr)
		return nil, nil, nil
	}
	refuse := func(why, hint string) error {
		// One line, as every start-up error.
		return &exitError{2, strings.TrimSpace(fmt.Sprintf("Error: --sandbox %s cannot be enforced: %s. %s", mode, why, hint))}
	}
	policy, err := sandbox.New(mode, cwd, s.addDirs, s.network)
	if err != nil {
		return nil, nil, &exitError{2, "Error: --sandbox: " + err.Error()}
	}
	unavailable := map[string]bool{}
	for _, w := range strings.Split(env(unavailableEnv), ",") {
		unavailable[strings.TrimSpace(w)] = true
	}
	abi := sandbox.LandlockABI()
	if unavailable["landlock"] {
		abi = 0
	}
	cfg := sandbox.Config{Policy: *policy, Landlock: abi >= 1}
	var degraded []string
	if abi < 1 {
		if !s.fallback {
			return nil, nil, refuse("this kernel has no Landlock (Linux 5.13 or later, enabled at boot)",
				"Use --sandbox off, or --sandbox-fallback to confine only the file tools.")
		}
		degraded = append(degraded, "commands may write anywhere (no Landlock)")
	}
	start := func(cfg sandbox.Config, attr *syscall.SysProcAttr) (*shellexec.Supervisor, json.RawMessage, error) {
		raw, err := json.Marshal(cfg)
		if err != nil {
			return nil, nil, err
		}
		sup := shellexec.NewSupervisor(shellexec.SupervisorConfig{Config: raw, SysProcAttr: attr, Required: true, Log: stderr})
		info, err := sup.Start()
		return sup, info, err
	}
	var sup *shellexec.Supervisor
	var info json.RawMessage
	if !s.network {
		// A network namespace of its own, with only a loopback.
		cfg.NetNS = true
		err := errNoNetNS
		if !unavailable["netns"] {
			sup, info, err = start(cfg, sandbox.NamespaceAttr())
		}
		if err != nil {
			if !s.fallback {
				if errors.Is(err, shellexec.ErrSandboxApply) {
					// The namespaces were made; applying the sandbox in
					// them failed (Landlock, say): that is the cause.
					return nil, nil, refuse(err.Error(), "Use --sandbox off, or --sandbox-fallback.")
				}
				return nil, nil, refuse("no network namespace for commands ("+sandbox.NamespaceError(err)+")",
					"Use --sandbox-network to allow the network, or --sandbox-fallback to run with what the kernel can enforce.")
			}
			cfg.NetNS, cfg.NetTCP = false, abi >= 4
			if cfg.NetTCP {
				degraded = append(degraded, "the network is off for TCP only (Landlock), not for UDP")
			} else {
				degraded = append(degraded, "commands may use the network")
			}
			sup = nil
		}
	}
	if sup == nil {
		if sup, info, err = start(cfg, nil); err != nil {
			return nil, nil, refuse(err.Error(), "Use --sandbox off, or --sandbox-fallback.")
		}
	}
	var e sandbox.Enforcement
	if err := json.Unmarshal(info, &e); err != nil {
		return nil, nil, refuse("the supervisor did not say what it enforces", "")
	}
	if len(degraded) > 0 {
		fmt.Fprintf(stderr, "xcsh: warning: --sandbox %s with --sandbox-fallback: %s\n", mode, strings.Join(degraded, "; "))
	}
	shellexec.Use(sup)
	if !cfg.NetNS {
		// No user namespace to write a uid_map for: the agent may be
		// closed to its commands as with --sandbox off (Landlock keeps
		// them from its descriptors, not from its environment).
		protectAgent(env, stderr)
	}
	st := policy.State(e)
	return policy, &engine.SandboxState{Mode: string(st.Mode), Network: st.Network, WritableRoots: st.WritableRoots,
		Enforcement: engine.SandboxEnforcement{Filesystem: e.Filesystem, Network: e.Network}}, nil
}
