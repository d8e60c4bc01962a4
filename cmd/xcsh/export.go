package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/xcsh-go/xcsh/engine/export"
	"github.com/xcsh-go/xcsh/engine/safefile"
	"github.com/xcsh-go/xcsh/engine/sessionfile"
)

// exportOptions are the flags of xcsh export.
type exportOptions struct {
	format     string
	out        string
	appendOnly bool
}

// newExportCmd is `xcsh export`: a stored session as a file another tool
// reads (docs/automation.md, "Trajectories (ATIF)").
// It takes the root command's flags (a host passes the same flags to every
// xcsh command; --session-dir is the one export reads).
func newExportCmd(root *cobra.Command, o *options, stdout, stderr io.Writer) *cobra.Command {
	eo := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export [flags] SESSION",
		Short: "write a stored session as an ATIF trajectory (JSON) or an HTML page",
		Long: `xcsh export writes a stored session's current branch, from its first entry to its
leaf: --format atif is Harbor's Agent Trajectory Interchange Format (ATIF-v1.6), which
evaluation harnesses (Terminal-Bench, Harbor) and RL pipelines read; --format html is the
page export_html writes. SESSION is a session file or an id prefix, found as --resume
finds it. The output goes to stdout unless -o names a file.

--append-only is for training on the trajectory: it refuses a session whose context was
rewritten (a compaction, tool output pruned, a branch summary) and says in the export that
each step's context is the steps before it. Run the session with --no-auto-compaction.

Documentation: docs/automation.md.`,
		Example: `  # The trajectory of a session, by id prefix
  xcsh export --format atif 0192ab > trajectory.json

  # For RL: a run that never compacts, then a strictly appending export
  xcsh -p --no-auto-compaction --session-dir runs "Fix the failing test"
  xcsh export --format atif --append-only -o traj.json runs/*.jsonl`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(o, eo, args[0], stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&eo.format, "format", "atif", "atif (an ATIF-v1.6 trajectory, JSON) or html (the export_html page)")
	f.StringVarP(&eo.out, "output", "o", "", "write to this file instead of stdout")
	f.BoolVar(&eo.appendOnly, "append-only", false, "refuse a session whose context was rewritten (compaction, pruning), and say the trajectory is strictly appending (atif)")
	f.AddFlagSet(root.Flags())
	return cmd
}

func runExport(o *options, eo *exportOptions, target string, stdout, stderr io.Writer) error {
	if eo.format != "atif" && eo.format != "html" {
		return &exitError{2, fmt.Sprintf("Error: unknown --format %q (atif or html)", eo.format)}
	}
	if eo.appendOnly && eo.format != "atif" {
		return &exitError{2, "Error: --append-only is for --format atif"}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	path, err := startupPath(&options{session: target, sessionDir: o.sessionDir}, os.Getenv, cwd, stderr)
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	s, err := sessionfile.Load(path)
	if err != nil {
		return &exitError{2, "Error: " + err.Error()}
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(stderr, "xcsh: %s: %s\n", path, w)
	}
	d := export.Data{SessionID: s.Header.ID, SessionFile: path, Title: s.Header.Title, Cwd: s.Header.Cwd,
		Created: s.Header.Timestamp, Entries: s.Entries, Leaf: s.Leaf}
	write := func(w io.Writer) error {
		if eo.format == "html" {
			return export.WriteHTML(w, d)
		}
		return export.WriteATIF(w, d, export.ATIFOptions{AgentVersion: version, AppendOnly: eo.appendOnly})
	}
	if eo.out != "" {
		err = safefile.WriteFile(eo.out, 0o600, write)
	} else {
		bw := bufio.NewWriter(stdout)
		if err = write(bw); err == nil {
			err = bw.Flush()
		}
	}
	if err != nil {
		code := 1
		if errors.Is(err, export.ErrNotAppendOnly) || errors.Is(err, export.ErrEmpty) {
			code = 3 // the session, not the machine: a harness can tell
		}
		return &exitError{code, "Error: " + err.Error()}
	}
	return nil
}
