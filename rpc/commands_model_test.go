package rpc

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/xcsh-go/xcsh/engine"
)

type stubModels struct {
	models []engine.Model
	keyed  map[string]bool // provider -> has a key
}

func (m stubModels) Available() []engine.Model  { return m.models }
func (m stubModels) HasKey(x engine.Model) bool { return m.keyed[x.Provider] }
func (m stubModels) Find(provider, id string) (engine.Model, bool) {
	for _, x := range m.models {
		if x.Provider == provider && x.ID == id {
			return x, true
		}
	}
	return engine.Model{}, false
}

// catalog configures a session with the models and the --models scope.
func catalog(models engine.ModelCatalog, scoped ...engine.ScopedModel) func(*engine.Config) {
	return func(c *engine.Config) { c.Models, c.Scoped = models, scoped }
}

func model(provider, id string, reasoning bool) engine.Model {
	m := engine.Model{ID: id, Name: id, API: "fake", Provider: provider, Reasoning: reasoning, Input: []string{"text"}}
	if reasoning {
		m.Thinking = &engine.ModelThinking{MinLevel: engine.ThinkingLow, MaxLevel: engine.ThinkingHigh, Mode: "effort"}
	}
	return m
}

func responses(t *testing.T, out string) map[string]gjson.Result {
	t.Helper()
	byID := map[string]gjson.Result{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		r := gjson.Parse(l)
		if id := r.Get("id"); id.Exists() {
			byID[id.String()] = r
		}
	}
	return byID
}

func TestModelCommands(t *testing.T) {
	t.Parallel()
	reg := stubModels{
		models: []engine.Model{model("a", "one", true), model("b", "two", false), model("nokey", "three", true)},
		keyed:  map[string]bool{"a": true, "b": true},
	}
	in := strings.Join([]string{
		`{"id":"l","type":"get_available_models"}`,
		`{"id":"s1","type":"set_model","provider":"a","modelId":"one"}`,
		`{"id":"t1","type":"set_thinking_level","level":"xhigh"}`,
		`{"id":"g1","type":"get_state"}`,
		`{"id":"s2","type":"set_model","provider":"a","modelId":"ONE"}`,
		`{"id":"s3","type":"set_model","provider":"nokey","modelId":"three"}`,
		`{"id":"s4","type":"set_model","provider":"a"}`,
		`{"id":"c1","type":"cycle_model"}`,
		`{"id":"g2","type":"get_state"}`,
		`{"id":"c2","type":"cycle_model"}`,
	}, "\n") + "\n"
	out := serve(t, strings.NewReader(in), true, Options{}, catalog(reg))
	r := responses(t, out)
	check := func(id, path, want string) {
		t.Helper()
		if got := r[id].Get(path).Raw; got != want {
			t.Errorf("%s %s = %s, want %s\n%s", id, path, got, want, r[id].Raw)
		}
	}
	check("l", "data.models.#", "3")
	check("s1", "data.id", `"one"`)
	check("g1", "data.model.id", `"one"`)
	check("g1", "data.thinkingLevel", `"high"`) // clamped to the new model
	check("s2", "error", `"Model not found: a/ONE"`)
	check("s3", "error", `"No API key for nokey/three"`)
	check("s4", "error", `"Model not found: a/undefined"`)
	check("c1", "data.model.id", `"two"`)
	check("c1", "data.isScoped", "false")
	check("c1", "data.thinkingLevel", "") // a model without reasoning has no level
	check("g2", "data.model.id", `"two"`)
	check("c2", "data.model.id", `"three"`)
}

func TestCycleModelScopedAndNull(t *testing.T) {
	t.Parallel()
	one, two := model("a", "one", true), model("a", "two", true)
	reg := stubModels{models: []engine.Model{one, two}, keyed: map[string]bool{"a": true}}
	in := `{"id":"s","type":"set_model","provider":"a","modelId":"one"}` + "\n" +
		`{"id":"c1","type":"cycle_model"}` + "\n" + `{"id":"c2","type":"cycle_model"}` + "\n"
	out := serve(t, strings.NewReader(in), true, Options{}, catalog(reg, engine.ScopedModel{Model: one, Thinking: "low"}, engine.ScopedModel{Model: two, Thinking: "medium"}))
	r := responses(t, out)
	if r["c1"].Get("data.model.id").String() != "two" || r["c1"].Get("data.thinkingLevel").String() != "medium" || !r["c1"].Get("data.isScoped").Bool() {
		t.Fatalf("c1 %s", r["c1"].Raw)
	}
	if r["c2"].Get("data.model.id").String() != "one" || r["c2"].Get("data.thinkingLevel").String() != "low" {
		t.Fatalf("c2 %s", r["c2"].Raw)
	}
	// One candidate: null (the key present).
	out = serve(t, strings.NewReader(`{"id":"c","type":"cycle_model"}`+"\n"), true, Options{}, catalog(stubModels{models: []engine.Model{one}, keyed: map[string]bool{"a": true}}))
	if !strings.Contains(out, `"id":"c","type":"response","command":"cycle_model","success":true,"data":null`) {
		t.Fatalf("single candidate:\n%s", out)
	}
}
