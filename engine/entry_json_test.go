package engine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// entryLines are session lines in the original's exact form (agent-core.md
// §5.2; key orders as session-manager.ts builds the objects), one per entry
// type and one message entry per role.
var entryLines = map[string]string{
	"user string":           `{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":{"role":"user","content":"hello <world> & \"you\"","attribution":"user","timestamp":1782067136123}}`,
	"user blocks":           `{"type":"message","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2026-07-02T18:38:57.000Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1782067137000}}`,
	"developer":             `{"type":"message","id":"c1b2c3d4","parentId":"b1b2c3d4","timestamp":"2026-07-02T18:38:58.000Z","message":{"role":"developer","content":[{"type":"text","text":"be brief"}],"attribution":"agent","timestamp":1782067138000}}`,
	"assistant":             `{"type":"message","id":"d1b2c3d4","parentId":"c1b2c3d4","timestamp":"2026-07-02T18:38:59.500Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"text","text":"ok"},{"type":"toolCall","id":"call_1","name":"read","arguments":{"path":"a.go"}}],"api":"openai-completions","provider":"ollama","model":"qwen3","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.0001,"output":0.00002,"cacheRead":0,"cacheWrite":0,"total":0.00012}},"stopReason":"toolUse","timestamp":1782067139500,"duration":1234.5,"ttft":120}}`,
	"tool result":           `{"type":"message","id":"e1b2c3d4","parentId":"d1b2c3d4","timestamp":"2026-07-02T18:39:00.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"package a\n"}],"details":{"lines":1},"isError":false,"timestamp":1782067140000}}`,
	"bash execution":        `{"type":"message","id":"f1b2c3d4","parentId":"e1b2c3d4","timestamp":"2026-07-02T18:39:01.000Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1782067141000,"excludeFromContext":true}}`,
	"python execution":      `{"type":"message","id":"01b2c3d4","parentId":"f1b2c3d4","timestamp":"2026-07-02T18:39:02.000Z","message":{"role":"pythonExecution","code":"print(1)","output":"1","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1782067142000,"excludeFromContext":false}}`,
	"file mention":          `{"type":"message","id":"11b2c3d4","parentId":"01b2c3d4","timestamp":"2026-07-02T18:39:03.000Z","message":{"role":"fileMention","files":[{"path":"src/a.ts","content":"x","lineCount":1,"byteSize":1}],"timestamp":1782067143000}}`,
	"legacy hookMessage":    `{"type":"message","id":"21b2c3d4","parentId":"11b2c3d4","timestamp":"2026-07-02T18:39:04.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":1782067144000}}`,
	"unknown role":          `{"type":"message","id":"31b2c3d4","parentId":"21b2c3d4","timestamp":"2026-07-02T18:39:05.000Z","message":{"role":"futureRole","z":1,"a":[true,null]}}`,
	"model_change":          `{"type":"model_change","id":"41b2c3d4","parentId":"31b2c3d4","timestamp":"2026-07-02T18:39:06.000Z","model":"ollama/qwen3"}`,
	"model_change role":     `{"type":"model_change","id":"51b2c3d4","parentId":"41b2c3d4","timestamp":"2026-07-02T18:39:06.001Z","model":"anthropic/claude","role":"temporary"}`,
	"thinking null":         `{"type":"thinking_level_change","id":"61b2c3d4","parentId":"51b2c3d4","timestamp":"2026-07-02T18:39:07.000Z","thinkingLevel":null}`,
	"thinking high":         `{"type":"thinking_level_change","id":"71b2c3d4","parentId":"61b2c3d4","timestamp":"2026-07-02T18:39:07.100Z","thinkingLevel":"high"}`,
	"compaction":            `{"type":"compaction","id":"81b2c3d4","parentId":"71b2c3d4","timestamp":"2026-07-02T18:40:00.000Z","summary":"We did things.","firstKeptEntryId":"d1b2c3d4","tokensBefore":123456}`,
	"compaction full":       `{"type":"compaction","id":"91b2c3d4","parentId":"81b2c3d4","timestamp":"2026-07-02T18:41:00.000Z","summary":"More.","shortSummary":"More","firstKeptEntryId":"e1b2c3d4","tokensBefore":200000,"details":{"readFiles":["a.go"]},"fromExtension":false,"preserveData":{"k":{"v":1}}}`,
	"branch_summary":        `{"type":"branch_summary","id":"a2b2c3d4","parentId":"91b2c3d4","timestamp":"2026-07-02T18:42:00.000Z","fromId":"root","summary":"Tried X."}`,
	"branch_summary full":   `{"type":"branch_summary","id":"b2b2c3d4","parentId":"a2b2c3d4","timestamp":"2026-07-02T18:42:00.000Z","fromId":"91b2c3d4","summary":"Tried Y.","details":{"files":[]},"fromExtension":true}`,
	"custom":                `{"type":"custom","customType":"my-ext","id":"c2b2c3d4","parentId":"b2b2c3d4","timestamp":"2026-07-02T18:43:00.000Z"}`,
	"custom data":           `{"type":"custom","customType":"my-ext","data":{"count":3,"s":"x"},"id":"d2b2c3d4","parentId":"c2b2c3d4","timestamp":"2026-07-02T18:43:00.000Z"}`,
	"custom_message":        `{"type":"custom_message","customType":"ttsr-injection","content":"rule text","display":false,"attribution":"agent","id":"e2b2c3d4","parentId":"d2b2c3d4","timestamp":"2026-07-02T18:44:00.000Z"}`,
	"custom_message blocks": `{"type":"custom_message","customType":"skill-prompt","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"display":true,"details":{"skill":"go"},"attribution":"user","id":"f2b2c3d4","parentId":"e2b2c3d4","timestamp":"2026-07-02T18:44:00.000Z"}`,
	"label":                 `{"type":"label","id":"03b2c3d4","parentId":"f2b2c3d4","timestamp":"2026-07-02T18:45:00.000Z","targetId":"a1b2c3d4","label":"start"}`,
	"label cleared":         `{"type":"label","id":"13b2c3d4","parentId":"03b2c3d4","timestamp":"2026-07-02T18:45:00.000Z","targetId":"a1b2c3d4"}`,
	"label empty":           `{"type":"label","id":"23b2c3d4","parentId":"13b2c3d4","timestamp":"2026-07-02T18:45:00.000Z","targetId":"a1b2c3d4","label":""}`,
	"service_tier":          `{"type":"service_tier_change","id":"33b2c3d4","parentId":"23b2c3d4","timestamp":"2026-07-02T18:46:00.000Z","serviceTier":null}`,
	"ttsr_injection":        `{"type":"ttsr_injection","id":"43b2c3d4","parentId":"33b2c3d4","timestamp":"2026-07-02T18:46:00.000Z","injectedRules":["no-any","tests"]}`,
	"mode_change":           `{"type":"mode_change","id":"53b2c3d4","parentId":"43b2c3d4","timestamp":"2026-07-02T18:46:00.000Z","mode":"plan","data":{"planFile":"/tmp/p.md"}}`,
	"session_init":          `{"type":"session_init","id":"63b2c3d4","parentId":"53b2c3d4","timestamp":"2026-07-02T18:46:00.000Z","systemPrompt":"You are…","task":"do it","tools":["read","bash"]}`,
	"context_change":        `{"type":"context_change","id":"73b2c3d4","parentId":"63b2c3d4","timestamp":"2026-07-02T18:46:00.000Z","contextName":"prod","tenant":"t","namespace":"ns"}`,
	"odd timestamp":         `{"type":"model_change","id":"83b2c3d4","parentId":"73b2c3d4","timestamp":"2026-07-02T18:39:06Z","model":"a/b"}`,
}

