package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
		Short: "write a stored session as an ATIF trajectory (JSON) or an HTML page; a durable session as a session file",
		Long: `xcsh export writes a stored session's current branch, from its first entry to its
leaf: --format atif is Harbor's Agent Trajectory Interchange Format (ATIF-v1.6), which
evaluation harnesses (Terminal-Bench, Harbor) and RL pipelines read; --format html is the
page export_html writes. SESSION is a session file or an id prefix, found as --resume
finds it. The output goes to stdout unless -o names a file.

--append-only is for training on the trajectory: it refuses a session whose context was
rewritten (a compaction, tool output pruned, a branch summary) and says in the export that
each step's context is the steps before it. Run the session with --no-auto-compaction.

With --temporal ADDRESS --session ID (the binary built with -tags temporal), the durable
session ID is read from its workflow's record, running or idle, and written as a session
file (--format session, the default there) that xcsh --session FILE resumes in process;
--format html and atif work on it too. A worker of the session's task queue must be running:
it answers the record's queries.

Documentation: docs/automation.md, docs/durable.md.`,
		Example: `  # The trajectory of a session, by id prefix
  xcsh export --format atif 0192ab > trajectory.json

  # For RL: a run that never compacts, then a strictly appending export
  xcsh -p --no-auto-compaction --session-dir runs "Fix the failing test"
  xcsh export --format atif --append-only -o traj.json runs/*.jsonl

  # A durable session's record as a session file, then resumed in process
  xcsh export --temporal 127.0.0.1:7233 --session my-task -o my-task.jsonl
  xcsh --mode rpc --session my-task.jsonl`,
		Args:          cobra.MaximumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			target := o.session
			if len(args) == 1 {
				target = args[0]
			}
			if o.temporal.address != "" {
				if target == "" {
					return &exitError{2, "Error: --temporal needs --session ID: the durable session to export"}
				}
				if !cmd.Flags().Changed("format") {
					eo.format = "session"
				}
				return runTemporalExport(cmd.Context(), o, eo, target, stdout, stderr) // temporal_export*.go
			}
			if len(args) != 1 {
				return &exitError{2, "Error: export needs SESSION: a session file or an id prefix"}
			}
			return runExport(o, eo, args[0], stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&eo.format, "format", "atif", "atif (an ATIF-v1.6 trajectory, JSON), html (the export_html page) or, with --temporal, session (a session file; the default there)")
	f.StringVarP(&eo.out, "output", "o", "", "write to this file instead of stdout")
	f.BoolVar(&eo.appendOnly, "append-only", false, "refuse a session whose context was rewritten (compaction, pruning), and say the trajectory is strictly appending (atif)")
	f.AddFlagSet(root.Flags())
	// --out is --output's other spelling (issue 31 names it so).
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "out" {
			name = "output"
		}
		return pflag.NormalizedName(name)
	})
	return cmd
}

// checkFormat checks --format and --append-only; session is a durable
// session's (a stored session already is a session file).
func (eo *exportOptions) checkFormat(durable bool) error {
	switch {
	case eo.format == "session" && !durable:
		return &exitError{2, "Error: --format session is for a durable session (--temporal ADDRESS --session ID)"}
	case eo.format != "atif" && eo.format != "html" && eo.format != "session":
		if durable {
			return &exitError{2, fmt.Sprintf("Error: unknown --format %q (session, atif or html)", eo.format)}
		}
		return &exitError{2, fmt.Sprintf("Error: unknown --format %q (atif or html)", eo.format)}
	case eo.appendOnly && eo.format != "atif":
		return &exitError{2, "Error: --append-only is for --format atif"}
	}
	return nil
}

func runExport(o *options, eo *exportOptions, target string, stdout, stderr io.Writer) error {
	if err := eo.checkFormat(false); err != nil {
		return err
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
	return eo.write(stdout, func(w io.Writer) error {
		if eo.format == "html" {
			return export.WriteHTML(w, d)
		}
		return export.WriteATIF(w, d, export.ATIFOptions{AgentVersion: version, AppendOnly: eo.appendOnly})
	})
}

// write writes the export to -o's file (whole or not at all) or stdout,
// and words a failure with its exit code.
func (eo *exportOptions) write(stdout io.Writer, write func(io.Writer) error) error {
	var err error
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
