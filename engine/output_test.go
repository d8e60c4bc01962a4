package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// requiredValidator is a Validator that knows "type":"object" and
// "required", enough to tell a matching answer from another; it refuses
// a schema with "$ref".
type requiredValidator struct{}

func (requiredValidator) Check(schema []byte) error {
	if strings.Contains(string(schema), `"$ref"`) {
		return errors.New("it refers to a document outside itself")
	}
	return nil
}

func (requiredValidator) Validate(schema, args []byte) []string {
	return []string{"lenient Validate called"}
}

func (requiredValidator) ValidateValue(schema, doc []byte) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	var v map[string]any
	if json.Unmarshal(doc, &v) != nil {
		return []string{"root: got " + string(doc[:1]) + ", want object"}
	}
	var out []string
	for _, r := range s.Required {
		if _, ok := v[r]; !ok {
			out = append(out, fmt.Sprintf("root: missing property '%s'", r))
		}
	}
	sort.Strings(out)
	return out
}

const personSchema = `{"title":"A person","type":"object","required":["name","age"]}`

func outputSession(t *testing.T, rec *recorder, retries int, replies ...[]StreamEvent) (*Session, *scripted) {
	p := &scripted{calls: replies}
	return startSession(t, Config{Provider: p, Sink: rec, Validator: requiredValidator{}, OutputRetries: retries}), p
}

func TestOutputSchemaValidFirstTry(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s, p := outputSession(t, rec, 0, textEvents(Usage{}, "```json\n", `{"name": "Ada",`, ` "age": 36}`, "\n```"))
	res := promptResult(t, s, "who?", PromptOptions{OutputSchema: []byte(personSchema)})
	if res.Err != nil || string(res.Output) != `{"name":"Ada","age":36}` {
		t.Fatalf("result err %v output %s", res.Err, res.Output)
	}
	req := p.requests()[0]
	if req.Output == nil || req.Output.Name != "A_person" || string(req.Output.Schema) != personSchema {
		t.Fatalf("request output %+v", req.Output)
	}
	if !strings.HasSuffix(req.SystemPrompt, "with no other text before or after it:\n"+personSchema) {
		t.Fatalf("system prompt %q", req.SystemPrompt)
	}
	if got := lastFrame(rec, "output_schema_end"); got != `{"type":"output_schema_end","success":true,"retries":0,"output":{"name":"Ada","age":36}}` {
		t.Fatalf("end %s", got)
	}
}

func TestOutputSchemaRetryThenValid(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s, p := outputSession(t, rec, 0,
		textEvents(Usage{}, "Ada is 36."),
		textEvents(Usage{}, `{"name":"Ada"}`),
		textEvents(Usage{}, `{"name":"Ada","age":36}`))
	res := promptResult(t, s, "who?", PromptOptions{OutputSchema: []byte(personSchema)})
	if res.Err != nil || string(res.Output) != `{"name":"Ada","age":36}` {
		t.Fatalf("result err %v output %s", res.Err, res.Output)
	}
	reqs := p.requests()
	if len(reqs) != 3 {
		t.Fatalf("calls %d", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	d, ok := last.(*DeveloperMessage)
	if !ok || !strings.HasPrefix(joinText(d.Content), "Your final answer does not match the output schema:\n- root: the answer is not JSON (invalid character 'A'") {
		t.Fatalf("second call ends with %#v", last)
	}
	if got := joinText(reqs[2].Messages[len(reqs[2].Messages)-1].(*DeveloperMessage).Content); !strings.Contains(got, "\n- root: missing property 'age'\n") {
		t.Fatalf("third call told %q", got)
	}
	rec.mu.Lock()
	types := strings.Join(rec.types, " ")
	rec.mu.Unlock()
	if strings.Count(types, "output_schema_retry") != 2 || strings.Count(types, "agent_end") != 3 || !strings.HasSuffix(types, "agent_end output_schema_end") {
		t.Fatalf("events %s", types)
	}
	if got := lastFrame(rec, "output_schema_retry"); got != `{"type":"output_schema_retry","attempt":2,"maxAttempts":2,"errors":["root: missing property 'age'"]}` {
		t.Fatalf("retry %s", got)
	}
}

func TestOutputSchemaGivesUp(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s, p := outputSession(t, rec, 1, textEvents(Usage{}, `{"name":"Ada"}`))
	res := promptResult(t, s, "who?", PromptOptions{OutputSchema: []byte(personSchema)})
	var oe *OutputSchemaError
	if !errors.As(res.Err, &oe) || oe.Retries != 1 || res.Output != nil || res.Stop != StopStop {
		t.Fatalf("result %+v", res)
	}
	if oe.Error() != "The final answer does not match the output schema (2 attempts):\n- root: missing property 'age'" {
		t.Fatalf("error %q", oe.Error())
	}
	if n := len(p.requests()); n != 2 {
		t.Fatalf("calls %d", n)
	}
	if got := lastFrame(rec, "output_schema_end"); got != `{"type":"output_schema_end","success":false,"retries":1,"errors":["root: missing property 'age'"]}` {
		t.Fatalf("end %s", got)
	}
}

// A run that ends without a final answer (a failure) is not checked.
func TestOutputSchemaNotCheckedWithoutAnAnswer(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	failing := funcProvider(func(context.Context, *Request, func(StreamEvent) error) error {
		return &ProviderError{Kind: ErrorAuth, Message: "bad key"}
	})
	s := startSession(t, Config{Provider: failing, Sink: rec, Validator: requiredValidator{}, OutputRetries: -1})
	res := promptResult(t, s, "who?", PromptOptions{OutputSchema: []byte(personSchema)})
	if res.Stop != StopError || res.Output != nil || lastFrame(rec, "output_schema_end") != "" {
		t.Fatalf("result %+v", res)
	}
}

func TestOutputSchemaRefused(t *testing.T) {
	t.Parallel()
	s := startSession(t, Config{Provider: textReply("x"), Validator: requiredValidator{}})
	for schema, want := range map[string]string{
		`{"type":`:          "the output schema is not a usable JSON Schema: it is not valid JSON",
		`[1]`:               "the output schema is not a usable JSON Schema: it must be a JSON object",
		`{"$ref":"x.json"}`: "the output schema is not a usable JSON Schema: it refers to a document outside itself",
	} {
		if err := s.CheckOutputSchema([]byte(schema)); err == nil || err.Error() != want {
			t.Errorf("%s: %v", schema, err)
		}
	}
	// Queued behind a running run, it would not be the run's answer.
	var err error
	s.Call(func() {
		s.phase = PhaseRunning
		err = s.Prompt("later", PromptOptions{StreamingBehavior: "followUp", OutputSchema: []byte(personSchema)})
		s.phase = PhaseIdle
	})
	if err != ErrOutputQueued {
		t.Fatalf("queued: %v", err)
	}
}

func TestFormatName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "output", "A person": "A_person", "über/x-1": "berx-1", "???": "output",
		strings.Repeat("a", 70): strings.Repeat("a", 64)} {
		if got := formatName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
