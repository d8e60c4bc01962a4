package openai

import (
	"encoding/json"
	"fmt"
)

// compat is the part of Model.Compat (models.yml "compat", agent-core.md
// §10.3) this adapter reads. Pointers tell "unset" from false where the
// default is true.
type compat struct {
	SupportsDeveloperRole            bool              `json:"supportsDeveloperRole"`
	SupportsReasoningEffort          *bool             `json:"supportsReasoningEffort"`
	SupportsUsageInStreaming         *bool             `json:"supportsUsageInStreaming"`
	SupportsStore                    bool              `json:"supportsStore"`
	MaxTokensField                   string            `json:"maxTokensField"`
	ThinkingFormat                   string            `json:"thinkingFormat"`
	ReasoningEffortMap               map[string]string `json:"reasoningEffortMap"`
	ReasoningContentField            string            `json:"reasoningContentField"`
	RequiresThinkingAsText           bool              `json:"requiresThinkingAsText"`
	RequiresToolResultName           bool              `json:"requiresToolResultName"`
	RequiresAssistantAfterToolResult bool              `json:"requiresAssistantAfterToolResult"`
	OpenRouterRouting                json.RawMessage   `json:"openRouterRouting"`
	ExtraBody                        map[string]any    `json:"extraBody"`
}

func parseCompat(raw json.RawMessage) (compat, error) {
	var c compat
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("openai: model compat: %w", err)
	}
	switch c.MaxTokensField {
	case "", "max_tokens", "max_completion_tokens":
	default:
		return c, fmt.Errorf("openai: model compat: unknown maxTokensField %q", c.MaxTokensField)
	}
	switch c.ThinkingFormat {
	case "", "openai", "openrouter", "zai", "qwen", "qwen-chat-template":
	default:
		return c, fmt.Errorf("openai: model compat: unknown thinkingFormat %q", c.ThinkingFormat)
	}
	return c, nil
}

func (c *compat) usageInStreaming() bool {
	return c.SupportsUsageInStreaming == nil || *c.SupportsUsageInStreaming
}

func (c *compat) reasoningEffort() bool {
	return c.SupportsReasoningEffort == nil || *c.SupportsReasoningEffort
}