func TestEntryRoundTrip(t *testing.T) {
	t.Parallel()
	for name, line := range entryLines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, err := DecodeEntry([]byte(line))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if got := string(e.AppendJSON(nil)); got != line {
				t.Fatalf("round trip:\n got %s\nwant %s", got, line)
			}
		})
	}
}

func TestDecodeEntryFields(t *testing.T) {
	t.Parallel()
	e, err := DecodeEntry([]byte(entryLines["compaction full"]))
	if err != nil {
		t.Fatal(err)
	}
	c := e.Compaction
	if e.Type != EntryCompaction || e.ID != "91b2c3d4" || e.ParentID != "81b2c3d4" || c == nil ||
		c.FirstKeptEntryID != "e1b2c3d4" || c.TokensBefore != 200000 || c.ShortSummary != "More" ||
		c.FromExtension == nil || *c.FromExtension || string(c.PreserveData) != `{"k":{"v":1}}` {
		t.Fatalf("compaction decoded as %+v %+v", e, c)
	}
	if want := time.Date(2026, 7, 2, 18, 41, 0, 0, time.UTC).UnixMilli(); e.Timestamp != want {
		t.Fatalf("timestamp %d", e.Timestamp)
	}
	e, _ = DecodeEntry([]byte(entryLines["user string"]))
	if e.ParentID != "" {
		t.Fatalf("null parentId decoded as %q", e.ParentID)
	}
	if u, ok := e.Message.(*UserMessage); !ok || u.Text() != `hello <world> & "you"` {
		t.Fatalf("message %#v", e.Message)
	}
	e, _ = DecodeEntry([]byte(entryLines["ttsr_injection"]))
	if e.Type != "ttsr_injection" || e.ID != "43b2c3d4" || e.ParentID != "33b2c3d4" {
		t.Fatalf("opaque entry %+v", e)
	}
}

