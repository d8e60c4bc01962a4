package fakeprovider

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"word", []string{"word"}},
		{"Hello there world", []string{"Hello ", "there ", "world"}},
		{"trailing ", []string{"trailing "}},
		{" lead", []string{" ", "lead"}},
		{"a  b", []string{"a ", " ", "b"}},
		{"line\nbreak ok", []string{"line\nbreak ", "ok"}},
		{"héllo wörld ✓", []string{"héllo ", "wörld ", "✓"}},
	}
	for _, tt := range tests {
		if got := splitWords(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"{}", []string{"{}"}},
		{"0123456789abcdef", []string{"0123456789abcdef"}},
		{"0123456789abcdefg", []string{"0123456789abcdef", "g"}},
		// é is 2 bytes: 8 fit exactly.
		{strings.Repeat("é", 9), []string{strings.Repeat("é", 8), "é"}},
		// € is 3 bytes: 5 fit (15 bytes), the 6th would straddle byte 16.
		{strings.Repeat("€", 6), []string{strings.Repeat("€", 5), "€"}},
		// 🙂 is 4 bytes: the piece before it stops short.
		{"0123456789abcd🙂x", []string{"0123456789abcd", "🙂x"}},
	}
	for _, tt := range tests {
		if got := splitBytes(tt.in, argPiece); !slices.Equal(got, tt.want) {
			t.Errorf("splitBytes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSplitBytesProperties checks every cut of mixed-width text: pieces are
// at most 16 bytes, valid UTF-8, non-empty, and join back to the input.
func TestSplitBytesProperties(t *testing.T) {
	t.Parallel()
	const alphabet = "a\"é€🙂\\"
	var b strings.Builder
	for i := 0; i < 200; i++ {
		r := []rune(alphabet)[i*7%len([]rune(alphabet))]
		b.WriteRune(r)
		s := b.String()
		pieces := splitBytes(s, argPiece)
		for _, p := range pieces {
			if len(p) == 0 || len(p) > argPiece || !utf8.ValidString(p) {
				t.Fatalf("splitBytes(%q): bad piece %q", s, p)
			}
		}
		if strings.Join(pieces, "") != s {
			t.Fatalf("splitBytes(%q) does not join back: %q", s, pieces)
		}
	}
}
