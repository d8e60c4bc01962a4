package rpctest

// Unit tests of the harness's pure parts: escapes, normalisation, line
// framing, and the frames command's helpers.

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

func TestUnescapeGo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     []byte
		wantErr  bool
	}{
		{name: "plain", in: `{"type":"x"}`, want: []byte(`{"type":"x"}`)},
		{name: "empty", in: ``, want: []byte{}},
		{name: "newline", in: `a\n`, want: []byte("a\n")},
		{name: "crlf", in: `a\r\n`, want: []byte("a\r\n")},
		{name: "tab and backslash", in: `\t\\`, want: []byte("\t\\")},
		{name: "escaped quotes", in: `\"\'`, want: []byte(`"'`)},
		{name: "hex byte is one byte", in: `\xff\x00`, want: []byte{0xff, 0x00}},
		{name: "octal byte", in: `\101`, want: []byte("A")},
		{name: "bom", in: `\uFEFF{}`, want: []byte("\uFEFF{}")},
		{name: "small u escape is utf-8", in: `\u00e9`, want: []byte("é")},
		{name: "astral", in: `\U0001F600`, want: []byte("😀")},
		{name: "raw utf-8 kept", in: `é`, want: []byte("é")},
		{name: "raw invalid byte kept", in: "a\xffb", want: []byte("a\xffb")},
		{name: "json escape left for json", in: `{"s":"\\u0041"}`, want: []byte(`{"s":"\u0041"}`)},
		{name: "trailing backslash", in: `abc\`, wantErr: true},
		{name: "unknown escape", in: `\q`, wantErr: true},
		{name: "short hex", in: `\x4`, wantErr: true},
		{name: "surrogate", in: `\uD800`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := unescapeGo(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("unescapeGo(%q) = %q, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unescapeGo(%q): %v", tt.in, err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("unescapeGo(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestFrameLogChunking feeds the same stdout whole, line by line, two
// bytes and one byte at a time: the frames must not depend on how the
// pipe delivers them.
func TestFrameLogChunking(t *testing.T) {
	t.Parallel()
	input := []byte("{\"a\":1}\nnot json\n{\"b\":\"x\"}\r\n\n" + `{"long":"` + string(bytes.Repeat([]byte("y"), 70000)) + "\"}\n{\"c\":")
	want := []scriptFrame{
		{line: []byte(`{"a":1}`), json: true},
		{line: []byte(`not json`)},
		{line: []byte("{\"b\":\"x\"}\r"), json: true},
		{line: []byte{}},
		{line: []byte(`{"long":"` + string(bytes.Repeat([]byte("y"), 70000)) + `"}`), json: true},
		{line: []byte(`{"c":`), partial: true},
	}
	chunkings := map[string]func([]byte) [][]byte{
		"whole": func(b []byte) [][]byte { return [][]byte{b} },
		"lines": func(b []byte) [][]byte { return bytes.SplitAfter(b, []byte("\n")) },
		"two":   func(b []byte) [][]byte { return chunkBytes(b, 2) },
		"one":   func(b []byte) [][]byte { return chunkBytes(b, 1) },
	}
	for name, split := range chunkings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newFrameLog()
			for _, c := range split(input) {
				if n, err := l.Write(c); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(c))
				}
			}
			l.finish()
			frames, done, _ := l.snapshot()
			if !done {
				t.Error("not done after finish")
			}
			if len(frames) != len(want) {
				t.Fatalf("got %d frames, want %d", len(frames), len(want))
			}
			for i := range want {
				g, w := frames[i], want[i]
				if !bytes.Equal(g.line, w.line) || g.json != w.json || g.partial != w.partial {
					t.Errorf("frame %d = {%.40q json:%v partial:%v}, want {%.40q json:%v partial:%v}", i+1, g.line, g.json, g.partial, w.line, w.json, w.partial)
				}
			}
			if !bytes.Equal(l.bytes(), input) {
				t.Error("raw bytes differ from the input")
			}
		})
	}
}

func chunkBytes(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out, b = append(out, b[:n]), b[n:]
	}
	return append(out, b)
}

