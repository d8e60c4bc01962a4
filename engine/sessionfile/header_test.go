package sessionfile

import (
	"errors"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		// new session
		`{"type":"session","version":3,"id":"1b2c3d4e5f607182","timestamp":"2026-07-02T18:38:56.123Z","cwd":"/home/u/code/pi"}`,
		// new session with a parent, named later (title keys added last)
		`{"type":"session","version":3,"id":"1b2c3d4e5f607182","timestamp":"2026-07-02T18:38:56.123Z","cwd":"/srv/pi","parentSession":"/s/old.jsonl","title":"Fix the parser","titleSource":"user"}`,
		// forked (title keys after id)
		`{"type":"session","version":3,"id":"1b2c3d4e5f607182","title":"T","titleSource":"auto","timestamp":"2026-07-02T18:38:56.123Z","cwd":"/srv/pi","parentSession":"0123456789abcdef"}`,
		// v1, unknown key
		`{"type":"session","id":"x","timestamp":"2026-07-02T18:38:56Z","cwd":"/","future":{"a":[1]}}`,
	} {
		h, err := DecodeHeader([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if got := string(h.AppendJSON(nil)); got != line {
			t.Errorf("round trip:\n got %s\nwant %s", got, line)
		}
	}
}

func TestHeaderNew(t *testing.T) {
	t.Parallel()
	h := Header{Version: 3, ID: "00000000000000ab", Timestamp: t0, Cwd: "/w"}
	want := `{"type":"session","version":3,"id":"00000000000000ab","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`
	if got := string(h.AppendJSON(nil)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	h.Title, h.TitleSource, h.ParentSession = "T", "user", "p"
	want = `{"type":"session","version":3,"id":"00000000000000ab","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","parentSession":"p","title":"T","titleSource":"user"}`
	if got := string(h.AppendJSON(nil)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// A title set on a decoded header without one goes at the end.
	d, _ := DecodeHeader([]byte(`{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}`))
	d.Title, d.TitleSource = "N", "user"
	want = `{"type":"session","version":3,"id":"a","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","title":"N","titleSource":"user"}`
	if got := string(d.AppendJSON(nil)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestHeaderInvalid(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		``, `[]`, `{"type":"message","id":"a"}`, `{"type":"session"}`, `{"type":"session","id":1}`,
		`{"type":"session","id":"a"`, `{"type":"session","id":"a"} x`,
	} {
		if _, err := DecodeHeader([]byte(line)); !errors.Is(err, ErrNotSession) {
			t.Errorf("DecodeHeader(%q) = %v, want ErrNotSession", line, err)
		}
	}
}
