package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// confirmPolicy asks the user before a tool call that matches it runs:
// bash commands matching a pattern (--confirm-bash), and writes or edits
// outside the working directory (--confirm-writes-outside-cwd). A declined
// or timed-out confirmation is an error result the model sees.
type confirmPolicy struct {
	cwd      string
	bash     []*regexp.Regexp
	outside  bool
	timeout  time.Duration
	patterns []string
}

// newConfirmPolicy compiles the patterns: a "*" matches anything (slashes
// and spaces included), "?" one character; the whole command must match.
func newConfirmPolicy(cwd, patterns string, outside bool, timeout time.Duration) *confirmPolicy {
	p := &confirmPolicy{cwd: cwd, outside: outside, timeout: timeout}
	for _, pat := range strings.Split(patterns, ",") {
		if pat = strings.TrimSpace(pat); pat == "" {
			continue
		}
		re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pat)) + "$"
		p.bash = append(p.bash, regexp.MustCompile(re))
		p.patterns = append(p.patterns, pat)
	}
	if len(p.bash) == 0 && !outside {
		return nil
	}
	return p
}

// gate implements engine.Config.Gate.
func (p *confirmPolicy) gate(ctx context.Context, call engine.ToolCall) *engine.ToolResult {
	switch call.Name {
	case "bash":
		var a struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(call.Arguments, &a) != nil {
			return nil
		}
		for i, re := range p.bash {
			if re.MatchString(strings.TrimSpace(a.Command)) {
				// "Always allow" covers the pattern that asked, not every
				// command the policy asks about.
				return p.ask(ctx, call.UI, "Run this command?", a.Command, fmt.Sprintf("commands matching %q", p.patterns[i]), "run the command")
			}
		}
	case "write", "edit":
		if !p.outside {
			return nil
		}
		var a struct {
			Path  string `json:"path"`
			Edits []struct {
				Path string `json:"path"`
			} `json:"edits"`
		}
		if json.Unmarshal(call.Arguments, &a) != nil {
			return nil
		}
		paths := []string{a.Path}
		for _, e := range a.Edits {
			paths = append(paths, e.Path)
		}
		for _, path := range paths {
			if path != "" && !p.inside(path) {
				return p.ask(ctx, call.UI, "Change a file outside the project?", path, "", "change "+path)
			}
		}
	}
	return nil
}

func (p *confirmPolicy) inside(path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.cwd, path)
	}
	rel, err := filepath.Rel(p.cwd, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func (p *confirmPolicy) ask(ctx context.Context, ui engine.UI, title, message, scope, what string) *engine.ToolResult {
	reply, err := ui.Dialog(ctx, engine.DialogRequest{Method: engine.DialogConfirm, Title: title, Message: message, Scope: scope, Timeout: p.timeout})
	if err == nil && reply.Confirmed && !reply.Cancelled {
		return nil
	}
	why := "declined"
	if reply.TimedOut {
		why = "did not answer in time"
	}
	res := engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(fmt.Sprintf("The user %s: not allowed to %s.", why, what))},
		Details: []byte("{}"), IsError: true}
	return &res
}
