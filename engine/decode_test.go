package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// collectMessages appends every JSON object under raw that has a string
// "role": frames carry messages under message, messages, toolResults,
// assistantMessageEvent.partial, data.messages and more, so the walk is
// generic rather than a list of paths that would miss the next frame type.
func collectMessages(raw json.RawMessage, out *[]json.RawMessage) error {
	switch raw[0] {
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		if r, ok := obj["role"]; ok && r[0] == '"' {
			// The agent server's attach answers name a client's role
			// (controller, observer): not a message.
			if s := string(r); s != `"controller"` && s != `"observer"` {
				*out = append(*out, raw)
				return nil
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := collectMessages(obj[k], out); err != nil {
				return err
			}
		}
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return err
		}
		for _, v := range arr {
			if err := collectMessages(v, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// goldenMessage is a message of the golden transcripts, where it was first
// seen and its role.
type goldenMessage struct {
	raw, where, role string
}

// goldens holds every distinct message of the golden transcripts, read
// once for all the tests that walk them. A message recurs in several
// frames (message_end, turn_end, agent_end, get_messages): about 3,000
// messages are under 700 distinct ones, and checking one twice tests
// nothing more.
var goldens struct {
	once  sync.Once
	msgs  []goldenMessage
	files int
	err   error
}

// goldenSet returns the distinct golden messages in file order.
func goldenSet(t testing.TB) []goldenMessage {
	t.Helper()
	goldens.once.Do(func() { goldens.msgs, goldens.files, goldens.err = readGoldens() })
	if goldens.err != nil {
		t.Fatal(goldens.err)
	}
	return slices.Clip(goldens.msgs)
}

func readGoldens() (msgs []goldenMessage, nfiles int, err error) {
	files, err := filepath.Glob("../golden/*.jsonl")
	if err != nil {
		return nil, 0, err
	}
	if len(files) == 0 {
		return nil, 0, errors.New("no golden files")
	}
	seen := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_requests.jsonl") {
			continue // request bodies a provider received: its wire, not ours
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, 0, err
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) == 0 {
				continue
			}
			where := fmt.Sprintf("%s:%d", file, i+1)
			if !json.Valid(line) {
				return nil, 0, fmt.Errorf("%s: not JSON: %s", where, line)
			}
			var raws []json.RawMessage
			if err := collectMessages(line, &raws); err != nil {
				return nil, 0, fmt.Errorf("%s: %v", where, err)
			}
			for _, raw := range raws {
				if seen[string(raw)] {
					continue
				}
				seen[string(raw)] = true
				var head struct{ Role string }
				json.Unmarshal(raw, &head)
				msgs = append(msgs, goldenMessage{raw: string(raw), where: where, role: head.Role})
			}
		}
	}
	return msgs, len(files), nil
}

// shortSample is msgs, or with -short the first message of each role and
// every fourth after it: the heavy checks (fast against general decoding,
// the byte round trip) keep every role and a quarter of the cost.
func shortSample(msgs []goldenMessage) []goldenMessage {
	if !testing.Short() {
		return msgs
	}
	var out []goldenMessage
	n := map[string]int{}
	for _, m := range msgs {
		if n[m.role]%4 == 0 {
			out = append(out, m)
		}
		n[m.role]++
	}
	return out
}

// Every message in every golden transcript decodes to its concrete type and
// encodes back to the same bytes.
func TestGoldenMessagesRoundTrip(t *testing.T) {
	t.Parallel()
	all := goldenSet(t)
	roles := map[string]int{}
	for _, g := range shortSample(all) {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(g.raw)); err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage([]byte(g.raw))
		if err != nil {
			t.Fatalf("%s: %v\n%s", g.where, err, g.raw)
		}
		if _, ok := m.(*OpaqueMessage); ok {
			t.Fatalf("%s: role %q decoded as opaque", g.where, m.Role())
		}
		got, _ := m.MarshalJSON()
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s: round trip differs\n got %s\nwant %s", g.where, got, want.Bytes())
		}
		roles[m.Role()]++
	}
	for _, role := range []string{"user", "assistant", "toolResult", "bashExecution"} {
		if roles[role] == 0 {
			t.Errorf("no %s message in the goldens", role)
		}
	}
	t.Logf("%d of %d distinct messages from %d files round-tripped: %v", len(shortSample(all)), len(all), goldens.files, roles)
}

