package models

import "github.com/xcsh-go/xcsh/engine"

// The providers and APIs of the built-in catalog.
const (
	anthropicURL = "https://api.anthropic.com"
	openaiURL    = "https://api.openai.com/v1"
	googleURL    = "https://generativelanguage.googleapis.com/v1beta"
)

var textImage = []string{"text", "image"}

func thinking(lo, hi engine.ThinkingLevel, mode string) *engine.ModelThinking {
	return &engine.ModelThinking{MinLevel: lo, MaxLevel: hi, Mode: mode}
}

// catalog is the bundled list of well-known hosted models, in registry
// order. Prices are dollars per million tokens (cache write at the
// 5-minute rate), as published by the vendors; checked December 2026
// against platform.claude.com and the pi/models.dev catalog. Anthropic
// models use the anthropic-messages API and OpenAI models chat completions
// (openai-completions), the two APIs our adapters speak.
//
// Thinking metadata follows agent-core §9.2: Claude opus/sonnet 4.6 and
// later use adaptive thinking (opus up to xhigh, sonnet up to high); older
// Claude and haiku the Anthropic budget range minimal..xhigh; GPT-5 before
// 5.2 minimal..high.
var catalog = []engine.Model{
	// Claude Opus 5.5: adaptive thinking is always on (it cannot be turned
	// off, per Anthropic's docs); the session may still send "off", which the
	// adapter has to map to the lowest effort. Cache read $0.20 (0.05x input)
	// from Anthropic's model page.
	{ID: "claude-opus-5-5", Name: "Claude Opus 5.5", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 4, Output: 20, CacheRead: 0.2, CacheWrite: 5},
		ContextWindow: 1000000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicAdapt)},
	// Claude Sonnet 5.5: cache reads went from $0.20 to $0.10 on 2026-10-07
	// (two pricing trackers report the cut; the cached doc page we saw
	// still said $0.20). We use the newer figure.
	{ID: "claude-sonnet-5-5", Name: "Claude Sonnet 5.5", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 2, Output: 10, CacheRead: 0.1, CacheWrite: 2.5},
		ContextWindow: 1000000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeAnthropicAdapt)},
	{ID: "claude-opus-4-6", Name: "Claude Opus 4.6", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		ContextWindow: 1000000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicAdapt)},
	{ID: "claude-opus-4-5", Name: "Claude Opus 4.5", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
		ContextWindow: 200000, MaxTokens: 64000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicBudget)},
	{ID: "claude-opus-4-1", Name: "Claude Opus 4.1", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
		ContextWindow: 200000, MaxTokens: 32000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicBudget)},
	// Claude Sonnet 4.5 is deprecated and, per Anthropic's docs, retired on
	// 2026-11-30. It stays because the spec's examples and users' saved
	// settings name it; requests to it may now fail at Anthropic.
	{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
		ContextWindow: 200000, MaxTokens: 64000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicBudget)},
	// Claude Haiku 5.5 is left out: its price depends on the prompt length
	// (two bands around 100k tokens), which ModelCost cannot express.
	{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", API: "anthropic-messages", Provider: "anthropic", BaseURL: anthropicURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
		ContextWindow: 200000, MaxTokens: 64000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingXHigh, modeAnthropicBudget)},

	// OpenAI. Newer GPT-5.x generations exist; these are the ones whose
	// figures we could confirm. OpenAI has no cache-write charge.
	{ID: "gpt-5.1", Name: "GPT-5.1", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 1.25, Output: 10, CacheRead: 0.125},
		ContextWindow: 400000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeEffort)},
	{ID: "gpt-5", Name: "GPT-5", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 1.25, Output: 10, CacheRead: 0.125},
		ContextWindow: 400000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeEffort)},
	{ID: "gpt-5-mini", Name: "GPT-5 Mini", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 0.25, Output: 2, CacheRead: 0.025},
		ContextWindow: 400000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeEffort)},
	{ID: "gpt-5-nano", Name: "GPT-5 Nano", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 0.05, Output: 0.4, CacheRead: 0.005},
		ContextWindow: 400000, MaxTokens: 128000, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeEffort)},
	{ID: "gpt-4.1", Name: "GPT-4.1", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Input: textImage, Cost: engine.ModelCost{Input: 2, Output: 8, CacheRead: 0.5},
		ContextWindow: 1047576, MaxTokens: 32768},
	{ID: "gpt-4.1-mini", Name: "GPT-4.1 mini", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Input: textImage, Cost: engine.ModelCost{Input: 0.4, Output: 1.6, CacheRead: 0.1},
		ContextWindow: 1047576, MaxTokens: 32768},
	// o4-mini takes reasoning_effort low, medium or high (no "minimal",
	// which came with GPT-5), so its range is set by hand: o-series ids
	// match no family of §9.2. Figures from memory of OpenAI's model page
	// ($1.10/$4.40, cached input $0.275, 200k context, 100k output): not
	// re-checked here.
	{ID: "o4-mini", Name: "o4-mini", API: "openai-completions", Provider: "openai", BaseURL: openaiURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 1.1, Output: 4.4, CacheRead: 0.275},
		ContextWindow: 200000, MaxTokens: 100000, Thinking: thinking(engine.ThinkingLow, engine.ThinkingHigh, modeEffort)},

	// Google's Gemini API (google-generative-ai). Gemini 2.5 Pro and 3 Pro
	// are left out for the reason Claude Haiku 5.5 is: their price doubles
	// past 200k prompt tokens. Figures from Google's pricing page as we
	// last read it (context caching at a tenth of the input price), not
	// re-checked here; Google has no cache-write charge beyond storage.
	{ID: "gemini-3-flash-preview", Name: "Gemini 3 Flash Preview", API: "google-generative-ai", Provider: "google", BaseURL: googleURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 0.5, Output: 3, CacheRead: 0.05},
		ContextWindow: 1048576, MaxTokens: 65536, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeGoogleLevel)},
	{ID: "gemini-2.5-flash", Name: "Gemini 2.5 Flash", API: "google-generative-ai", Provider: "google", BaseURL: googleURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 0.3, Output: 2.5, CacheRead: 0.03},
		ContextWindow: 1048576, MaxTokens: 65536, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeBudget)},
	{ID: "gemini-2.5-flash-lite", Name: "Gemini 2.5 Flash-Lite", API: "google-generative-ai", Provider: "google", BaseURL: googleURL,
		Reasoning: true, Input: textImage, Cost: engine.ModelCost{Input: 0.1, Output: 0.4, CacheRead: 0.01},
		ContextWindow: 1048576, MaxTokens: 65536, Thinking: thinking(engine.ThinkingMinimal, engine.ThinkingHigh, modeBudget)},
}

