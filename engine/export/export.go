// Package export renders a session as one self-contained HTML page, the
// output of the RPC export_html command (agent-core.md §12).
//
// The original ships a client-side renderer and embeds the session as
// base64 JSON; this package renders on the server side instead, so the page
// is readable with JavaScript disabled, fetches nothing, and every piece of
// session content goes through html/template's contextual escaping. Nothing
// here builds markup from content by concatenation or marks content as
// trusted HTML; the only trusted values are the package's own script and
// image data: URLs whose MIME type and base64 alphabet were checked.
package export

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Tool is one tool offered to the model, as listed on the page.
type Tool struct {
	Name        string
	Description string
}

// Data is what a page shows: the session header, the whole entry tree, the
// current leaf, and the system prompt and tools in effect.
type Data struct {
	SessionID   string
	SessionFile string
	Title       string
	Cwd         string
	Created     int64 // Unix milliseconds; 0 leaves the date out
	// Entries are all entries of the session, every branch, in file order.
	Entries []*engine.Entry
	// Leaf is the id of the current leaf. The conversation shown is the
	// branch from the root to it; "" is before the first entry, so nothing
	// is on the branch (the engine's meaning of an empty leaf).
	Leaf         string
	SystemPrompt string
	Tools        []Tool
}

// WriteHTML writes the page for d to w. It streams: the conversation is
// rendered entry by entry into a buffered writer, so a large session is
// never held as one string. It fails with engine.ErrNoEntry when d.Leaf
// names no entry, and with the writer's error when a write fails.
func WriteHTML(w io.Writer, d Data) error {
	p, err := newPage(&d)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTemplate().Execute(bw, p); err != nil {
		return fmt.Errorf("export html: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export html: %w", err)
	}
	return nil
}

// WriteFile writes the page for d to path under engine/safefile's rule
// for files the agent writes: missing parent directories are created; a
// FIFO, a device, a directory, a socket or one of the agent's own standard
// streams (/dev/stdout, /proc/self/fd/1, a file its stdout is redirected
// to: HTML there would corrupt the protocol stream) is refused; a symlink
// is followed to its target, a hard-linked file is rewritten in place, a
// read-only file stays refused. The page is written to a temporary file
// and renamed over the old one, so a failed export leaves the old page; a
// new file is created 0600 (a page holds the whole session). An error
// reads "<path>: <reason>".
func WriteFile(path string, d Data) error {
	return safefile.WriteFile(path, 0o600, func(w io.Writer) error { return WriteHTML(w, d) })
}

// DefaultPath is the file name export_html writes when the host gives no
// outputPath: xcsh-session-<session file base name without .jsonl>.html.
// It is relative on purpose; the original resolves it against the process
// cwd, not the session directory (agent-core.md §12).
func DefaultPath(sessionFile string) string {
	base := strings.TrimSuffix(filepath.Base(sessionFile), ".jsonl")
	return "xcsh-session-" + base + ".html"
}
