// Package models is the model registry: the built-in catalog of hosted
// models, the custom providers of <agentDir>/models.json (pi's format) and
// <agentDir>/models.yml (the original's), the models discovered at run
// time, and the credentials to call them.
//
// # Sources and order
//
// The local providers ollama, llama.cpp and lm-studio are discovered at
// run time (Discoveries) unless the configuration defines one whole (models
// of its own, or a discovery block); an entry that only adjusts one
// (modelOverrides, compat, baseUrl) applies to what its server reports.
//
// Registry order, which get_available_models and cycle_model follow, is
// the original's (agent-core §10.2): the catalog; then, provider by
// provider in file order, the provider's baseUrl and compat laid onto its
// built-in models, its modelOverrides, and its custom models (a custom
// model with the id of an existing one replaces it in place, else it is
// appended); then models added at run time by Add. models.json is read
// before models.yml; a provider named in both takes its models.yml
// definition whole.
//
// # The files
//
// Both files have the same fields (models.json in JSON, models.yml in
// YAML):
//
//	providers:
//	  my-vllm:
//	    baseUrl: http://127.0.0.1:8000/v1
//	    api: openai-completions        # default for the provider's models
//	    apiKey: MY_VLLM_KEY            # an environment variable's name, or a literal
//	    auth: apiKey                   # or none: no key needed
//	    authHeader: true               # also send Authorization: Bearer <key>
//	    headers: {X-Team: platform}    # values resolved like apiKey
//	    compat: {maxTokensField: max_tokens}   # passed raw to the adapter (Model.Compat)
//	    models:
//	      - id: qwen3-coder            # the only required field
//	        name: Qwen3 Coder          # default: id
//	        api: openai-completions    # default: the provider's
//	        reasoning: false           # default false
//	        input: [text]              # default [text]
//	        cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0}  # default zeros, $/M tokens
//	        contextWindow: 128000      # default 128000
//	        maxTokens: 16384           # default 16384
//	        thinking: {minLevel: low, maxLevel: high, mode: effort}  # inferred when absent
//	        headers: {...}
//	        compat: {...}              # merged key by key over the provider's
//	    modelOverrides:                # patches of existing (built-in) models by id
//	      claude-opus-4-5: {name: Opus, contextWindow: 100000}
//	    discovery: {type: ollama}      # ollama | llama.cpp | lm-studio | openai-compat; needs api
//
// Validation follows agent-core §10.3: a provider with models needs
// baseUrl, an api (on the provider or each model) and an apiKey unless
// auth is none; a provider without models must set something; contextWindow
// and maxTokens must be positive integers; discovery needs a provider-level
// api. Beyond the original, api must be one the family knows (a typo
// would only fail at the first prompt), and one this build has an
// adapter for when Load is given WithAPIs (cmd gives its adapters' list);
// baseUrl must be an http:// or https:// URL, and the aliases of a
// models.yml may add at most 100,000 nodes (a 1 KB alias bomb expands to
// 9^9). Types are checked too. An invalid file fails Load with a
// *ConfigError such as
//
//	/home/u/.xcsh/agent/models.yml:12: providers.my-vllm.models[0].contextWindow: must be positive
//
// Unknown keys are ignored, so files written for newer versions load,
// except a near miss of a provider's or a model's key (baseURL for
// baseUrl, maxToken), which is a typo whose value would be lost: "unknown
// key, did you mean baseUrl?" (keytypo.go). The
// original's "equivalence" table is accepted and ignored. An apiKey or
// header value of the form "!command" (run a shell command) is not
// supported: it resolves to nothing and is never sent as is.
//
// # Keys
//
// An apiKey or header value shaped like an environment variable name
// (^[A-Z][A-Z0-9]*(_[A-Z][A-Z0-9]*)+$) is looked up through the injected
// environment function; unset, it means no key (or no header), never the
// name itself. Providers without a configured key use their usual
// variables (ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY, OPENAI_API_KEY,
// OPENROUTER_API_KEY, ...). SetKeyOverride (the CLI's --api-key) wins over
// both. The local providers ollama, llama.cpp and lm-studio, providers with
// auth: none and those marked by SetKeyless need no key. A model is
// available when its provider needs no key or has one.
//
// # Secrets
//
// Keys and header values never appear in an error's text, in a Registry's
// String, or in a Model: Model.Headers, which get_state and
// get_available_models serialise as the original does, keeps only literal
// values under names that do not look like credentials (authorization,
// cookie, or containing key, token, secret, auth, password, credential,
// session, signature); values taken from the environment are never shown.
// Adapters get the full set from Registry.Headers and the key from
// Registry.APIKey. A literal secret under an innocent-looking header name
// would still be shown: name such headers plainly, or use an environment
// variable.
//
// # Thinking
//
// SupportedEfforts and ClampThinking implement the per-family rules of
// agent-core §9.2 (GPT versions, Gemini 3 Pro's low/high, Claude 4.6+
// adaptive thinking), which engine.ClampThinking's contiguous min..max
// range cannot express. Reasoning models without thinking metadata get it
// inferred when they enter the registry.
package models
