package replay

import (
	"fmt"
	"strings"
)

// The unified diff of two transcripts. Ours, not a library's: the suite's
// goldie diff lives in a test dependency, and transcripts are small enough
// for a longest-common-subsequence table once their common head and tail
// are set aside.

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxDiffCells bounds the LCS table; past it the differing middle is shown
// as removed, then added.
const maxDiffCells = 4 << 20

// maxDiffLine clips each line of the diff: a frame can be tens of KiB.
const maxDiffLine = 1000

type diffOp struct {
	kind byte // ' ', '-', '+'
	a, b int  // line index in want, in got (of the line itself, or where it would be)
}

// unifiedDiff returns the unified diff of want and got (lines without
// "\n"), labelled, or "" when they are equal. Line numbers count from 1.
func unifiedDiff(wantLabel, gotLabel string, want, got []string) string {
	ops := diffLines(want, got)
	changed := false
	for _, op := range ops {
		if op.kind != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", wantLabel, gotLabel)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from diffContext lines before this change to diffContext
		// lines after the last change closer than 2*diffContext to the
		// previous one.
		start := max(0, i-diffContext)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*diffContext {
				break
			}
		}
		end = min(len(ops), end+diffContext+1)
		aStart, bStart, aN, bN := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:end] {
			line := ""
			switch op.kind {
			case '+':
				line = got[op.b]
			default:
				line = want[op.a]
			}
			fmt.Fprintf(&b, "%c%s\n", op.kind, clip(line, maxDiffLine))
		}
		i = end
	}
	return b.String()
}

// hunkRange is a unified diff range: the first line (from 1) and count;
// an empty range names the line before it.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffLines returns the edit script from want to got.
func diffLines(want, got []string) []diffOp {
	var ops []diffOp
	// The common head.
	p := 0
	for p < len(want) && p < len(got) && want[p] == got[p] {
		ops = append(ops, diffOp{' ', p, p})
		p++
	}
	// The common tail.
	s := 0
	for s < len(want)-p && s < len(got)-p && want[len(want)-1-s] == got[len(got)-1-s] {
		s++
	}
	a, b := want[p:len(want)-s], got[p:len(got)-s]
	ops = append(ops, lcsOps(a, b, p, p)...)
	for k := s; k > 0; k-- {
		ops = append(ops, diffOp{' ', len(want) - k, len(got) - k})
	}
	return ops
}

// lcsOps diffs a and b (offsets oa, ob in the whole) through the longest
// common subsequence, removals before additions in each run.
func lcsOps(a, b []string, oa, ob int) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > maxDiffCells {
		for i := range a {
			ops = append(ops, diffOp{'-', oa + i, ob})
		}
		for j := range b {
			ops = append(ops, diffOp{'+', oa + len(a), ob + j})
		}
		return ops
	}
	// l[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	l := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			} else {
				l[i*w+j] = max(l[(i+1)*w+j], l[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', oa + i, ob + j})
			i, j = i+1, j+1
		case j >= len(b) || (i < len(a) && l[(i+1)*w+j] >= l[i*w+j+1]):
			ops = append(ops, diffOp{'-', oa + i, ob + j})
			i++
		default:
			ops = append(ops, diffOp{'+', oa + i, ob + j})
			j++
		}
	}
	return ops
}
