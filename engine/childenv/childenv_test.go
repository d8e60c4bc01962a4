package childenv

import (
	"slices"
	"testing"
)

func TestFilterDropsNamesKeepsExtras(t *testing.T) {
	Reset()
	t.Cleanup(Reset)
	Drop("ANTHROPIC_API_KEY", "", "MY_KEY")
	base := []string{"PATH=/bin", "ANTHROPIC_API_KEY=sk-1", "MY_KEY=x", "MY_KEY_NOT=y", "NOEQUALS"}
	got := Filter(base, "MY_KEY=chosen", "TERM=dumb")
	want := []string{"PATH=/bin", "MY_KEY_NOT=y", "NOEQUALS", "MY_KEY=chosen", "TERM=dumb"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if d := Dropped(); !slices.Equal(d, []string{"ANTHROPIC_API_KEY", "MY_KEY"}) {
		t.Fatalf("dropped %q", d)
	}
}

func TestEnvironReadsTheProcessEnvironment(t *testing.T) {
	Reset()
	t.Cleanup(Reset)
	t.Setenv("XCSH_CHILDENV_TEST_KEY", "secret")
	if !slices.Contains(Environ(), "XCSH_CHILDENV_TEST_KEY=secret") {
		t.Fatal("variable missing before Drop")
	}
	Drop("XCSH_CHILDENV_TEST_KEY")
	for _, kv := range Environ() {
		if kv == "XCSH_CHILDENV_TEST_KEY=secret" {
			t.Fatal("dropped variable still there")
		}
	}
}

// Keep (--keep-key-env) turns the filter off, for names dropped before or
// after it.
func TestKeepKeepsEverything(t *testing.T) {
	Reset()
	t.Cleanup(Reset)
	Drop("A_KEY")
	Keep()
	Drop("B_KEY")
	base := []string{"A_KEY=1", "B_KEY=2", "PATH=/bin"}
	if got := Filter(base, "X=3"); !slices.Equal(got, append(base, "X=3")) {
		t.Fatalf("got %q", got)
	}
	Reset()
	Drop("A_KEY")
	if got := Filter(base); slices.Contains(got, "A_KEY=1") {
		t.Fatalf("Reset kept Keep: %q", got)
	}
}
