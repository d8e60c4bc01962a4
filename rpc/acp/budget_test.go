package acp

import (
	"strconv"
	"strings"
	"testing"
)

// configIDs lists the ids and current values of a response's options.
func configIDs(m map[string]any) string {
	r, _ := m["result"].(map[string]any)
	opts, _ := r["configOptions"].([]any)
	var out []string
	for _, o := range opts {
		o := o.(map[string]any)
		out = append(out, o["id"].(string)+"="+o["currentValue"].(string))
	}
	return strings.Join(out, " ")
}

// The budgets are configuration options once the session has one; a turn
// that reaches a budget answers max_tokens (the token budget) after a
// message saying why.
func TestBudgetConfigOptions(t *testing.T) {
	h := start(t, nil)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	h.until(byID(1))
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`)
	if got := configIDs(h.until(byID(2))); got != "model=fake/demo thought_level=off" {
		t.Fatalf("without a budget: %s", got)
	}
	set := func(id int, option, value string) map[string]any {
		h.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"session/set_config_option","params":{"sessionId":"0000000000000001","configId":"` + option + `","value":"` + value + `"}}`)
		return h.until(byID(float64(id)))
	}
	if got := configIDs(set(3, "max_tokens", "5")); got != "model=fake/demo thought_level=off max_cost=off max_tokens=5 max_time=off" {
		t.Fatalf("with a budget: %s", got)
	}
	if c := errCode(set(4, "max_time", "soon")); c != codeInvalidParams {
		t.Fatalf("bad value: code %v", c)
	}
	h.send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"0000000000000001","prompt":[{"type":"text","text":"hello there"}]}}`)
	reason := h.until(func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		c, _ := u["content"].(map[string]any)
		text, _ := c["text"].(string)
		return strings.HasPrefix(text, "Budget reached: ")
	})
	if text := reason["params"].(map[string]any)["update"].(map[string]any)["content"].(map[string]any)["text"]; text != "Budget reached: the run has used 5 tokens of its 5 (--max-tokens); the run stops here" {
		t.Errorf("reason %q", text)
	}
	if r, _ := h.until(byID(5))["result"].(map[string]any); r["stopReason"] != "max_tokens" {
		t.Errorf("prompt: %v", r)
	}
	// Off again, the options stay listed.
	if got := configIDs(set(6, "max_tokens", "off")); got != "model=fake/demo thought_level=off max_cost=off max_tokens=off max_time=off" {
		t.Fatalf("off: %s", got)
	}
	if got := configIDs(set(7, "max_time", "45m")); !strings.HasSuffix(got, "max_time=45m0s") {
		t.Fatalf("time: %s", got)
	}
}
