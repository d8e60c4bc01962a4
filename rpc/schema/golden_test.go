package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	tschema "github.com/xcsh-go/xcsh/engine/tools/schema"
)

// goldenDir is the repository's golden transcripts.
const goldenDir = "../../golden"

// validator validates lines against one definition of a protocol's
// schema (each document compiled once).
type validator struct {
	v    *tschema.Validator
	mu   sync.Mutex
	docs map[string][]byte
	top  *Schema
}

func newValidator(t testing.TB, protocol string) *validator {
	t.Helper()
	s, err := Generate(protocol)
	if err != nil {
		t.Fatal(err)
	}
	return &validator{v: tschema.New(), docs: map[string][]byte{}, top: s}
}

// doc is the schema with its root replaced by a reference to def.
func (v *validator) doc(def string) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d, ok := v.docs[def]; ok {
		return d
	}
	root := *v.top
	root.AnyOf, root.OneOf, root.Ref = nil, nil, "#/$defs/"+def
	d, err := marshal(&root)
	if err != nil {
		panic(err)
	}
	v.docs[def] = d
	return d
}

// check validates line against def; on failure, the problems of the
// definition its discriminators pick (pick), which name a JSON pointer.
func (v *validator) check(def string, line []byte, pick func(map[string]json.RawMessage) string) []string {
	probs := v.v.ValidateValue(v.doc(def), line)
	if probs == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) == nil && pick != nil {
		if d := pick(m); d != "" && v.top.Defs.Get(d) != nil {
			if p := v.v.ValidateValue(v.doc(d), line); p != nil {
				return append([]string{"as " + d + ":"}, p...)
			}
			return append([]string{"valid as " + d + " but not as " + def + ":"}, probs...)
		}
	}
	return probs
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// pickOutput names the definition a frame the agent wrote should match.
func pickOutput(m map[string]json.RawMessage) string {
	typ := jsonString(m["type"])
	switch typ {
	case "response":
		if string(m["success"]) == "true" {
			return pascal(jsonString(m["command"])) + "Response"
		}
		return "ErrorResponse"
	case "ready":
		return "ReadyFrame"
	case "extension_ui_request":
		method := jsonString(m["method"])
		for _, f := range uiRequests {
			if f.Method == method {
				return f.Name
			}
		}
		return ""
	}
	for _, f := range events {
		if f.Event.EventType() == typ {
			return f.Name
		}
	}
	return ""
}

// pickInput names the definition a host's line should match.
func pickInput(m map[string]json.RawMessage) string {
	typ := jsonString(m["type"])
	switch typ {
	case "extension_ui_response":
		return "ExtensionUiResponse"
	case "host_tool_result", "host_tool_update":
		return pascal(typ)
	}
	return pascal(typ) + "Command"
}

// goldenKind says how a golden file is validated: "rpc" (the frames of
// --mode rpc, its first line ready), or why it is not.
func goldenKind(path string, first []byte) (kind, why string) {
	base := filepath.Base(path)
	switch {
	case strings.Contains(path, string(filepath.Separator)+"acp"+string(filepath.Separator)) || strings.HasPrefix(base, "serve_acp"):
		return "acp", ""
	case strings.HasPrefix(base, "serve_"):
		return "server", ""
	case strings.HasSuffix(base, "_requests.jsonl"):
		return "", "a provider's requests"
	case strings.HasSuffix(base, ".file.jsonl"):
		return "", "a session file"
	case strings.HasPrefix(base, "harness_"):
		return "", "the harness's own test data"
	case strings.HasPrefix(base, "replay_"):
		return "", "replay reports"
	case strings.HasPrefix(base, "schema_"):
		return "", "the schema's own printed text"
	case bytes.HasPrefix(first, []byte(`{"xcshReplay"`)):
		return "transcript", ""
	case bytes.HasPrefix(first, []byte(`{"type":"ready"`)):
		return "rpc", ""
	case bytes.HasPrefix(first, []byte(`{"type":"session"`)):
		return "json", ""
	}
	return "", "not a protocol transcript (first line " + string(first[:min(len(first), 40)]) + ")"
}

