package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// execArg, as argv[1], selects the confinement wrapper of the agent's
// own binary: argv[2] is the Config as JSON, argv[3] the program's path,
// argv[4:] its argv. The wrapper applies the Config to itself, then
// executes the program in its place (the same process: its pid, process
// group, pipes and parent-death signal stay), so the program and all it
// starts are held as the supervisor's commands are. MCP servers and
// extensions a project brings run this way under a sandbox (Wrap).
const execArg = "__xcsh_sandboxed__"

// IsExec reports whether args (os.Args) start the confinement wrapper:
// main must then call ExecMain before anything else.
func IsExec(args []string) bool { return len(args) >= 5 && args[1] == execArg }

// ExecMain runs the confinement wrapper; it returns only on failure, with
// the exit status.
func ExecMain() int {
	var c Config
	if err := json.Unmarshal([]byte(os.Args[2]), &c); err != nil {
		fmt.Fprintln(os.Stderr, "xcsh sandbox:", err)
		return 126
	}
	if _, err := c.Apply(); err != nil {
		fmt.Fprintln(os.Stderr, "xcsh sandbox:", err)
		return 126
	}
	err := unix.Exec(os.Args[3], os.Args[4:], os.Environ())
	fmt.Fprintf(os.Stderr, "xcsh sandbox: %s: %v\n", os.Args[3], err)
	return 127
}

// Wrap makes cmd start confined by c: through the wrapper (this binary,
// /proc/self/exe, with os.Args[0] as its argv[0], so a test binary that
// dispatches on its name still finds it), in the namespaces c needs, added
// to cmd's own SysProcAttr (its process group and parent-death signal
// stay). cmd must not have started; a program it could not find stays its
// error.
func (c Config) Wrap(cmd *exec.Cmd) error {
	if cmd.Process != nil {
		return errors.New("the process has started")
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if len(cmd.Args) == 0 {
		cmd.Args = []string{cmd.Path}
	}
	cmd.Args = append([]string{os.Args[0], execArg, string(raw), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	if ns := c.SysProcAttr(); ns != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		a := cmd.SysProcAttr
		a.Cloneflags |= ns.Cloneflags
		a.UidMappings, a.GidMappings = ns.UidMappings, ns.GidMappings
		a.GidMappingsEnableSetgroups = ns.GidMappingsEnableSetgroups
		a.AmbientCaps = append(a.AmbientCaps, ns.AmbientCaps...)
	}
	return nil
}
