package rpc

import (
	"errors"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestSetBudget(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"id":"g0","type":"get_state"}`,
		`{"id":"b1","type":"set_budget","maxCost":0.5,"maxTokens":1000}`,
		`{"id":"b2","type":"set_budget","maxTimeMs":60000}`,
		`{"id":"g1","type":"get_state"}`,
		`{"id":"b3","type":"set_budget","maxCost":-1}`,
		`{"id":"b4","type":"set_budget","maxTokens":1.5}`,
		`{"id":"b5","type":"set_budget","maxTimeMs":"1m"}`,
		`{"id":"b6","type":"set_budget","maxCost":null,"maxTokens":0}`,
		`{"id":"b7","type":"set_budget","maxTimeMs":0}`,
		`{"id":"g2","type":"get_state"}`,
	}, "\n") + "\n"
	r := responses(t, serve(t, strings.NewReader(in), true, Options{}))
	check := func(id, path, want string) {
		t.Helper()
		if got := r[id].Get(path).Raw; got != want {
			t.Errorf("%s %s = %s, want %s\n%s", id, path, got, want, r[id].Raw)
		}
	}
	check("g0", "data.budget", "")
	check("b1", "data", `{"maxCost":0.5,"maxTokens":1000,"spent":{"cost":0,"tokens":0,"timeMs":0}}`)
	check("b2", "data", `{"maxCost":0.5,"maxTokens":1000,"maxTimeMs":60000,"spent":{"cost":0,"tokens":0,"timeMs":0}}`)
	check("g1", "data.budget", `{"maxCost":0.5,"maxTokens":1000,"maxTimeMs":60000,"spent":{"cost":0,"tokens":0,"timeMs":0}}`)
	check("b3", "error", `"Invalid set_budget command: \"maxCost\" must be a non-negative number"`)
	check("b4", "error", `"Invalid set_budget command: \"maxTokens\" must be a non-negative integer"`)
	check("b5", "error", `"Invalid set_budget command: \"maxTimeMs\" must be a non-negative integer"`)
	check("b6", "data", `{"maxTimeMs":60000,"spent":{"cost":0,"tokens":0,"timeMs":0}}`)
	check("b7", "data", `{"spent":{"cost":0,"tokens":0,"timeMs":0}}`)
	check("g2", "data.budget", "")
}

// continue fails with its id when there is nothing to continue (its
// success is the scenario budget_raise_and_continue's).
func TestContinueCommand(t *testing.T) {
	t.Parallel()
	in := `{"id":"c0","type":"continue"}` + "\n" + `{"id":"p","type":"prompt","message":"hi"}` + "\n" + `{"id":"c1","type":"continue"}` + "\n"
	r := responses(t, serve(t, strings.NewReader(in), true, Options{}))
	if got := r["c0"].Get("error").String(); got != "No messages to continue from" {
		t.Errorf("c0: %s", r["c0"].Raw)
	}
	// The prompt's run is still going (busy) or over (its answer is last).
	if got := r["c1"].Get("error").String(); got != "Cannot continue from message role: assistant" && got != engine.ErrBusy.Error() {
		t.Errorf("c1: %s", r["c1"].Raw)
	}
}

// refuseRefs is a validator that refuses schemas referring outside
// themselves, as the real one does.
type refuseRefs struct{}

func (refuseRefs) Check(schema []byte) error {
	if strings.Contains(string(schema), `"$ref"`) {
		return errors.New(`it refers to a document outside itself: "x.json"`)
	}
	return nil
}
func (refuseRefs) Validate(schema, args []byte) []string { return nil }

func TestPromptOutputSchemaRefused(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"id":"p1","type":"prompt","message":"hi","outputSchema":[1]}`,
		`{"id":"p2","type":"prompt","message":"hi","outputSchema":{"$ref":"x.json"}}`,
		`{"id":"s1","type":"steer","message":"hi","outputSchema":{"type":"object"}}`,
		`{"id":"p3","type":"prompt","message":"hi","outputSchema":{"type":"object"}}`,
	}, "\n") + "\n"
	out := serve(t, strings.NewReader(in), true, Options{}, func(c *engine.Config) { c.Validator = refuseRefs{} })
	r := responses(t, out)
	if got := r["p1"].Get("error").String(); got != `Invalid prompt command: "outputSchema" must be a JSON Schema object` {
		t.Errorf("p1: %s", got)
	}
	if got := r["p2"].Get("error").String(); got != `Invalid prompt command: "outputSchema" is not a usable JSON Schema: it refers to a document outside itself: "x.json"` {
		t.Errorf("p2: %s", got)
	}
	if got := r["s1"].Get("error").String(); got != engine.ErrOutputQueued.Error() {
		t.Errorf("s1: %s", got)
	}
	// The echo's answer is not JSON: the model is told and asked again.
	if !strings.Contains(out, `{"type":"output_schema_retry","attempt":1,"maxAttempts":2,"errors":["root: the answer is not JSON (invalid character 'e' looking for beginning of value)"]}`) {
		t.Errorf("no retry:\n%s", out)
	}
	if !strings.Contains(out, `{"type":"output_schema_end","success":false,"retries":2,"errors":[`) {
		t.Errorf("no end:\n%s", out)
	}
}