// TestFrameLogWakesWaiters checks the signal rpc wait sleeps on: the
// channel from a snapshot closes when a complete line arrives, not before.
func TestFrameLogWakesWaiters(t *testing.T) {
	t.Parallel()
	l := newFrameLog()
	_, _, changed := l.snapshot()
	l.Write([]byte(`{"a":`))
	select {
	case <-changed:
		t.Fatal("woken by a partial line")
	default:
	}
	l.Write([]byte("1}\n"))
	select {
	case <-changed:
	default:
		t.Fatal("not woken by a complete line")
	}
	_, _, changed = l.snapshot()
	l.finish()
	select {
	case <-changed:
	default:
		t.Fatal("not woken by finish")
	}
}

func TestFrameMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line  string
		json  bool
		query string
		want  bool
	}{
		{`{"type":"agent_end"}`, true, `#(type=="agent_end")`, true},
		{`{"type":"agent_end"}`, true, `#(type=="agent_start")`, false},
		{`{"id":"p1","success":true}`, true, `#(id=="p1")`, true},
		{`{"id":7}`, true, `#(id==7)`, true},
		// gjson's == compares a number and a string by value; % matches
		// strings only, so it is the type-strict check (docs/testing.md).
		{`{"id":7}`, true, `#(id=="7")`, true},
		{`{"id":7}`, true, `#(id%"7")`, false},
		{`{"id":"7"}`, true, `#(id%"7")`, true},
		{`{"message":{"role":"user"}}`, true, `#(message.role=="user")`, true},
		{`{"type":"x"}`, true, `0.type`, true},
		{`{"type":"agent_end"`, false, `#(type=="agent_end")`, false},
	}
	for _, tt := range tests {
		f := scriptFrame{line: []byte(tt.line), json: tt.json}
		if got := f.matches(tt.query); got != tt.want {
			t.Errorf("frame %s matches %s = %v, want %v", tt.line, tt.query, got, tt.want)
		}
	}
}

func TestInvalidLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     int // number of problems
	}{
		{"empty file", "", 0},
		{"objects", "{\"a\":1}\n{}\n", 0},
		{"crlf", "{\"a\":1}\r\n", 1},
		{"array", "[1]\n", 1},
		{"garbage", "{\"a\":1}\nnope\n", 1},
		{"blank line", "{}\n\n{}\n", 1},
		{"truncated", "{}\n{\"a\"", 2},
		{"unterminated object", "{}\n{}", 1},
	}
	for _, tt := range tests {
		if got := invalidLines(tt.in); len(got) != tt.want {
			t.Errorf("%s: invalidLines(%q) = %q, want %d problems", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestJsonlLines(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"":         nil,
		"a\n":      {"a"},
		"a\nb":     {"a", "b"},
		"a\n\nb\n": {"a", "", "b"},
	}
	for in, want := range tests {
		if got := jsonlLines(in); !reflect.DeepEqual(got, want) {
			t.Errorf("jsonlLines(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResultCount(t *testing.T) {
	t.Parallel()
	all := `[{"type":"u"},{"type":"u"},{"type":"e","n":1.5}]`
	tests := []struct {
		query  string
		want   int
		wantOK bool
	}{
		{`#(type=="u")#`, 2, true},
		{`#(type=="u")#|#`, 2, true},
		{`#`, 3, true},
		{`#(type=="none")#`, 0, true},
		{`#(type=="none")`, 0, true},
		{`#(type=="u")`, 0, false},
		{`#(type=="e").n`, 0, false},
	}
	for _, tt := range tests {
		got, ok := resultCount(gjson.Get(all, tt.query))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("resultCount(%s) = %d, %v; want %d, %v", tt.query, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestIsAssignment(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"A=1":       true,
		"_x9=":      true,
		"PATH=/bin": true,
		"=1":        false,
		"9A=1":      false,
		"./a=b":     false,
		"jsonl":     false,
		"-flag=1":   false,
	}
	for in, want := range tests {
		if got := isEnvAssignment(in); got != want {
			t.Errorf("isEnvAssignment(%q) = %v, want %v", in, got, want)
		}
	}
}
