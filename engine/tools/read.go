package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// read limits (agent-core.md §4.2, §14).
const (
	readDefaultLimit    = 300
	readDirDefaultLimit = 500
	suffixMatchTimeout  = 5 * time.Second
	suffixMatchMaxFiles = 200000
	// readCountLimit bounds the bytes counted after the window for the
	// "of <total>" notice; past it the total is a lower bound ("of at
	// least <n>"). Either way the model learns that more lines follow and
	// where to continue; counting further only sharpens a number it
	// rarely needs, at the cost of reading the file. 32 MiB (about 400k
	// lines of a log) costs tens of milliseconds from the page cache and
	// a fraction of a second from disk; it was 256 MiB, which a read near
	// the start of a multi-GB log paid in full on every call.
	readCountLimit = 32 << 20
)

type readTool struct {
	spec
	o Options
	// countLimit is readCountLimit, smaller in tests that must not scan
	// tens of MiB to see the cap.
	countLimit int
}

// NewRead returns the read tool: a window of a text file (300 lines by
// default, at most 3000 lines and 50 KB per call) or a directory listing.
func NewRead(o Options) engine.Tool {
	return &readTool{spec: readSpec, o: o, countLimit: readCountLimit}
}

var readSpec = spec{
	name:        "read",
	concurrency: engine.Shared,
	idempotent:  true,
	description: "Read a text file or list a directory. Returns up to 300 lines by default (at most 3000 lines or 50KB per call); " +
		"use offset (1-based line) and limit to page through larger files. A directory path lists its entries, " +
		"directories with a trailing slash, each with its age.",
	schema: []byte(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Path of the file or directory to read"},` +
		`"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based, default 1)"},` +
		`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines (entries for a directory) to return"}` +
		`},"required":["path"],"additionalProperties":false}`),
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type readDetails struct {
	Path       string `json:"path"`
	Kind       string `json:"kind"` // file, directory or binary
	TotalLines int    `json:"totalLines,omitempty"`
	StartLine  int    `json:"startLine,omitempty"`
	EndLine    int    `json:"endLine,omitempty"`
	Entries    int    `json:"entries,omitempty"`
	Truncated  bool   `json:"truncated"`
	// TotalLinesCapped says counting stopped after the count limit
	// (readCountLimit) past the window: TotalLines is then a lower bound.
	TotalLinesCapped bool   `json:"totalLinesCapped,omitempty"`
	ResolvedVia      string `json:"resolvedVia,omitempty"`
}

func (t *readTool) Run(ctx context.Context, call engine.ToolCall, _ func(engine.ToolResult)) (engine.ToolResult, error) {
	var a readArgs
	if r, ok := decodeArgs("read", call.Arguments, &a); !ok {
		return r, nil
	}
	if strings.TrimSpace(a.Path) == "" {
		return failResult("Path must not be empty"), nil
	}
	if a.Offset < 0 || a.Limit < 0 {
		return failResult("Offset and limit must be positive numbers"), nil
	}
	abs := resolveCwd(t.o.Cwd, a.Path)
	prefix := ""
	via := ""
	fi, err := os.Stat(abs)
	if errNotFound(err) {
		found, ok := suffixMatch(ctx, t.o.Cwd, a.Path)
		if !ok {
			return failResult(fmt.Sprintf("Path '%s' not found", a.Path)), nil
		}
		abs = found
		via = displayPath(t.o.Cwd, found)
		prefix = fmt.Sprintf("[Path '%s' not found; resolved to '%s' via suffix match]\n", a.Path, via)
		fi, err = os.Stat(abs)
	}
	if err == nil {
		err = checkPath(abs, fi, true)
	}
	if err != nil {
		return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, describeFSError(err))), nil
	}
	shown := displayPath(t.o.Cwd, abs)
	if fi.IsDir() {
		text, d := t.listDir(abs, a.Limit)
		d.Path, d.ResolvedVia = shown, via
		if text == "" {
			return failResult(fmt.Sprintf("Cannot read directory %s", a.Path)), nil
		}
		return textResult(prefix+text, mustJSON(d)), nil
	}
	var src io.Reader
	if t.o.Editor != nil {
		// The editor's buffer, which may hold unsaved changes.
		content, err := t.o.Editor.ReadText(ctx, abs)
		if isCancel(err) {
			return engine.ToolResult{}, err
		}
		if err != nil {
			return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, err.Error())), nil
		}
		src = strings.NewReader(content)
		fi = nil
	} else {
		f, ffi, err := openRegular(abs)
		if err != nil {
			return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, describeFSError(err))), nil
		}
		defer f.Close()
		src, fi = f, ffi
	}
	text, d, err := readWindow(ctx, src, a.Offset, a.Limit, t.countLimit)
	if isCancel(err) {
		return engine.ToolResult{}, err
	}
	if err != nil {
		return failResult(fmt.Sprintf("Cannot read %s: %s", a.Path, describeFSError(err))), nil
	}
	d.Path, d.ResolvedVia = shown, via
	if d.Kind == "binary" {
		size := 0
		if fi != nil {
			size = int(fi.Size())
		}
		return textResult(fmt.Sprintf("%s[%s is a binary file (%s); its content is not shown]", prefix, shown, FormatSize(size)), mustJSON(d)), nil
	}
	return textResult(prefix+text, mustJSON(d)), nil
}

