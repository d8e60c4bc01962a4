package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// numbered is "line 1\n" … "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestFormatAge(t *testing.T) {
	t.Parallel()
	for age, want := range map[time.Duration]string{
		10 * time.Second: "just now", 5 * time.Minute: "5m ago", 2 * time.Hour: "2h ago",
		3 * 24 * time.Hour: "3d ago", 14 * 24 * time.Hour: "2w ago", 60 * 24 * time.Hour: "2mo ago",
		800 * 24 * time.Hour: "2y ago",
	} {
		if got := formatAge(age); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", age, got, want)
		}
	}
}
