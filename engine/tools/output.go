package tools

import (
	"fmt"
	"strings"
)

// Output limits shared by the tools (agent-core.md §14).
const (
	DefaultMaxLines = 3000
	DefaultMaxBytes = 50 * 1024
	GrepMaxColumn   = 1024
)

// FormatSize renders a byte count as the original does: <n>B, <x.x>KB,
// <x.x>MB, <x.x>GB (1024-based).
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1fGB", float64(n)/(1024*1024*1024))
}

// CountLines counts lines as the original's output meta does: the number of
// newlines plus one, or 0 for empty text.
func CountLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// Truncation describes a cut made to fit the output limits.
type Truncation struct {
	Truncated   bool
	ByBytes     bool // the byte limit (not the line limit) decided the cut
	TotalLines  int
	StartLine   int // first kept line, 1-based
	EndLine     int // last kept line, 1-based
	OutputBytes int
}

// TruncateTail keeps the last maxLines lines and at most maxBytes bytes of
// s (whole lines when possible; a single over-long last line keeps its
// tail), for command output where the end matters most.
func TruncateTail(s string, maxLines, maxBytes int) (string, Truncation) {
	lines := strings.Split(s, "\n")
	t := Truncation{TotalLines: len(lines), StartLine: 1, EndLine: len(lines)}
	if len(lines) <= maxLines && len(s) <= maxBytes {
		t.OutputBytes = len(s)
		return s, t
	}
	t.Truncated = true
	start := len(lines) - maxLines
	if start < 0 {
		start = 0
	}
	size := 0
	i := len(lines) - 1
	for ; i >= start; i-- {
		add := len(lines[i])
		if i < len(lines)-1 {
			add++ // the newline after this line
		}
		if size+add > maxBytes {
			t.ByBytes = true
			break
		}
		size += add
	}
	first := i + 1
	if first > len(lines)-1 {
		// Even the last line alone is too long: keep its tail.
		last := lines[len(lines)-1]
		cut := last[len(last)-maxBytes:]
		for len(cut) > 0 && cut[0]&0xC0 == 0x80 {
			cut = cut[1:] // do not start inside a UTF-8 sequence
		}
		t.ByBytes = true
		t.StartLine, t.EndLine, t.OutputBytes = len(lines), len(lines), len(cut)
		return cut, t
	}
	out := strings.Join(lines[first:], "\n")
	t.StartLine, t.EndLine, t.OutputBytes = first+1, len(lines), len(out)
	return out, t
}

// TailNotice is the notice appended after tail-truncated output, e.g.
// "[Showing lines 1201-3000 of 3000 (50.0KB limit)]".
func TailNotice(t Truncation, maxBytes int) string {
	n := fmt.Sprintf("[Showing lines %d-%d of %d", t.StartLine, t.EndLine, t.TotalLines)
	if t.ByBytes {
		n += fmt.Sprintf(" (%s limit)", FormatSize(maxBytes))
	}
	return n + "]"
}
