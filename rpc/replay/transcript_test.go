package replay

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const sampleTranscript = `{"xcshReplay":1,"args":["--mode","rpc"],"env":{"A":"1"},"files":{"dir/s.json":"{}\n"}}
{"out":{"type":"ready"}}
{"in":{"id":"p1", "type":"prompt"}}
{"inRaw":"not json"}
{"out":{"z":1,"a":"\u00e9<>"}}
{"close":true}
{"outRaw":"late text"}
{"exit":3}
`

// chunked feeds the same bytes whole, one line at a time and two bytes at
// a time: the result must not depend on how the reader delivers them.
func chunked(s string) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"whole":   func() io.Reader { return strings.NewReader(s) },
		"lines":   func() io.Reader { return &lineChunks{lines: strings.SplitAfter(s, "\n")} },
		"two":     func() io.Reader { return &byteChunks{b: []byte(s), n: 2} },
		"onebyte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	}
}

type lineChunks struct{ lines []string }

func (l *lineChunks) Read(p []byte) (int, error) {
	for len(l.lines) > 0 && l.lines[0] == "" {
		l.lines = l.lines[1:]
	}
	if len(l.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.lines[0])
	l.lines[0] = l.lines[0][n:]
	return n, nil
}

type byteChunks struct {
	b []byte
	n int
}

func (c *byteChunks) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}

func TestReadRoundTrip(t *testing.T) {
	t.Parallel()
	for name, r := range chunked(sampleTranscript) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr, err := Read(r())
			if err != nil {
				t.Fatal(err)
			}
			kinds := []Kind{Out, In, In, Out, Close, Out, Exit}
			if len(tr.Entries) != len(kinds) {
				t.Fatalf("%d entries, want %d", len(tr.Entries), len(kinds))
			}
			for i, k := range kinds {
				if e := tr.Entries[i]; e.Kind != k || e.Line != i+2 {
					t.Errorf("entry %d: %v at line %d, want %v at line %d", i, e.Kind, e.Line, k, i+2)
				}
			}
			// Frames are kept byte for byte: spacing and escapes as written.
			if got := string(tr.Entries[1].Frame); got != `{"id":"p1", "type":"prompt"}` {
				t.Errorf("in frame = %s", got)
			}
			if got := string(tr.Entries[3].Frame); got != `{"z":1,"a":"\u00e9<>"}` {
				t.Errorf("out frame = %s", got)
			}
			if e := tr.Entries[2]; !e.Raw || string(e.Frame) != "not json" {
				t.Errorf("inRaw = %+v", e)
			}
			if e := tr.Entries[5]; !e.Raw || e.Kind != Out || string(e.Frame) != "late text" {
				t.Errorf("outRaw = %+v", e)
			}
			if tr.Entries[6].Code != 3 || tr.Header.Env["A"] != "1" || tr.Header.Files["dir/s.json"] != "{}\n" {
				t.Errorf("header or exit lost: %+v", tr)
			}
			var b bytes.Buffer
			if err := tr.Encode(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != sampleTranscript {
				t.Errorf("Encode:\n%s\nwant\n%s", b.String(), sampleTranscript)
			}
		})
	}
}

func TestReadLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	tr, err := Read(strings.NewReader(`{"xcshReplay":1,"args":[]}` + "\n" + `{"exit":0}`))
	if err != nil || len(tr.Entries) != 1 || tr.Entries[0].Kind != Exit {
		t.Fatalf("Read = %+v, %v", tr, err)
	}
}

func TestReadRefusesMalformed(t *testing.T) {
	t.Parallel()
	const h = `{"xcshReplay":1,"args":[]}` + "\n"
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "the file is empty"},
		{"no header", `{"out":{}}` + "\n", "line 1: the header"},
		{"other version", `{"xcshReplay":2,"args":[]}` + "\n", "format version 2"},
		{"unknown header key", `{"xcshReplay":1,"argv":[]}` + "\n", "line 1: the header"},
		{"absolute file", `{"xcshReplay":1,"files":{"/etc/x":""}}` + "\n", `file "/etc/x"`},
		{"escaping file", `{"xcshReplay":1,"files":{"../x":""}}` + "\n", `file "../x"`},
		{"unclean file", `{"xcshReplay":1,"files":{"a/./b":""}}` + "\n", `file "a/./b"`},
		{"not json", h + "garbage\n", "line 2"},
		{"two kinds", h + `{"out":{},"in":{}}` + "\n", "line 2: want exactly one"},
		{"no kind", h + `{}` + "\n", "line 2: want exactly one"},
		{"unknown kind", h + `{"sleep":1}` + "\n", "line 2"},
		{"close false", h + `{"close":false}` + "\n", `"close" must be true`},
		{"input after close", h + `{"close":true}` + "\n" + `{"in":{}}` + "\n", "line 3: an input after the close"},
		{"two closes", h + `{"close":true}` + "\n" + `{"close":true}` + "\n", "line 3: a second close"},
		{"after exit", h + `{"exit":0}` + "\n" + `{"out":{}}` + "\n", "line 3: nothing may follow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Read(strings.NewReader(tt.in))
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read: %v, want ErrFormat mentioning %q", err, tt.want)
			}
		})
	}
}

func TestEncodeRefusesBadFrame(t *testing.T) {
	t.Parallel()
	tr := &Transcript{Entries: []Entry{{Kind: Out, Frame: []byte("{not json")}}}
	if err := tr.Encode(io.Discard); err == nil {
		t.Error("Encode wrote a frame that is not JSON")
	}
	tr = &Transcript{Entries: []Entry{{Kind: In, Frame: []byte("{}\n{}")}}}
	if err := tr.Encode(io.Discard); err == nil {
		t.Error("Encode wrote a frame of two lines")
	}
}

func TestOutputs(t *testing.T) {
	t.Parallel()
	tr, err := Read(strings.NewReader(sampleTranscript))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"type\":\"ready\"}\n{\"z\":1,\"a\":\"\\u00e9<>\"}\nlate text\n"
	if got := string(tr.Outputs()); got != want {
		t.Errorf("Outputs = %q, want %q", got, want)
	}
}
