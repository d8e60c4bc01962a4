package fakeprovider

import "unicode/utf8"

// argPiece is the largest tool-argument delta, in bytes, when a script does
// not give argDeltas.
const argPiece = 16

// splitWords cuts s into deltas that each end just after a space (the last
// one ends where s does): "Hello there world" gives "Hello ", "there ",
// "world". Cutting only at ASCII spaces never splits a UTF-8 sequence. The
// empty string gives no deltas.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitBytes cuts s into pieces of at most n bytes without splitting a UTF-8
// sequence (a piece may be shorter so the next rune starts the next piece).
// n must be at least utf8.UTFMax.
func splitBytes(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 { // not UTF-8 at all: cut anyway rather than loop
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