// An opaque entry moved under another parent is written with its new
// parent and its payload unchanged.
func TestOpaqueEntryMoved(t *testing.T) {
	t.Parallel()
	e, err := DecodeEntry([]byte(entryLines["mode_change"]))
	if err != nil {
		t.Fatal(err)
	}
	e.ParentID = ""
	want := strings.Replace(entryLines["mode_change"], `"parentId":"43b2c3d4"`, `"parentId":null`, 1)
	if got := string(e.AppendJSON(nil)); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// Entries built in Go (not decoded) follow the original's key order too.
func TestEntryBuiltInGo(t *testing.T) {
	t.Parallel()
	yes := true
	for _, tc := range []struct {
		e    Entry
		want string
	}{
		{Entry{Type: EntryLabel, ID: "00000001", Timestamp: 0, Label: &Label{TargetID: "x"}},
			`{"type":"label","id":"00000001","parentId":null,"timestamp":"1970-01-01T00:00:00.000Z","targetId":"x"}`},
		{Entry{Type: EntryCustomMessage, ID: "00000002", ParentID: "00000001", Timestamp: 1, CustomMessage: &CustomMessage{
			CustomType: "c", Content: []ContentBlock{TextBlock("t")}, StringContent: true, Attribution: "agent"}},
			`{"type":"custom_message","customType":"c","content":"t","display":false,"attribution":"agent","id":"00000002","parentId":"00000001","timestamp":"1970-01-01T00:00:00.001Z"}`},
		{Entry{Type: EntryBranchSummary, ID: "00000003", BranchSummary: &BranchSummary{FromID: "root", Summary: "s", FromExtension: &yes}},
			`{"type":"branch_summary","id":"00000003","parentId":null,"timestamp":"1970-01-01T00:00:00.000Z","fromId":"root","summary":"s","fromExtension":true}`},
	} {
		if got := string(tc.e.AppendJSON(nil)); got != tc.want {
			t.Errorf("got %s\nwant %s", got, tc.want)
		}
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		``,
		`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":{"ro`,
		`{"id":"a"}`,
		`[1,2]`,
		`{"type":"message","id":"a","message":{"content":"no role"}}`,
	} {
		if _, err := DecodeEntry([]byte(line)); !errors.Is(err, ErrEntry) {
			t.Errorf("DecodeEntry(%q) = %v, want ErrEntry", line, err)
		}
	}
}

// The fast path of message entries and the general one agree; lines the
// fast path does not take (other key orders, escapes, stray keys, a role
// that only starts like a known one) decode through the general one.
func TestDecodeMessageEntryPaths(t *testing.T) {
	t.Parallel()
	msg := `{"role":"user","content":"hi","attribution":"user","timestamp":1}`
	for _, tc := range []struct{ line, want string }{
		{`{"id":"a","type":"message","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`},
		{`{"type":"message","id":"\u0061","parentId":"p","timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`,
			`{"type":"message","id":"a","parentId":"p","timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`},
		{`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `,"x":1}`,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`},
		{`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":{"role":"users","q":1}}`,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":{"role":"users","q":1}}`},
		{` {"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `} `,
			`{"type":"message","id":"a","parentId":null,"timestamp":"2026-07-02T18:38:56.123Z","message":` + msg + `}`},
	} {
		e, err := DecodeEntry([]byte(tc.line))
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if got := string(e.AppendJSON(nil)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, got, tc.want)
		}
	}
}