// Samples in the shapes of agent-core.md §1, each with its optional keys
// present and absent.
func TestMessageRoundTripSamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want Message // the concrete type decoding must give
	}{
		{"user string content", `{"role":"user","content":"hi","synthetic":true,"attribution":"agent","providerPayload":{"type":"openaiResponsesHistory","items":[]},"timestamp":1760000000000}`, &UserMessage{}},
		{"user without attribution", `{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":"iVBO","mimeType":"image/png"}],"timestamp":1}`, &UserMessage{}},
		{"user empty content", `{"role":"user","content":[],"attribution":"user","timestamp":0}`, &UserMessage{}},
		{"developer", `{"role":"developer","content":[{"type":"text","text":"be brief"}],"attribution":"agent","providerPayload":{"dt":true},"timestamp":2}`, &DeveloperMessage{}},
		{"developer bare", `{"role":"developer","content":"x","timestamp":2}`, &DeveloperMessage{}},
		{"assistant full", `{"role":"assistant","content":[{"type":"thinking","thinking":"hm","thinkingSignature":"sig"},{"type":"redactedThinking","data":"opaque"},{"type":"text","text":"ok","textSignature":"{\"v\":1,\"id\":\"m\"}"},{"type":"toolCall","id":"toolu_1","name":"read","arguments":{"path":"a.txt","limit":10},"thoughtSignature":"ts","intent":"look"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","responseId":"msg_1","usage":{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"premiumRequests":1,"cost":{"input":0.0036,"output":0.0012,"cacheRead":1e-7,"cacheWrite":0.00000375,"total":0.30000000000000004}},"stopReason":"toolUse","errorMessage":"boom","providerPayload":{"items":[1]},"timestamp":3,"duration":1234,"ttft":321.5}`, &AssistantMessage{}},
		{"assistant empty args", `{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{}}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":1e+21}},"stopReason":"stop","timestamp":4}`, &AssistantMessage{}},
		{"tool result full", `{"role":"toolResult","toolCallId":"toolu_1","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"truncation":null},"isError":false,"isWarning":false,"attribution":"agent","prunedAt":1760000000000,"timestamp":5}`, &ToolResultMessage{}},
		{"tool result null details", `{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":null,"isError":true,"timestamp":5}`, &ToolResultMessage{}},
		{"tool result bare", `{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":true,"timestamp":5}`, &ToolResultMessage{}},
		{"bash", `{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"meta":{"truncation":{"lines":3}},"timestamp":6,"excludeFromContext":true}`, &BashExecutionMessage{}},
		{"bash cancelled", `{"role":"bashExecution","command":"sleep 9","output":"","cancelled":true,"truncated":false,"timestamp":6}`, &BashExecutionMessage{}},
		{"python", `{"role":"pythonExecution","code":"print(1)","output":"1","exitCode":0,"cancelled":false,"truncated":false,"meta":{},"timestamp":7,"excludeFromContext":false}`, &PythonExecutionMessage{}},
		{"python bare", `{"role":"pythonExecution","code":"","output":"","cancelled":true,"truncated":true,"timestamp":7}`, &PythonExecutionMessage{}},
		{"custom string", `{"role":"custom","customType":"ttsr-injection","content":"rule <x> & y","display":false,"details":{"rules":["a"]},"attribution":"agent","timestamp":8}`, &CustomMessage{}},
		{"custom blocks", `{"role":"custom","customType":"skill-prompt","content":[{"type":"text","text":"a"}],"display":true,"timestamp":8}`, &CustomMessage{}},
		{"hookMessage", `{"role":"hookMessage","customType":"old","content":"x","display":true,"timestamp":8}`, &CustomMessage{}},
		{"branch summary", `{"role":"branchSummary","summary":"we tried x","fromId":"a1b2c3d4","timestamp":9}`, &BranchSummaryMessage{}},
		{"compaction summary", `{"role":"compactionSummary","summary":"long","shortSummary":"short","tokensBefore":123456,"providerPayload":{"type":"openaiResponsesHistory","provider":"openai","items":[]},"timestamp":10}`, &CompactionSummaryMessage{}},
		{"compaction summary bare", `{"role":"compactionSummary","summary":"long","tokensBefore":0,"timestamp":10}`, &CompactionSummaryMessage{}},
		{"file mention", `{"role":"fileMention","files":[{"path":"src/a.ts","content":"x","lineCount":40,"byteSize":0},{"path":"big.bin","content":"","skippedReason":"tooLarge"},{"path":"p.png","content":"","image":{"type":"image","data":"iVBO","mimeType":"image/png"}}],"timestamp":11}`, &FileMentionMessage{}},
		{"file mention empty", `{"role":"fileMention","files":[],"timestamp":11}`, &FileMentionMessage{}},
		{"unknown role", `{"role":"futureThing","zeta":1,"alpha":{"b":[true,null]},"timestamp":12}`, &OpaqueMessage{}},
		{"unknown block type", `{"role":"user","content":[{"type":"audio","data":"AAA","format":"wav"},{"type":"text","text":"t"}],"attribution":"user","timestamp":13}`, &UserMessage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := DecodeMessage([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if reflect.TypeOf(m) != reflect.TypeOf(tt.want) {
				t.Fatalf("decoded %T, want %T", m, tt.want)
			}
			got, err := m.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.json {
				t.Fatalf("round trip differs\n got %s\nwant %s", got, tt.json)
			}
			var probe struct {
				Role string `json:"role"`
			}
			if err := json.Unmarshal(got, &probe); err != nil || probe.Role != m.Role() {
				t.Fatalf("Role() = %q, encoded role %q (%v)", m.Role(), probe.Role, err)
			}
		})
	}
}

