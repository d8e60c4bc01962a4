package rpctest

// Frames: the line framing of a live process's stdout, the frames command
// over JSONL files, and the escape syntax of rpc sendraw.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/gjson"
)

// scriptFrame is one line of a process's stdout, without its "\n".
type scriptFrame struct {
	line    []byte
	json    bool // the line is valid JSON; other lines are kept so failures show them
	partial bool // stdout ended after this line without a "\n"
}

// matches applies a gjson query to the frame wrapped in a one-element array,
// so queries read `#(type=="ready")`. Lines that are not JSON never match:
// gjson's answer on invalid input is unspecified.
func (f scriptFrame) matches(query string) bool {
	if !f.json {
		return false
	}
	return gjson.Get("["+string(f.line)+"]", query).Exists()
}

// checkQuery refuses a gjson query that is true of every frame: chaining
// two filters as `#(a)#(b)` does not mean "a and b" in gjson (it always
// matches), which once made assertions vacuous. Pipe them: `#(a)#|#(b)`.
func checkQuery(ts *testscript.TestScript, query string) {
	if strings.Contains(query, ")#(") {
		ts.Fatalf("query %q: `#(a)#(b)` matches everything in gjson; write `#(a)#|#(b)`", query)
	}
}

// frameLog is the io.Writer given to exec as a process's stdout. It keeps
// the raw bytes (for rpc close) and the complete lines as frames, and wakes
// waiters by closing and replacing changed whenever it grows. It accepts
// any chunking of the input and has no line length limit.
type frameLog struct {
	mu      sync.Mutex // guards every field below
	raw     []byte
	pending []byte // bytes after the last "\n"
	frames  []scriptFrame
	changed chan struct{}
	done    bool // finish was called; nothing more will arrive
}

func newFrameLog() *frameLog {
	return &frameLog{changed: make(chan struct{})}
}

func (l *frameLog) Write(p []byte) (int, error) {
	n := len(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw = append(l.raw, p...)
	grew := false
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.pending = append(l.pending, p...)
			break
		}
		// Copy: frames outlive p and pending is reused.
		line := append(append([]byte(nil), l.pending...), p[:i]...)
		l.pending = l.pending[:0]
		l.frames = append(l.frames, scriptFrame{line: line, json: json.Valid(line)})
		p = p[i+1:]
		grew = true
	}
	if grew {
		l.signal()
	}
	return n, nil
}

// finish records the end of stdout; an unterminated last line becomes a
// frame flagged partial.
func (l *frameLog) finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) > 0 {
		line := append([]byte(nil), l.pending...)
		l.frames = append(l.frames, scriptFrame{line: line, json: json.Valid(line), partial: true})
		l.pending = nil
	}
	l.done = true
	l.signal()
}

// signal must be called with mu held.
func (l *frameLog) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// snapshot returns the frames so far, whether the log is finished, and a
// channel closed at the next change. The slice may be read without the
// lock: elements are never modified once appended.
func (l *frameLog) snapshot() ([]scriptFrame, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.frames[:len(l.frames):len(l.frames)], l.done, l.changed
}

func (l *frameLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.raw...)
}

const framesUsage = `usage:
	[!] frames file 'gjson query' [N | <N | >N]
	[!] frames file lines N
	[!] frames file valid`

