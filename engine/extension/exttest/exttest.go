// Package exttest is a scripted extension for tests: a program whose
// behaviour is a JSON plan, so a scenario (or a unit test) describes the
// extension it needs in a few lines instead of a program. It is written
// with extkit, so every scenario that uses it tests the helper library
// too. cmd/xcsh's tests install it as xcsh-testext; the tests of package
// extension run their own binary as it.
//
// A plan:
//
//	{
//	  "name": "gate",
//	  "init": [actions],                      run before the handshake is answered
//	  "on": {"tool_call": [rule, ...], ...},  handlers; the first rule that matches runs
//	  "tools": [{"name","description","parameters","exclusive","run":[actions]}],
//	  "commands": [{"name","description","run":[actions]}]
//	}
//
// A rule is {"when": "text", "run": [actions]}: it matches when the
// event's compact JSON contains the text (no "when": always). Actions run
// in order; each is an object with one of these keys:
//
//	{"call": "ui.confirm", "params": {...}, "as": "c"}  call the agent; the answer (or {"error": msg}) is $c
//	{"return": value}                                    the handler's answer
//	{"error": "message"}                                 the handler fails
//	{"if": "${c.confirmed}", "then": [...], "else": [...]}
//	{"update": {...}}                                    a tool's partial result
//	{"hang": true}                                       wait until the request is withdrawn
//	{"exit": 3}                                          exit at once with this status
//	{"print": "text"} / {"stderr": "text"}              write a raw line to stdout / stderr
//	{"spawn": ["sleep", "600"], "pidfile": "child.pid"} start a process that outlives nothing
//	{"flood": "ui.confirm", "params": {...}, "count": 200, "as": "f"}  count calls at once; $f.refused counts the refusals
//	{"file": "path", "write": "text"}                   append a line to a file
//	{"writepid": "ext.pid"}                              write the extension's process id to a file
//	{"env": ["NAME", ...], "as": "e"}                    $e.NAME is the variable's value in the extension ("" unset)
//
// Strings are templates: "${event.input.command}" is a path into the
// event ("event") or a variable set with "as"; a string that is exactly one
// placeholder becomes the value itself, otherwise the text is spliced in.
package exttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xcsh-go/xcsh/engine/extension/extkit"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// Plan is an extension's script.
type Plan struct {
	Name     string            `json:"name"`
	Init     []Action          `json:"init"`
	On       map[string][]Rule `json:"on"`
	Tools    []ToolPlan        `json:"tools"`
	Commands []CommandPlan     `json:"commands"`
}

// Rule runs its actions when the event contains When.
type Rule struct {
	When string   `json:"when"`
	Run  []Action `json:"run"`
}

// ToolPlan is a tool and what a call does.
type ToolPlan struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Exclusive   bool            `json:"exclusive"`
	Run         []Action        `json:"run"`
}

// CommandPlan is a slash command and what it does.
type CommandPlan struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Run         []Action `json:"run"`
}

// Action is one step (see the package comment).
type Action map[string]json.RawMessage

// Main runs the plan named by the first argument (a file) and exits.
func Main() {
	os.Exit(run(os.Args[1:]))
}

// MainArgs runs the plan file named in args and returns the exit status.
func MainArgs(args []string) int { return run(args) }

func run(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: xcsh-testext PLAN.json")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		fmt.Fprintln(os.Stderr, "plan:", err)
		return 2
	}
	r := &runner{vars: map[string]any{}}
	if _, err := r.do(nil, p.Init, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return extkit.Run(r.extension(&p))
}

type runner struct {
	mu   sync.Mutex
	vars map[string]any
}

func (r *runner) extension(p *Plan) *extkit.Extension {
	x := &extkit.Extension{Name: p.Name}
	for name, rules := range p.On {
		x.On(name, func(c *extkit.Context, ev extkit.Event) (any, error) {
			// The event is decoded only when a rule looks into it (the
			// benchmarks subscribe to agent_end and do nothing).
			var event any
			var compact []byte
			decode := func() {
				if compact == nil {
					_ = json.Unmarshal(ev.Raw, &event)
					compact, _ = json.Marshal(event)
				}
			}
			for _, rule := range rules {
				if rule.When != "" {
					decode()
					if !strings.Contains(string(compact), rule.When) {
						continue
					}
				}
				if len(rule.Run) > 0 {
					decode()
				}
				return r.do(c, rule.Run, event)
			}
			return nil, nil
		})
	}
	for _, t := range p.Tools {
		x.Tools = append(x.Tools, extkit.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters, Exclusive: t.Exclusive,
			Execute: func(c *extkit.Context, call extkit.ToolCall) (extkit.ToolResult, error) {
				var input any
				_ = json.Unmarshal(call.Input, &input)
				res, err := r.do(c, t.Run, map[string]any{"toolCallId": call.ID, "toolName": call.Name, "input": input})
				if err != nil {
					return extkit.ToolResult{}, err
				}
				var out extkit.ToolResult
				b, _ := json.Marshal(res)
				if err := json.Unmarshal(b, &out); err != nil {
					return extkit.ToolResult{}, err
				}
				return out, nil
			}})
	}
	for _, cmd := range p.Commands {
		x.Commands = append(x.Commands, extkit.Command{Name: cmd.Name, Description: cmd.Description,
			Run: func(c *extkit.Context, args string) error {
				_, err := r.do(c, cmd.Run, map[string]any{"args": args})
				return err
			}})
	}
	return x
}