// readWindow streams lines [offset, offset+limit) of r within the line
// and byte caps and appends the continuation notice. Memory stays within
// one buffer and the window whatever the file's size: binary detection
// looks at a prefix only, lines before the window are counted and
// dropped, and an over-long line keeps only its preview. After the window
// the lines are counted for the notice, up to countLimit more bytes;
// beyond that the total is reported as a lower bound.
func readWindow(ctx context.Context, r io.Reader, offset, limit, countLimit int) (string, readDetails, error) {
	d := readDetails{Kind: "file"}
	br := bufio.NewReaderSize(newCtxReader(ctx, r), readChunk)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF {
		return "", d, err
	}
	if isBinary(head) {
		return "", readDetails{Kind: "binary"}, nil
	}
	if bytes.HasPrefix(head, []byte("\uFEFF")) {
		br.Discard(len("\uFEFF"))
	}
	start := max(offset, 1)
	if limit <= 0 {
		limit = readDefaultLimit
	}
	end := start + min(limit, DefaultMaxLines) - 1 // inclusive

	var (
		b       strings.Builder
		lr      lineReader
		total   int  // lines seen so far
		last    int  // last line added to b
		closed  bool // the window is complete; lines are only counted
		byBytes bool
		capped  bool // counting stopped at countLimit
		counted int  // bytes counted after the window closed
		preview string
		longLen int // length of the over-long first line, when preview is set
	)
	last = start - 1
	for {
		keep := 0
		if !closed && total+1 >= start {
			keep = DefaultMaxBytes + 1 // enough to tell an over-long line and cut its preview
		}
		budget := -1
		if closed {
			budget = countLimit - counted
		}
		line, n, ok, cut, err := lr.nextWithin(br, keep, budget)
		if err != nil {
			return "", d, err
		}
		if cut {
			// Counted up to the limit in the middle of a line: it is one
			// more line, and more may follow.
			total++
			capped = true
			break
		}
		if !ok {
			break
		}
		total++
		switch {
		case total < start:
		case closed:
			if counted += n + 1; counted > countLimit {
				capped = true
			}
		case total == start && n > DefaultMaxBytes:
			preview, longLen, closed = cutUTF8(string(line), DefaultMaxBytes), n, true
		default:
			add := n
			if total > start {
				add++
			}
			if b.Len()+add > DefaultMaxBytes {
				byBytes, closed = true, true
				continue
			}
			if total > start {
				b.WriteByte('\n')
			}
			b.Write(line)
			last = total
			closed = total == end
		}
		if capped {
			break
		}
	}
	if total == 0 {
		return "The file is empty.", d, nil
	}
	d.TotalLines, d.TotalLinesCapped = total, capped
	of := fmt.Sprint(total)
	if capped {
		of = fmt.Sprintf("at least %d", total)
	}
	if start > total {
		return fmt.Sprintf("Line %d is beyond end of file (%d lines total). Use offset=1 to read from the start, or offset=%d to read the last line.", start, total, total), d, nil
	}
	if longLen > 0 {
		d.StartLine, d.EndLine, d.Truncated = start, start, true
		next := ""
		if start < total || capped {
			next = fmt.Sprintf(" Use offset=%d to continue.", start+1)
		}
		return fmt.Sprintf("%s\n\n[Line %d is %s, over the %s limit; showing its first %s.%s]",
			preview, start, FormatSize(longLen), FormatSize(DefaultMaxBytes), FormatSize(len(preview)), next), d, nil
	}
	d.StartLine, d.EndLine = start, last
	if last < total || capped {
		d.Truncated = true
		limitNote := ""
		if byBytes {
			limitNote = fmt.Sprintf(" (%s limit)", FormatSize(DefaultMaxBytes))
		}
		fmt.Fprintf(&b, "\n\n[Showing lines %d-%d of %s%s. Use offset=%d to continue]", start, last, of, limitNote, last+1)
	}
	return b.String(), d, nil
}

// lineReader splits a stream into lines with a bounded buffer: a line
// longer than the caller keeps is measured, not stored.
type lineReader struct{ buf []byte }