// scriptFrames implements the frames command: assertions over a JSONL file
// (or over stdout/stderr of the last command, as testscript names them).
func scriptFrames(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("%s", framesUsage)
	}
	file := args[0]
	lines := jsonlLines(ts.ReadFile(file))
	switch args[1] {
	case "lines":
		if len(args) != 3 {
			ts.Fatalf("usage: [!] frames file lines N")
		}
		n, err := strconv.Atoi(args[2])
		if err != nil {
			ts.Fatalf("frames: bad line count %q", args[2])
		}
		if (len(lines) == n) == neg {
			ts.Fatalf("frames: %s has %d lines, want %s%d", file, len(lines), notIf(neg), n)
		}
	case "valid":
		if len(args) != 2 {
			ts.Fatalf("usage: [!] frames file valid")
		}
		problems := invalidLines(ts.ReadFile(file))
		if neg && len(problems) == 0 {
			ts.Fatalf("frames: every line of %s is a JSON object, want some that are not", file)
		}
		if !neg && len(problems) > 0 {
			ts.Fatalf("frames: %s is not one JSON object per line:\n%s", file, strings.Join(problems, "\n"))
		}
	default:
		query := args[1]
		checkQuery(ts, query)
		for i, l := range lines {
			if !json.Valid([]byte(l)) {
				ts.Fatalf("frames: %s line %d is not JSON, so queries over it mean nothing: %s\n(assert framing with: ! frames %s valid)", file, i+1, clipFrame([]byte(l)), file)
			}
		}
		all := "[" + strings.Join(lines, ",") + "]"
		res := gjson.Get(all, query)
		if len(args) == 2 {
			if res.Exists() == neg {
				ts.Fatalf("frames: query %s over %s: %s, want %s", query, file, describeResult(res), map[bool]string{false: "a match", true: "no match"}[neg])
			}
			return
		}
		// A count, or a bound: <N, >N (for what depends on timing, such
		// as how many frames a slow host's backlog merged).
		op, num := "", args[2]
		if num != "" && (num[0] == '<' || num[0] == '>') {
			op, num = num[:1], num[1:]
		}
		want, err := strconv.Atoi(num)
		if err != nil {
			ts.Fatalf("frames: bad count %q (want N, <N or >N)", args[2])
		}
		got, ok := resultCount(res)
		if !ok {
			ts.Fatalf("frames: query %s over %s gives %s, which is not a count (use #(...)# to collect every match, or #(...)#|# to count them)", query, file, describeResult(res))
		}
		holds := got == want
		switch op {
		case "<":
			holds = got < want
		case ">":
			holds = got > want
		}
		if holds == neg {
			ts.Fatalf("frames: query %s over %s counts %d, want %s%s%d", query, file, got, notIf(neg), op, want)
		}
	}
}

func notIf(neg bool) string {
	if neg {
		return "not "
	}
	return ""
}

// resultCount reads a query result as a count: an array counts its
// elements, a number is itself, nothing at all is zero.
func resultCount(r gjson.Result) (int, bool) {
	switch {
	case !r.Exists():
		return 0, true
	case r.IsArray():
		return len(r.Array()), true
	case r.Type == gjson.Number && r.Num == float64(int(r.Num)):
		return int(r.Num), true
	}
	return 0, false
}

func describeResult(r gjson.Result) string {
	if !r.Exists() {
		return "nothing"
	}
	return clipFrame([]byte(r.Raw))
}

// jsonlLines splits JSONL text into lines; a final line without "\n" still
// counts, so truncated output is visible to `frames f lines N`.
func jsonlLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// invalidLines lists the ways s departs from strict JSONL: one JSON object
// per line, "\n" line ends (no CR), a "\n" after the last line.
func invalidLines(s string) []string {
	var problems []string
	lines := jsonlLines(s)
	for i, l := range lines {
		var why string
		switch {
		case strings.HasSuffix(l, "\r"):
			why = "ends with CR"
		case !json.Valid([]byte(l)):
			why = "not JSON"
		case !gjson.Parse(l).IsObject():
			why = "not a JSON object"
		}
		if why != "" {
			problems = append(problems, fmt.Sprintf("line %d: %s: %s", i+1, why, clipFrame([]byte(l))))
		}
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		problems = append(problems, fmt.Sprintf("line %d: no trailing newline", len(lines)))
	}
	return problems
}

// unescapeGo interprets the escapes of a Go string literal in s (\n, \r, \t,
// \\, \", \', \xNN, \NNN, \uNNNN, \UNNNNNNNN). \xNN and octal escapes give
// single bytes, so scripts can send invalid UTF-8; other bytes are kept as
// they are.
func unescapeGo(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			out = append(out, s...)
			break
		}
		out, s = append(out, s[:i]...), s[i:]
		// UnquoteChar with no quote context rejects both escaped quotes;
		// accept them, since a script may need either.
		if len(s) >= 2 && (s[1] == '"' || s[1] == '\'') {
			out, s = append(out, s[1]), s[2:]
			continue
		}
		v, multibyte, tail, err := strconv.UnquoteChar(s, 0)
		if err != nil {
			bad := s
			if len(bad) > 10 {
				bad = bad[:10]
			}
			return nil, fmt.Errorf("bad escape at %q: %v", bad, err)
		}
		if multibyte {
			out = utf8.AppendRune(out, v)
		} else {
			out = append(out, byte(v))
		}
		s = tail
	}
	return out, nil
}
