package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The suite's replay transcripts (golden/replay/, written by rpc replay)
// read, and their frames are the golden of the same scenario byte for
// byte: a hand edit of either, or a scenario refreshed without the other,
// fails here.
func TestGoldenTranscriptsMatchTheirGoldens(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "golden", "replay", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d replay transcripts in golden/replay: the suite writes them (rpc replay)", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := Read(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			if err := tr.Encode(&again); err != nil || !bytes.Equal(again.Bytes(), b) {
				t.Errorf("the transcript does not encode back to its file (%v)", err)
			}
			golden, err := os.ReadFile(filepath.Join("..", "..", "golden", name+".jsonl"))
			if err != nil {
				t.Fatalf("%v: a replay transcript has the name of its scenario's golden", err)
			}
			if got := tr.Outputs(); !bytes.Equal(got, golden) {
				t.Errorf("its frames differ from golden/%s.jsonl:\n%s", name,
					unifiedDiff("golden/"+name+".jsonl", "golden/replay/"+name+".jsonl", strings.Split(string(golden), "\n"), strings.Split(string(got), "\n")))
			}
			if n := len(tr.Entries); n == 0 || tr.Entries[n-1].Kind != Exit {
				t.Error("the transcript does not end with the exit")
			}
		})
	}
}