// Decoding fills the fields the engine reads, not only what re-encoding
// needs; spot checks of the ones the round trip cannot see directly.
func TestDecodeFields(t *testing.T) {
	t.Parallel()
	m, err := DecodeMessage([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{ "path" : "a.txt" }}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.5,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"toolUse","timestamp":7}`))
	if err != nil {
		t.Fatal(err)
	}
	a := m.(*AssistantMessage)
	calls := a.ToolCalls()
	if len(calls) != 1 || calls[0].ID != "c1" || string(calls[0].Arguments) != `{"path":"a.txt"}` {
		t.Fatalf("tool calls %+v (arguments must be compact)", calls)
	}
	if a.Usage.TotalTokens != 3 || a.Usage.Cost.Total != 0.5 || a.StopReason != StopToolUse || a.Timestamp != 7 {
		t.Fatalf("assistant %+v", a)
	}
	c, err := DecodeMessage([]byte(`{"role":"hookMessage","customType":"x","content":"hello","display":true,"timestamp":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if cm := c.(*CustomMessage); !cm.Legacy || !cm.StringContent || len(cm.Content) != 1 || cm.Content[0].Text != "hello" {
		t.Fatalf("custom %+v", cm)
	}
	// A message built in Go without attribution writes the default; only a
	// decoded one remembers that the key was absent.
	built, _ := (&UserMessage{Content: []ContentBlock{TextBlock("a")}}).MarshalJSON()
	if want := `{"role":"user","content":[{"type":"text","text":"a"}],"attribution":"user","timestamp":0}`; string(built) != want {
		t.Fatalf("built user %s", built)
	}
}

// Non-canonical input is normalised once and then stable: decode+encode is
// idempotent.
func TestDecodeEncodeIdempotent(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{ "a" : [1, 2] }}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":1E-7,"output":0.10,"cacheRead":1.0,"cacheWrite":0.0000012,"total":12e20}},"stopReason":"stop","timestamp":1,"duration":5.0}`,
			`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":[1,2]}}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":1e-7,"output":0.1,"cacheRead":1,"cacheWrite":0.0000012,"total":1.2e+21}},"stopReason":"stop","timestamp":1,"duration":5}`},
		{"{ \"role\" : \"mystery\" ,\n \"x\" : [ 1 ] }", `{"role":"mystery","x":[1]}`},
		{`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":{ },"isError":false,"timestamp":1}`,
			`{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"details":{},"isError":false,"timestamp":1}`},
	}
	for _, tt := range tests {
		m, err := DecodeMessage([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		once, _ := m.MarshalJSON()
		if string(once) != tt.want {
			t.Fatalf("normalised\n got %s\nwant %s", once, tt.want)
		}
		m2, err := DecodeMessage(once)
		if err != nil {
			t.Fatal(err)
		}
		if twice, _ := m2.MarshalJSON(); !bytes.Equal(twice, once) {
			t.Fatalf("not idempotent\n got %s\nwant %s", twice, once)
		}
	}
}

func TestDecodeMessageErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"content":[]}`, `{"role":""}`, `null`} {
		if _, err := DecodeMessage([]byte(in)); !errors.Is(err, ErrMessageRole) {
			t.Errorf("%s: err %v, want ErrMessageRole", in, err)
		}
	}
	for _, in := range []string{`[]`, `{"role":"user","content":7}`, `{"role":"assistant","usage":{"input":1.5}}`, `{"role":"user"`} {
		if _, err := DecodeMessage([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
	var u UserMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":[]}`), &u); !errors.Is(err, ErrMessageRole) {
		t.Errorf("user from assistant: err %v, want ErrMessageRole", err)
	}
}

// Whatever decodes, encodes to JSON that decodes to the same encoding:
// decode+encode is a projection, so loading and saving a session twice
// changes nothing the second time.
func FuzzDecodeMessageIdempotent(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"a":1}}],"usage":{"input":1,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":1,"cost":{"input":1e-7,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1,"ttft":2.5}`))
	f.Add([]byte(`{"role":"user","content":"hi \u2028","timestamp":1}`))
	f.Add([]byte(`{"role":"custom","customType":"x","content":[{"type":"audio","x":1}],"display":true,"details":null,"timestamp":1}`))
	f.Add([]byte(`{"role":"fileMention","files":[{"path":"a","content":"b","lineCount":0,"image":{"type":"image","data":"x","mimeType":"image/png"}}],"timestamp":1}`))
	f.Add([]byte(`{"role":"new","a":[1,{"b":"c"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeMessage(data)
		if err != nil {
			return
		}
		once, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(once) {
			t.Fatalf("invalid JSON from %s: %s", data, once)
		}
		m2, err := DecodeMessage(once)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", once, err)
		}
		if twice, _ := m2.MarshalJSON(); !bytes.Equal(twice, once) {
			t.Fatalf("not idempotent for %s\n got %s\nwant %s", data, twice, once)
		}
	})
}