// envKeys lists, per provider, the environment variables that hold its API
// key, first match wins (agent-core §10.2). Anthropic's OAuth token comes
// first, as in the original; the adapter tells it from an API key by its
// sk-ant-oat prefix.
var envKeys = map[string][]string{
	"anthropic":      {"ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"},
	"openai":         {"OPENAI_API_KEY"},
	"google":         {"GEMINI_API_KEY", "GOOGLE_API_KEY"}, // the second is the genai SDKs' name
	"openrouter":     {"OPENROUTER_API_KEY"},
	"groq":           {"GROQ_API_KEY"},
	"xai":            {"XAI_API_KEY"},
	"mistral":        {"MISTRAL_API_KEY"},
	"ollama":         {"OLLAMA_API_KEY"},
	"lm-studio":      {"LM_STUDIO_API_KEY"},
	"llama.cpp":      {"LLAMA_CPP_API_KEY"},
	"vllm":           {"VLLM_API_KEY"},
	"litellm":        {"LITELLM_API_KEY"},
	"github-copilot": {"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"},
	// pi's name for an Azure OpenAI provider (its API's name too).
	"azure-openai-responses": {"AZURE_OPENAI_API_KEY"},
}

// Discovery names a provider whose models are listed at run time by asking
// its server (agent-core §10.4). The registry only describes it; the code
// that queries the server (the Ollama adapter's Discover, say) runs in the
// background and hands what it finds to Registry.Add.
type Discovery struct {
	Provider string // the provider name the discovered models get
	Type     string // ollama, llama.cpp, lm-studio or openai-compat
	API      string // the API the discovered models get
	BaseURL  string // the server's address
	Implicit bool   // true for the built-in local providers, false when models.yml asked for it
}

// localProviders are the original's implicit keyless discoverable
// providers, added when the configuration does not name them whole. The
// Ollama API is openai-responses in the original's code (its docs say
// completions); our Ollama adapter speaks the native API, so the wiring in
// cmd decides which adapter serves these models. llama.cpp is declared
// openai-responses there too, but llama-server speaks chat completions
// (at /v1/chat/completions, and /chat/completions at its root, which the
// original's base URL without /v1 relies on) and its Responses endpoint
// is recent and partial: its models speak openai-completions here.
var localProviders = []struct {
	name, api, env, url string
}{
	{"ollama", "openai-responses", "OLLAMA_BASE_URL", "http://127.0.0.1:11434"},
	{"llama.cpp", "openai-completions", "LLAMA_CPP_BASE_URL", "http://127.0.0.1:8080"},
	{"lm-studio", "openai-completions", "LM_STUDIO_BASE_URL", "http://127.0.0.1:1234/v1"},
}

func isLocalProvider(name string) bool {
	for _, p := range localProviders {
		if p.name == name {
			return true
		}
	}
	return false
}
