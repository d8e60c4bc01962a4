package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/xcsh-go/xcsh/rpc/replay"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
)

// replayOptions are the flags of xcsh replay.
type replayOptions struct {
	host    string
	json    bool
	timeout time.Duration
}

// newReplayCmd is `xcsh replay`: a recorded conversation (golden/replay/)
// replayed against this binary, or against a host program with a scripted
// agent in xcsh's place (rpc/replay).
func newReplayCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay [--host CMD] TRANSCRIPT.jsonl|DIR...",
		Short: "check this agent, or a host program, against a recorded conversation",
		Long: `xcsh replay checks a conversation recorded as a replay transcript (the suite's are in
golden/replay/; a directory means every .jsonl file in it).

By default it runs this binary with the transcript's arguments and files, sends the
host's recorded lines, each once the frame it waited for has arrived, and compares every
frame the agent writes with the recording ($WORK stands for the work directory). A
difference prints the line that differs and a diff.

With --host CMD it runs CMD (through the shell) as a host program: CMD's stdin and stdout
are connected to a scripted agent that writes the recorded frames and checks each line CMD
sends against the recorded input (as JSON: key order and spacing are CMD's, the ids of its
commands are its own, timestamps are not compared). The first difference names the
transcript line. CMD gets XCSH_REPLAY_TRANSCRIPT (the file) and XCSH_REPLAY_NAME (its name
without .jsonl) in its environment. No model is needed either way.

The exit code is 0 when every transcript replays, 1 when one does not.

Documentation: docs/testing.md ("Replaying transcripts").`,
		Example: `  # A recorded flow against this binary
  xcsh replay golden/replay/abort_mid_stream.jsonl

  # A host program against the same flow's frames
  xcsh replay --host 'node host.js' golden/replay/ui_ask_select.jsonl`,
		Args:          cobra.MinimumNArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), o, args, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "", "a host program (a shell command) to check, against a scripted agent")
	f.BoolVar(&o.json, "json", false, "one JSON report per transcript on stdout, instead of text")
	f.DurationVar(&o.timeout, "timeout", replay.DefaultTimeout, "the longest wait for one frame of the agent or one line of the host")
	return cmd
}

func runReplay(ctx context.Context, o *replayOptions, args []string, stdout, stderr io.Writer) error {
	if o.timeout <= 0 {
		return &exitError{2, "Error: --timeout must be positive"}
	}
	files, err := replayFiles(args)
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	self := ""
	if o.host == "" {
		if self, err = os.Executable(); err != nil {
			return &exitError{1, "Error: finding this binary to replay against: " + err.Error()}
		}
	}
	failed := 0
	for _, file := range files {
		r := replayOne(ctx, o, self, file, stderr)
		if !r.OK {
			failed++
		}
		if o.json {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n", b)
		} else if err := r.WriteText(stdout); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &exitError{1, ""}
	}
	return nil
}

// replayOne replays one file; a file that cannot be read or a process that
// cannot start is a failed report too, so every file gets one.
func replayOne(ctx context.Context, o *replayOptions, self, file string, stderr io.Writer) *replay.Report {
	mode := replay.ModeAgent
	if o.host != "" {
		mode = replay.ModeHost
	}
	failed := func(err error) *replay.Report {
		return &replay.Report{Transcript: file, Mode: mode, Divergence: &replay.Divergence{Line: 1, Reason: err.Error()}}
	}
	t, err := readTranscript(file)
	if err != nil {
		return failed(err)
	}
	var r *replay.Report
	if o.host == "" {
		r, err = replay.Agent(ctx, t, replay.AgentOptions{Path: self, Timeout: o.timeout, Name: file})
	} else {
		abs, _ := filepath.Abs(file)
		r, err = replay.Host(ctx, t, replay.HostOptions{
			Command: shellCommand(o.host),
			Env: []string{
				"XCSH_REPLAY_TRANSCRIPT=" + abs,
				"XCSH_REPLAY_NAME=" + strings.TrimSuffix(filepath.Base(file), ".jsonl"),
			},
			Stderr:     stderr,
			Timeout:    o.timeout,
			Name:       file,
			SchemaHash: rpcschema.SchemaHash,
		})
	}
	if err != nil {
		return failed(err)
	}
	return r
}

func readTranscript(file string) (*replay.Transcript, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay.Read(f)
}

// replayFiles expands the arguments: a directory stands for its .jsonl
// files, in name order.
func replayFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			files = append(files, a) // a missing file fails in its own report
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no .jsonl transcript in this directory", a)
		}
		sort.Strings(m)
		files = append(files, m...)
	}
	return files, nil
}

// shellCommand runs a command line through the system's shell, so --host
// takes what a user would type.
func shellCommand(line string) []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd", "/C", line}
	}
	return []string{"/bin/sh", "-c", line}
}