// do runs actions for event and returns the handler's answer.
func (r *runner) do(c *extkit.Context, actions []Action, event any) (any, error) {
	for _, a := range actions {
		get := func(k string) (any, bool) {
			raw, ok := a[k]
			if !ok {
				return nil, false
			}
			var v any
			_ = json.Unmarshal(raw, &v)
			return r.expand(v, event), true
		}
		str := func(k string) string {
			v, _ := get(k)
			s, _ := v.(string)
			return s
		}
		switch {
		case a["return"] != nil:
			v, _ := get("return")
			return v, nil
		case a["error"] != nil:
			return nil, fmt.Errorf("%s", str("error"))
		case a["call"] != nil:
			params, _ := get("params")
			pm, _ := params.(map[string]any)
			var res any
			if err := c.Call(str("call"), pm, &res); err != nil {
				res = map[string]any{"error": errText(err)}
			}
			r.set(str("as"), res)
		case a["if"] != nil:
			cond, _ := get("if")
			branch := "else"
			if truthy(cond) {
				branch = "then"
			}
			var sub []Action
			if raw := a[branch]; raw != nil {
				_ = json.Unmarshal(raw, &sub)
			}
			if res, err := r.do(c, sub, event); err != nil || res != nil {
				return res, err
			}
		case a["update"] != nil:
			v, _ := get("update")
			b, _ := json.Marshal(v)
			var tr extkit.ToolResult
			_ = json.Unmarshal(b, &tr)
			_ = c.Update(tr)
		case a["hang"] != nil:
			if c == nil {
				// Nothing else runs yet (init): the runtime reports a
				// bare select {} as a deadlock and exits, unless some
				// package linked in keeps a thread waiting (net/http did
				// while engine linked it). A sleeping goroutine is never
				// reported.
				for {
					time.Sleep(time.Hour)
				}
			}
			<-c.Context().Done()
			return nil, c.Context().Err()
		case a["exit"] != nil:
			v, _ := get("exit")
			n, _ := v.(float64)
			os.Exit(int(n))
		case a["print"] != nil:
			fmt.Fprintln(os.Stdout, str("print"))
		case a["stderr"] != nil:
			fmt.Fprintln(os.Stderr, str("stderr"))
		case a["spawn"] != nil:
			v, _ := get("spawn")
			argv := strs(v)
			cmd := exec.Command(argv[0], argv[1:]...)
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			if f := str("pidfile"); f != "" {
				_ = os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
			}
		case a["flood"] != nil:
			var refused atomic.Int64
			var wg sync.WaitGroup
			n, _ := get("count")
			count, _ := n.(float64)
			params, _ := get("params")
			for i := 0; i < int(count); i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pm := map[string]any{}
					if m, ok := params.(map[string]any); ok {
						for k, v := range m {
							pm[k] = v
						}
					}
					var je *jsonrpc.Error
					if err := c.Call(str("flood"), pm, nil); err != nil && asRPC(err, &je) && je.Code == jsonrpc.CodeTooMany {
						refused.Add(1)
					}
				}()
			}
			wg.Wait()
			r.set(str("as"), map[string]any{"refused": refused.Load()})
		case a["env"] != nil:
			v, _ := get("env")
			vals := map[string]any{}
			for _, name := range strs(v) {
				vals[name] = os.Getenv(name)
			}
			r.set(str("as"), vals)
		case a["writepid"] != nil:
			_ = os.WriteFile(str("writepid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		case a["file"] != nil:
			f, err := os.OpenFile(str("file"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, err
			}
			fmt.Fprintln(f, str("write"))
			f.Close()
		default:
			return nil, fmt.Errorf("unknown action %v", a)
		}
	}
	return nil, nil
}

func asRPC(err error, target **jsonrpc.Error) bool {
	je, ok := err.(*jsonrpc.Error)
	if ok {
		*target = je
	}
	return ok
}

func errText(err error) string {
	if je, ok := err.(*jsonrpc.Error); ok {
		return je.Message
	}
	return err.Error()
}

func (r *runner) set(name string, v any) {
	if name == "" {
		return
	}
	r.mu.Lock()
	r.vars[name] = v
	r.mu.Unlock()
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, fmt.Sprint(x))
		}
	}
	return out
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != "" && x != "false"
	case float64:
		return x != 0
	}
	return true
}

// expand replaces the placeholders in v.
func (r *runner) expand(v any, event any) any {
	switch x := v.(type) {
	case string:
		return r.expandString(x, event)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.expand(e, event)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.expand(e, event)
		}
		return out
	}
	return v
}

func (r *runner) expandString(s string, event any) any {
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 {
		return r.lookup(s[2:len(s)-1], event)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		v := r.lookup(s[i+2:i+j], event)
		if t, ok := v.(string); ok {
			b.WriteString(t)
		} else {
			enc, _ := json.Marshal(v)
			b.Write(enc)
		}
		s = s[i+j+1:]
	}
}

func (r *runner) lookup(path string, event any) any {
	parts := strings.Split(path, ".")
	var cur any
	if parts[0] == "event" {
		cur = event
	} else {
		r.mu.Lock()
		cur = r.vars[parts[0]]
		r.mu.Unlock()
	}
	for _, p := range parts[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