// goldenFiles lists every golden file.
func goldenFiles(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir(goldenDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readLines(t testing.TB, path string) [][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<28)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}

// TestGoldensValidate validates every line of every golden transcript,
// inputs and outputs, against the protocol's schema. A failure names the
// file, the line and the JSON pointer of each problem.
func TestGoldensValidate(t *testing.T) {
	rpcV := newValidator(t, "rpc")
	acpV := newValidator(t, "acp-ext")
	var serverV *validator
	checked, refused, skipped := 0, 0, map[string]int{}
	for _, path := range goldenFiles(t) {
		lines := readLines(t, path)
		if len(lines) == 0 {
			continue
		}
		kind, why := goldenKind(path, lines[0])
		if kind == "" {
			skipped[why]++
			continue
		}
		// A transcript's inputs the agent refused (answered success:false,
		// by id) may be invalid on purpose: they test the refusal.
		failedIDs := map[string]bool{}
		if kind == "transcript" {
			for _, line := range lines[1:] {
				var e struct{ Out json.RawMessage }
				var r struct {
					ID      json.RawMessage
					Type    string
					Success *bool
				}
				if json.Unmarshal(line, &e) == nil && e.Out != nil && json.Unmarshal(e.Out, &r) == nil &&
					r.Type == "response" && r.Success != nil && !*r.Success && r.ID != nil {
					failedIDs[string(r.ID)] = true
				}
			}
		}
		if kind == "server" {
			if serverV == nil {
				serverV = newValidator(t, "server")
			}
		}
		for i, line := range lines {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var probs []string
			switch kind {
			case "rpc":
				probs = rpcV.check("RpcOutput", line, pickOutput)
			case "json":
				if i == 0 {
					continue // the session header of --mode json
				}
				probs = rpcV.check("AgentEvent", line, pickOutput)
			case "server":
				probs = serverV.check("RpcOutput", line, pickOutput)
			case "acp":
				// ACP is not our protocol: only our parts are checked (the
				// _xcsh messages and the _meta.xcsh objects).
				var n int
				if probs, n = checkACP(acpV, line); n == 0 {
					continue
				}
			case "transcript":
				var e struct {
					In, Out json.RawMessage
				}
				if i == 0 || json.Unmarshal(line, &e) != nil {
					continue
				}
				switch {
				case e.In != nil && e.In[0] == '{':
					probs = rpcV.check("RpcInput", e.In, pickInput)
					var id struct{ ID json.RawMessage }
					if probs != nil && json.Unmarshal(e.In, &id) == nil && id.ID != nil && failedIDs[string(id.ID)] {
						probs = nil
						refused++
					}
				case e.Out != nil:
					probs = rpcV.check("RpcOutput", e.Out, pickOutput)
				}
			}
			checked++
			if probs != nil {
				t.Errorf("%s:%d: %s\n\t%s", path, i+1, short(line), strings.Join(probs, "\n\t"))
			}
		}
	}
	t.Logf("%d lines validated (%d inputs invalid and refused by the agent, as they should be; of ACP transcripts, only the lines with our _xcsh parts); files skipped: %v", checked, refused, skipped)
	if checked < 5000 {
		t.Errorf("only %d golden lines validated: is the classifier skipping transcripts?", checked)
	}
}

func short(b []byte) string {
	if len(b) > 160 {
		return fmt.Sprintf("%s… (%d bytes)", b[:160], len(b))
	}
	return string(b)
}

// checkACP validates our parts of an ACP line (bare, or wrapped as
// {"a2c":…} or {"c2a":…} in golden/acp/): an _xcsh message, initialize's
// _meta.xcsh, session/list's sessions' _meta.xcsh. n counts the parts.
func checkACP(v *validator, line []byte) (probs []string, n int) {
	var w struct{ A2C, C2A json.RawMessage }
	if json.Unmarshal(line, &w) == nil {
		if w.A2C != nil {
			line = w.A2C
		} else if w.C2A != nil {
			line = w.C2A
		}
	}
	var m struct {
		Method string
		Result struct {
			Meta struct {
				Xcsh json.RawMessage
			} `json:"_meta"`
			AgentCapabilities json.RawMessage
			Sessions          []struct {
				Meta struct {
					Xcsh json.RawMessage
				} `json:"_meta"`
			}
		}
	}
	if json.Unmarshal(line, &m) != nil {
		return nil, 0
	}
	if strings.HasPrefix(m.Method, "_xcsh/") {
		n++
		probs = append(probs, v.check("XcshMessage", line, nil)...)
	}
	if m.Result.AgentCapabilities != nil {
		n++
		if m.Result.Meta.Xcsh == nil {
			probs = append(probs, "initialize: no _meta.xcsh")
		} else {
			probs = append(probs, v.check("InitializeMeta", m.Result.Meta.Xcsh, nil)...)
		}
	}
	for _, s := range m.Result.Sessions {
		if s.Meta.Xcsh != nil {
			n++
			probs = append(probs, v.check("LiveMeta", s.Meta.Xcsh, nil)...)
		}
	}
	return probs, n
}
