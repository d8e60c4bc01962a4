package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// toolKind is the ACP kind of a tool, for the editor's icon.
func toolKind(name string) string {
	var k sdk.ToolKind
	switch name {
	case "read":
		k = sdk.ToolKindRead
	case "write", "edit":
		k = sdk.ToolKindEdit
	case "bash":
		k = sdk.ToolKindExecute
	case "grep", "find":
		k = sdk.ToolKindSearch
	case "todo_write":
		k = sdk.ToolKindThink
	default:
		k = sdk.ToolKindOther
	}
	return string(k)
}

// toolArgs are the arguments the titles and locations read.
type toolArgs struct {
	Path    string `json:"path"`
	Offset  int    `json:"offset"`
	Command string `json:"command"`
	Pattern string `json:"pattern"`
	Edits   []struct {
		Path string `json:"path"`
	} `json:"edits"`
	Question string `json:"question"`
}

func decodeToolArgs(args []byte) toolArgs {
	var a toolArgs
	_ = json.Unmarshal(args, &a)
	return a
}

// toolTitle is a short line saying what a call does.
func toolTitle(name string, args []byte) string {
	a := decodeToolArgs(args)
	withPath := func(verb, path string) string {
		if path == "" {
			return verb
		}
		return verb + " " + path
	}
	switch name {
	case "read":
		return withPath("Read", a.Path)
	case "write":
		return withPath("Write", a.Path)
	case "edit":
		if len(a.Edits) == 0 {
			return "Edit"
		}
		t := withPath("Edit", a.Edits[0].Path)
		if n := len(a.Edits); n > 1 {
			t += fmt.Sprintf(" (+%d more)", n-1)
		}
		return t
	case "bash":
		cmd := strings.TrimSpace(a.Command)
		if i := strings.IndexByte(cmd, '\n'); i >= 0 {
			cmd = cmd[:i] + " …"
		}
		if r := []rune(cmd); len(r) > 120 {
			cmd = string(r[:119]) + "…"
		}
		if cmd == "" {
			return "Run a command"
		}
		return "`" + cmd + "`"
	case "grep":
		return withPath("Search for", quoteIf(a.Pattern))
	case "find":
		return withPath("Find", quoteIf(a.Pattern))
	case "todo_write":
		return "Update the plan"
	case "ask":
		return withPath("Ask:", a.Question)
	}
	if server, tool, ok := mcpName(name); ok {
		return fmt.Sprintf("%s (MCP server %s)", tool, server)
	}
	return name
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("%q", s)
}

// mcpName splits mcp__<server>__<tool>.
func mcpName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "__")
	return server, tool, ok
}

// toolLocations are the absolute paths a call works on, for the editor's
// follow-along.
func toolLocations(cwd, name string, args []byte) []location {
	a := decodeToolArgs(args)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	switch name {
	case "read":
		if a.Path != "" {
			l := location{Path: abs(a.Path)}
			if a.Offset > 0 {
				l.Line = a.Offset
			}
			return []location{l}
		}
	case "write":
		if a.Path != "" {
			return []location{{Path: abs(a.Path)}}
		}
	case "edit":
		var out []location
		seen := map[string]bool{}
		for _, e := range a.Edits {
			if p := abs(e.Path); p != "" && !seen[p] {
				seen[p] = true
				out = append(out, location{Path: p})
			}
		}
		return out
	case "grep", "find":
		if a.Path != "" {
			return []location{{Path: abs(a.Path)}}
		}
	}
	return nil
}

// isRefusal reports a provider's refusal (Anthropic's stop_reason
// "refusal"), which ACP names as a stop reason of its own.
func isRefusal(errText string) bool {
	return strings.Contains(errText, "stop_reason: refusal")
}
