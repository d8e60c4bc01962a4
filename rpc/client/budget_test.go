package client

import (
	"encoding/json"
	"strings"
	"testing"
)

// A run stopped on its budget resumes after SetBudget and Continue; the
// state shows the budget; an output schema reaches the agent.
func TestBudgetContinueAndOutputSchema(t *testing.T) {
	t.Parallel()
	c, _ := startAgent(t, nil, "--no-session", "--max-tokens", "5", "--output-retries", "1")
	ctx := testCtx(t)
	events, cancel := c.Subscribe(0)
	defer cancel()
	if _, err := c.Prompt(ctx, "hello", PromptOptions{}); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events, IsType("agent_end"))
	if end := string(evs[len(evs)-1].Raw); !strings.Contains(end, `"stopReason":"budget_reached","budget":{"name":"tokens","spent":5,"limit":5}`) {
		t.Fatalf("agent_end %s", end)
	}
	st, err := c.GetState(ctx)
	if err != nil || st.Budget == nil || st.Budget.MaxTokens != 5 || st.Budget.Spent.Tokens != 5 {
		t.Fatalf("state budget %+v, %v", st.Budget, err)
	}
	more := int64(1000)
	b, err := c.SetBudget(ctx, Budget{MaxTokens: &more})
	if err != nil || b.MaxTokens != 1000 || b.Spent.Tokens != 5 {
		t.Fatalf("set_budget %+v, %v", b, err)
	}
	if err := c.Continue(ctx); err != nil {
		t.Fatal(err)
	}
	evs = collect(t, events, IsType("agent_end"))
	if end := string(evs[len(evs)-1].Raw); strings.Contains(end, "budget_reached") || !strings.Contains(end, "You said: hello") {
		t.Fatalf("continued run %s", end)
	}
	if err := c.Continue(ctx); err == nil || !strings.Contains(err.Error(), "Cannot continue from message role: assistant") {
		t.Fatalf("continue after an answer: %v", err)
	}
	// The demo never answers JSON: the schema's end says so.
	if _, err := c.Prompt(ctx, "hi", PromptOptions{OutputSchema: json.RawMessage(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	evs = collect(t, events, IsType("output_schema_end"))
	if end := string(evs[len(evs)-1].Raw); !strings.HasPrefix(end, `{"type":"output_schema_end","success":false,"retries":1,`) {
		t.Fatalf("output_schema_end %s", end)
	}
}
