package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine/internal/jsonscan"
)

// fastCorpus is every distinct message of the goldens (with -short, the
// sample shortSample keeps) and of the entry samples, plus variants that
// the fast decoder must either decode as the general one does or leave to
// it.
func fastCorpus(t testing.TB) (msgs, lines []string) {
	for _, g := range shortSample(goldenSet(t)) {
		msgs = append(msgs, g.raw)
	}
	msgs = append(msgs,
		`{"role":"user","content":"a\u00e9\ud83d\ude00\ud800x\u0000\n\"\\\/\b\f\r\t","timestamp":1}`,
		"{\"role\":\"user\",\"content\":\"bad \xff utf8 \xe2\x82\",\"timestamp\":1}",
		`{"role":"user","content":[],"timestamp":1}`,
		`{"role":"user","content":null,"timestamp":1}`,
		`{"role":"user","content":"x","attribution":null,"timestamp":1}`,
		`{"role":"user","content":"x","timestamp":1.5}`,
		`{"role":"user","content":"x","timestamp":1e3}`,
		`{"role":"user","content":"x","timestamp":-0}`,
		`{"role":"user","content":"x","timestamp":99999999999999999999}`,
		`{"role":"user","content":"x","Timestamp":1}`,
		`{"role":"user","content":"x","timestamp":1,"timestamp":2}`,
		`{"role":"user","content":"x","timestamp":1,}`,
		`{"role":"user","content":"x","timestamp":01}`,
		`{"role":"user" , "content" : [ { "type" : "text" , "text" : "x" } ] , "timestamp" : 1 }`,
		`{"role":"user","content":[{"type":"text","text":"x"},{"type":"audio","x":1}],"timestamp":1}`,
		`{"role":"user","content":[{"text":"x"}],"timestamp":1}`,
		`{"role":"user","content":[{}],"timestamp":1}`,
		`{"role":"users","content":"x"}`,
		`{"role":"us\u0065r","content":"x"}`,
		`{"content":"x","role":"user"}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{ "a" : [1, 2, {"b":null}] }}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10,"premiumRequests":0,"cost":{"input":1e-7,"output":-0.5,"cacheRead":1E2,"cacheWrite":0,"total":12345678901234567890}},"stopReason":"toolUse","timestamp":1,"duration":0,"ttft":1.25}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":null}],"usage":{},"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1,]}],"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":tru}}],"stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":"x","stopReason":"stop","timestamp":1}`,
		`{"role":"assistant","content":[],"usage":{"input":1,"cost":{"total":1e999}},"timestamp":1}`,
		`{"role":"assistant","content":[],"usage":{"cost":{"total":1},"cost":{"input":2}},"timestamp":1}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{"type":"text","text":"x"}],"details":{"a" :1},"isError":false,"isWarning":true,"attribution":"agent","prunedAt":5,"timestamp":5}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":nul,"timestamp":5}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":"\ud800","timestamp":5}`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":true,"timestamp":5} x`,
		`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":true,"timestamp":5`,
		`{"role":"bashExecution","command":"ls","output":"","cancelled":false,"truncated":false,"timestamp":1}`,
		`{"role":"bashExecution","command":"ls","output":"x","exitCode":0,"cancelled":true,"truncated":false,"meta":{"a" : 1},"timestamp":1,"excludeFromContext":true}`,
		`{"role":"bashExecution","command":"ls","output":"x","exitCode":null,"cancelled":false,"truncated":false,"timestamp":1,"excludeFromContext":null}`,
		`{"role":"bashExecution","command":"ls","output":"x","exitCode":1.5,"cancelled":false,"truncated":false,"timestamp":1}`,
		`{"role":"bashExecution","command":"ls","output":"x","cancelled":false,"truncated":false,"timestamp":1,"excludeFromContext":false}`,
		`{"role":"pythonExecution","code":"1","output":"","exitCode":2,"cancelled":false,"truncated":true,"timestamp":1,"excludeFromContext":false}`,
		`{"role":"pythonExecution","code":"1","output":"","cancelled":false,"truncated":true,"timestamp":1,"Code":"2"}`,
		`{"role":"developer","content":"x","timestamp":1}`,
		`{"role":"developer","content":[{"type":"text","text":"x"}],"attribution":"agent","providerPayload":[1],"timestamp":1}`,
		`{"role":"custom","customType":"t","content":"x","display":false,"timestamp":1}`,
		`{"role":"hookMessage","customType":"t","content":[],"display":true,"details":{"k":[]},"attribution":"agent","timestamp":1}`,
		`{"role":"custom","customType":"t","content":"x","display":false,"details":null,"timestamp":1}`,
		`{"role":"custom","customType":"t","content":"x","display":null,"timestamp":1}`,
		`{"role":"branchSummary","summary":"s","fromId":"root","timestamp":1}`,
		`{"role":"branchSummary","summary":"s","fromId":"root","timestamp":1,"summary":"t"}`,
		`{"role":"compactionSummary","summary":"s","shortSummary":"t","tokensBefore":10,"providerPayload":{},"timestamp":1}`,
		`{"role":"compactionSummary","summary":"s","tokensBefore":1e3,"timestamp":1}`,
		`{"role":"fileMention","files":[],"timestamp":1}`,
		`{"role":"fileMention","files":null,"timestamp":1}`,
		`{"role":"fileMention","files":[{"path":"a","content":"b","lineCount":0,"byteSize":3,"skippedReason":"tooLarge","image":{"type":"image","data":"x","mimeType":"image/png"}},{"path":"c","content":""}],"timestamp":1}`,
		`{"role":"fileMention","files":[{"path":"a","content":"b","image":null}],"timestamp":1}`,
		`{"role":"fileMention","files":[{"path":"a","content":"b","image":{"type":"audio"}}],"timestamp":1}`,
		`{"role":"fileMention","files":[{"content":"b"}],"timestamp":1}`,
	)
	for _, l := range entryLines {
		lines = append(lines, l)
	}
	for i, m := range msgs {
		parent := `null`
		if i%2 == 1 {
			parent = `"p"`
		}
		lines = append(lines, `{"type":"message","id":"e`+string(rune('a'+i%26))+`","parentId":`+parent+`,"timestamp":"2026-07-02T18:38:56.123Z","message":`+m+`}`)
	}
	head := `{"type":"message","id":"a","parentId":"b",`
	msg := `"message":{"role":"user","content":"x","timestamp":1}`
	for _, ts := range []string{"2026-07-02T18:38:56.123Z", "2026-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000Z",
		"2026-04-31T00:00:00.000Z", "2026-07-02T24:00:00.000Z", "2026-07-02T18:38:60.000Z", "2026-07-02T18:38:56.12Z",
		"2026-07-02T18:38:56.123+01:00", "0000-01-01T00:00:00.000Z", "2026-13-02T18:38:56.123Z", "2026-07-02T18:38:56.1a3Z"} {
		lines = append(lines, head+`"timestamp":"`+ts+`",`+msg+`}`)
	}
	lines = append(lines,
		head+`"timestamp":"2026-07-02T18:38:56.123Z",`+msg+`,"extra":1}`,
		head+`"timestamp":"2026-07-02T18:38:56.123Z"}`,
		head+`"timestamp":"2026-07-02T18:38:56.123Z",`+msg+`}  `,
		head+`"timestamp":"2026-07-02T18:38:56.123Z",`+msg+`}}`,
		`{"type":"message","id":"a","parentId":"\u0062","timestamp":"2026-07-02T18:38:56.123Z",`+msg+`}`,
		`{"type":"message","parentId":null,"id":"a",`+msg+`,"timestamp":"2026-07-02T18:38:56.123Z"}`,
		`{"type":"message","id":"a","parentId":nul,"timestamp":"2026-07-02T18:38:56.123Z",`+msg+`}`,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":null}`,
	)
	return msgs, lines
}

