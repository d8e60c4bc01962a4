package tools

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
	"github.com/xcsh-go/xcsh/engine/tools/shellexec"
)

// Bash timeouts (agent-core.md §4.5): default 300 s, clamped to [1, 3600].
const (
	bashDefaultTimeout = 300
	bashMinTimeout     = 1
	bashMaxTimeout     = 3600
)

var (
	envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	// A leading "cd <dir> &&" becomes the working directory, as the
	// original does, so the command's output is not polluted by the cd.
	leadingCdRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)\s*&&\s*`) })
)

type bashTool struct {
	spec
	o Options
}

// NewBash returns the bash tool: one command per call in a fresh
// non-interactive bash, combined output kept to the last 50 KB, the whole
// process group killed on abort or timeout.
func NewBash(o Options) engine.Tool { return &bashTool{spec: bashSpec, o: o} }

var bashSpec = spec{
	name:        "bash",
	concurrency: engine.Exclusive,
	description: "Run a shell command with bash in the working directory and return its combined stdout and stderr. " +
		"The environment is non-interactive (no pager, no prompts, TERM=dumb). Only the last 50KB of output is kept. " +
		"A non-zero exit code is reported as an error. Arguments: command (required); timeout in seconds " +
		"(default 300, 1-3600); cwd; env (extra variables); head/tail (keep only the first/last N lines).",
	schema: []byte(`{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The command to run"},` +
		`"timeout":{"type":"number","description":"Timeout in seconds (default 300, clamped to 1-3600)"},` +
		`"cwd":{"type":"string","description":"Working directory (default: the session's)"},` +
		`"env":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra environment variables"},` +
		`"head":{"type":"integer","minimum":1,"description":"Keep only the first N lines of output"},` +
		`"tail":{"type":"integer","minimum":1,"description":"Keep only the last N lines of output"}` +
		`},"required":["command"],"additionalProperties":false}`),
}

type bashArgs struct {
	Command *string           `json:"command"`
	Timeout *float64          `json:"timeout"`
	Cwd     string            `json:"cwd"`
	Env     map[string]string `json:"env"`
	Head    int               `json:"head"`
	Tail    int               `json:"tail"`
}

func (t *bashTool) Run(ctx context.Context, call engine.ToolCall, update func(engine.ToolResult)) (engine.ToolResult, error) {
	var a bashArgs
	if r, ok := decodeArgs("bash", call.Arguments, &a); !ok {
		return r, nil
	}
	if a.Command == nil || strings.TrimSpace(*a.Command) == "" {
		return failResult("Invalid bash arguments: command must be a non-empty string"), nil
	}
	if ctx.Err() != nil {
		return failResult("Command aborted"), nil
	}
	command := *a.Command
	cwd := t.o.Cwd
	if a.Cwd != "" {
		cwd = resolveCwd(t.o.Cwd, a.Cwd)
	} else if m := leadingCdRE().FindStringSubmatch(command); m != nil {
		cwd = resolveCwd(t.o.Cwd, strings.Trim(m[1], `"'`))
		command = command[len(m[0]):]
	}
	fi, err := os.Stat(cwd)
	switch {
	case err != nil:
		return failResult("Working directory does not exist: " + cwd), nil
	case !fi.IsDir():
		return failResult("Working directory is not a directory: " + cwd), nil
	}
	for k := range a.Env {
		if !envNameRE().MatchString(k) {
			return failResult("Invalid bash env name: " + k), nil
		}
	}
	timeout := bashDefaultTimeout
	if a.Timeout != nil {
		timeout = int(*a.Timeout)
	}
	timeout = min(max(timeout, bashMinTimeout), bashMaxTimeout)

	opts := shellexec.Options{Cwd: cwd, Timeout: time.Duration(timeout) * time.Second, Env: traceEnv(ctx, a.Env), MaxBytes: DefaultMaxBytes}
	if t.o.StreamInterval > 0 && update != nil {
		opts.Interval = t.o.StreamInterval
		opts.OnOutput = func(tail string) {
			update(engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(tail)}, Details: []byte("{}")})
		}
	}
	run := shellexec.Run
	if t.o.Exec != nil {
		run = t.o.Exec
	}
	res, err := run(ctx, command, opts)
	if err != nil {
		return failResult("Command failed to start: " + err.Error()), nil
	}
	text := bashText(res, a.Head, a.Tail)
	d := bashDetails{TimeoutSeconds: timeout, TotalLines: outputLines(res), TotalBytes: res.TotalBytes, Truncated: res.Truncated}
	if res.Exited {
		code := res.ExitCode
		d.ExitCode = &code
	}
	out := engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(text)}, Details: mustJSON(d)}
	switch {
	case res.TimedOut:
		out.IsError = true
		out.Content[0].Text = fmt.Sprintf("[Command timed out after %d seconds]\n%s", timeout, text)
	case res.Cancelled:
		out.IsError = true
		if res.Output == "" {
			out.Content[0].Text = "Command aborted"
		} else {
			out.Content[0].Text = text + "\n\nCommand aborted"
		}
	case !res.Exited:
		out.IsError = true
		out.Content[0].Text = text + "\n\nCommand failed: missing exit status"
	case res.ExitCode != 0:
		out.IsError = true
		out.Content[0].Text = fmt.Sprintf("%s\n\nCommand exited with code %d", text, res.ExitCode)
	}
	// The kernel's refusal reads as a bare "Permission denied": say which
	// sandbox rule may be behind it.
	if note := t.o.Sandbox.Explain(res.Output); note != "" {
		out.Content[0].Text += "\n\n" + note
	}
	// What the sandbox cannot refuse, it tells.
	if planted := t.o.Sandbox.Planted(); len(planted) > 0 {
		out.Content[0].Text += "\n\n" + sandbox.PlantedNote(planted)
	}
	return out, nil
}

