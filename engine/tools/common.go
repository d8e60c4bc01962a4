package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// textResult is a successful result with one text block.
func textResult(text string, details []byte) engine.ToolResult {
	if details == nil {
		details = []byte("{}")
	}
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(text)}, Details: details}
}

// failResult is an error result the model sees.
func failResult(text string) engine.ToolResult {
	r := textResult(text, nil)
	r.IsError = true
	return r
}

// warnResult is a result that is not an error but is worth flagging
// ("No matches found").
func warnResult(text string, details []byte) engine.ToolResult {
	r := textResult(text, details)
	r.IsWarning = true
	return r
}

// decodeArgs unmarshals a call's arguments. The loop validates them
// against the schema first, so a failure here means a type the schema let
// through; the text names the tool so the model can correct the call.
func decodeArgs(tool string, raw []byte, v any) (engine.ToolResult, bool) {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return failResult(fmt.Sprintf("Invalid %s arguments: %s", tool, strings.TrimPrefix(err.Error(), "json: "))), false
	}
	return engine.ToolResult{}, true
}

// mustJSON marshals details; they are built from plain structs, so an error
// is a programming mistake and falls back to an empty object.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}

// resolveCwd resolves p against cwd, expanding a leading ~.
func resolveCwd(cwd, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// displayPath is how a path is shown to the model: relative to cwd when it
// is inside it (so transcripts do not depend on where the session runs),
// absolute otherwise.
func displayPath(cwd, abs string) string {
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// jsLength is the length of s in UTF-16 code units, which is what the
// original reports as "bytes" in write's result (JavaScript string length).
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		if r == utf8.RuneError {
			n++
			continue
		}
		n += utf16.RuneLen(r)
	}
	return n
}

// isBinary reports whether data looks binary: a NUL byte in its first 8 KB,
// the heuristic git and ripgrep use.
func isBinary(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	for _, b := range head {
		if b == 0 {
			return true
		}
	}
	return false
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// errNotFound reports whether err is a missing-file error.
func errNotFound(err error) bool { return errors.Is(err, os.ErrNotExist) }
