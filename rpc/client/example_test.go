package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/xcsh-go/xcsh/rpc/client"
)

// Start the agent with the fake provider, offer the model a host tool,
// prompt, and print the streamed text until the run ends. (Compiled, not
// run: it needs the xcsh binary in PATH.)
func ExampleStart() {
	ctx := context.Background()
	c, err := client.Start(ctx, client.Options{
		Path: "xcsh",
		Args: []string{"--provider", "fake", "--no-session"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.RegisterHostTools(ctx, []client.HostTool{{
		Name:        "clock",
		Description: "The host's current time",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, args json.RawMessage, update func(json.RawMessage)) (client.Result, error) {
			return client.TextResult(time.Now().Format(time.RFC3339)), nil
		},
	}})
	if err != nil {
		log.Fatal(err)
	}

	// Subscribe before prompting, so no event is missed.
	events, cancel := c.Subscribe(64)
	defer cancel()
	h, err := c.Prompt(ctx, "demo:tool clock {}", client.PromptOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for ev := range events {
		if kind, delta, ok := ev.AssistantEvent(); ok && kind == "text_delta" {
			fmt.Print(delta)
		}
		if ev.Type == "agent_end" {
			break
		}
	}
	if err := h.Err(ctx); err != nil {
		log.Fatal(err) // the prompt never started (busy, no API key, …)
	}
}