// bashDetails is the tool result's details; exitCode is absent when the
// command did not exit on its own (timeout, abort).
type bashDetails struct {
	TimeoutSeconds int  `json:"timeoutSeconds"`
	ExitCode       *int `json:"exitCode,omitempty"`
	TotalLines     int  `json:"totalLines"`
	TotalBytes     int  `json:"totalBytes"`
	Truncated      bool `json:"truncated"`
}

// outputLines counts the lines of output, not counting the empty "line"
// after a final newline.
func outputLines(res shellexec.Result) int {
	if res.TotalBytes == 0 {
		return 0
	}
	n := res.TotalLines
	if strings.HasSuffix(res.Output, "\n") && n > 0 {
		n--
	}
	return n
}

// bashText is the kept output, post-filtered by head/tail, with the tail
// truncation notice when output was dropped.
func bashText(res shellexec.Result, head, tail int) string {
	out := strings.TrimSuffix(res.Output, "\n")
	if head > 0 || tail > 0 {
		lines := strings.Split(out, "\n")
		if head > 0 && len(lines) > head {
			lines = lines[:head]
		}
		if tail > 0 && len(lines) > tail {
			lines = lines[len(lines)-tail:]
		}
		out = strings.Join(lines, "\n")
	}
	if out == "" {
		out = "(no output)"
	}
	if res.Truncated {
		kept := CountLines(strings.TrimSuffix(res.Output, "\n"))
		total := outputLines(res)
		t := Truncation{Truncated: true, ByBytes: true, TotalLines: total, StartLine: total - kept + 1, EndLine: total}
		out += "\n\n" + TailNotice(t, DefaultMaxBytes)
	}
	return out
}

// traceEnv is the command's extra environment: the model's, and the call's
// traceparent when tracing is on (TRACEPARENT, the W3C's name for it in an
// environment), so a traced program the command runs joins the trace. The
// model's own TRACEPARENT, if it set one, wins.
func traceEnv(ctx context.Context, env map[string]string) map[string]string {
	tp := engine.TraceParent(ctx)
	if tp == "" {
		return env
	}
	if _, set := env["TRACEPARENT"]; set {
		return env
	}
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	out["TRACEPARENT"] = tp
	return out
}