// checkFastMessage fails when the fast decoder accepts data and decodes it
// to anything but what the general decoder gives.
func checkFastMessage(t testing.TB, data []byte) {
	s := fastScan{jsonscan.New(data, nil)}
	m := s.roleMessage()
	if m == nil || !s.End() {
		return
	}
	want, err := decodeMessage(data)
	if err != nil {
		t.Fatalf("fast path accepted what the general one rejects (%v): %s", err, data)
	}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("fast and general decodings differ for %s\nfast    %#v\ngeneral %#v", data, m, want)
	}
}

// checkFastEntry is checkFastMessage for entry lines.
func checkFastEntry(t testing.TB, line []byte) {
	d := EntryDecoder{lastID: "p", strs: map[string]string{}}
	e := d.decodeMessageEntry(line)
	if e == nil {
		return
	}
	want, err := decodeEntry(line)
	if err != nil {
		t.Fatalf("fast path accepted what the general one rejects (%v): %s", err, line)
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("fast and general decodings differ for %s\nfast    %#v\ngeneral %#v", line, e, want)
	}
}

// The one-pass decoder agrees with the general one on everything it
// accepts, and accepts the shapes a session is made of.
func TestFastDecodeAgrees(t *testing.T) {
	t.Parallel()
	msgs, lines := fastCorpus(t)
	fast := 0
	for _, m := range msgs {
		checkFastMessage(t, []byte(m))
	}
	for _, l := range lines {
		checkFastEntry(t, []byte(l))
		d := EntryDecoder{}
		if d.decodeMessageEntry([]byte(l)) != nil {
			fast++
		}
	}
	for _, g := range goldenSet(t) {
		known := messageOfRole(g.role) != nil && strings.HasPrefix(g.raw, `{"role":`)
		if s := (fastScan{jsonscan.New([]byte(g.raw), nil)}); known && (s.roleMessage() == nil || !s.End()) {
			t.Errorf("a golden message takes the slow path: %s", g.raw)
		}
	}
	if fast < len(lines)/2 {
		t.Errorf("fast path took %d of %d lines", fast, len(lines))
	}
	for _, l := range []string{entryLines["user string"], entryLines["assistant"], entryLines["tool result"]} {
		if (&EntryDecoder{}).decodeMessageEntry([]byte(l)) == nil {
			t.Errorf("fast path did not take %s", l)
		}
	}
}

func FuzzFastDecode(f *testing.F) {
	msgs, lines := fastCorpus(f)
	for _, m := range msgs {
		f.Add([]byte(m))
	}
	for _, l := range lines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastMessage(t, data)
		checkFastEntry(t, data)
	})
}

// AppendJSON appends what MarshalJSON returns, and the size hints hold
// nearly every encoding (a hint that is short only costs a regrowth).
func TestAppendJSONAndSizeHints(t *testing.T) {
	t.Parallel()
	msgs, _ := fastCorpus(t)
	short, n := 0, 0
	for _, raw := range msgs {
		m, err := DecodeMessage([]byte(raw))
		if err != nil {
			continue
		}
		n++
		want, _ := m.MarshalJSON()
		a, ok := m.(interface{ AppendJSON([]byte) []byte })
		if !ok {
			t.Fatalf("%T has no AppendJSON", m)
		}
		if got := a.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Fatalf("AppendJSON differs from MarshalJSON\n got %s\nwant x%s", got, want)
		}
		if messageSizeHint(m) < len(want) {
			short++
		}
	}
	if short*10 > n {
		t.Errorf("size hint short for %d of %d messages", short, n)
	}
}