// next reads one line and returns at most keep bytes of it (without its
// "\n" and a final "\r", as read shows lines), its full length, and false
// at the end of the stream. The returned slice is valid until the next call.
func (lr *lineReader) next(br *bufio.Reader, keep int) ([]byte, int, bool, error) {
	line, n, ok, _, err := lr.nextWithin(br, keep, -1)
	return line, n, ok, err
}

// nextWithin is next that stops after consuming budget bytes (no limit
// when negative) and then reports cut: the line goes on, its length is
// not known.
func (lr *lineReader) nextWithin(br *bufio.Reader, keep, budget int) (line []byte, n int, ok, cut bool, err error) {
	lr.buf = lr.buf[:0]
	var lastByte byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			ok = true
		}
		done := err == nil
		if done {
			frag = frag[:len(frag)-1]
		}
		if len(frag) > 0 {
			lastByte = frag[len(frag)-1]
		}
		if room := keep - len(lr.buf); room > 0 {
			lr.buf = append(lr.buf, frag[:min(room, len(frag))]...)
		}
		n += len(frag)
		switch {
		case done:
		case err == bufio.ErrBufferFull:
			if budget >= 0 && n > budget {
				return lr.buf, n, true, true, nil
			}
			continue
		case err == io.EOF:
		default:
			return nil, 0, false, false, err
		}
		break
	}
	if lastByte == '\r' {
		if len(lr.buf) == n {
			lr.buf = lr.buf[:n-1]
		}
		n--
	}
	return lr.buf, n, ok, false, nil
}

// listDir renders a directory: entries sorted case-insensitively, "name/"
// for directories, each with its age. It returns "" when the directory
// cannot be read.
func (t *readTool) listDir(abs string, limit int) (string, readDetails) {
	d := readDetails{Kind: "directory"}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", d
	}
	if len(entries) == 0 {
		return "(empty directory)", d
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := strings.ToLower(entries[i].Name()), strings.ToLower(entries[j].Name())
		if a != b {
			return a < b
		}
		return entries[i].Name() < entries[j].Name()
	})
	if limit <= 0 {
		limit = readDirDefaultLimit
	}
	now := t.o.now()
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if n == limit {
			break
		}
		name := e.Name()
		info, err := os.Stat(filepath.Join(abs, name)) // follow symlinks: a link to a directory lists as one
		if err == nil && info.IsDir() {
			name += "/"
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name)
		if err == nil {
			b.WriteString(" (" + formatAge(now.Sub(info.ModTime())) + ")")
		}
		n++
	}
	d.Entries = len(entries)
	if n < len(entries) {
		d.Truncated = true
		fmt.Fprintf(&b, "\n\n[%d results limit reached. Use limit=%d for more]", n, len(entries))
	}
	return b.String(), d
}

// formatAge renders an age the way the original's listings do.
func formatAge(age time.Duration) string {
	switch {
	case age < time.Minute:
		return "just now"
	case age < time.Hour:
		return fmt.Sprintf("%dm ago", int(age/time.Minute))
	case age < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(age/time.Hour))
	case age < 7*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(age/(24*time.Hour)))
	case age < 30*24*time.Hour:
		return fmt.Sprintf("%dw ago", int(age/(7*24*time.Hour)))
	case age < 365*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(age/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy ago", int(age/(365*24*time.Hour)))
}

// errAmbiguous stops a suffix-match walk at the second candidate.
var errAmbiguous = errors.New("ambiguous suffix match")

// suffixMatch looks for the one file under cwd whose path ends with p (a
// model often drops a leading directory). Two candidates, or a walk that
// runs past its time or size budget, mean no match: guessing between files
// would read the wrong one.
func suffixMatch(ctx context.Context, cwd, p string) (string, bool) {
	p = filepath.ToSlash(filepath.Clean(p))
	if filepath.IsAbs(p) || strings.HasPrefix(p, "../") || p == "." || p == ".." {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, suffixMatchTimeout)
	defer cancel()
	found := ""
	seen := 0
	err := walkFiles(ctx, cwd, true, true, func(path string, _ fs.DirEntry) error {
		seen++
		if seen > suffixMatchMaxFiles {
			return errAmbiguous
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, cwd+string(filepath.Separator)))
		if rel == p || strings.HasSuffix(rel, "/"+p) {
			if found != "" {
				return errAmbiguous
			}
			found = path
		}
		return nil
	})
	if err != nil || found == "" {
		return "", false
	}
	return found, true
}

// describeFSError turns an os error into a short reason without the
// operation or the path (engine/safefile's wording).
func describeFSError(err error) string { return safefile.Describe(err) }
