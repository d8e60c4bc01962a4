package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/safefile"
)

// Defaults of a custom model definition (pi's models.json and the
// original's models.yml agree on them).
const (
	defaultContextWindow = 128000
	defaultMaxTokens     = 16384
)

// envNameRE is the shape of an apiKey or header value that names an
// environment variable (agent-core §10.3). Such a value is looked up and,
// when the variable is unset, means "no value": it is never sent as is.
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z][A-Z0-9]*)+$`) })

// Registry is the list of models a session can use: the built-in catalog,
// then the custom providers of <agentDir>/models.json and models.yml, then
// the models discovered at run time. It also answers which models have
// credentials and what those credentials are.
//
// A Registry is safe for concurrent use: discovery adds models from its own
// goroutine while the session reads. The models it returns are copies.
type Registry struct {
	env func(string) string // injected; never os.Getenv here, so tests are hermetic

	mu sync.RWMutex
	// Everything below is guarded by mu.
	models       []engine.Model             // registry order; Headers hold only non-secret entries
	index        map[modelKey]int           // position of each model in models
	providers    map[string]*providerConfig // the configured providers by name
	modelHeaders map[modelKey][]header      // per-model headers (custom models, overrides, discovered)
	keyOverrides map[string]string          // --api-key, by provider
	keyless      map[string]bool            // providers registered at run time as needing no key
	discoveries  []Discovery
}

type modelKey struct{ provider, id string }

func keyOf(m engine.Model) modelKey { return modelKey{m.Provider, m.ID} }

// maxConfigBytes caps a models file. Loading is linear, but a file is
// read whole into a tree of nodes before the registry is built: about 28
// bytes allocated per byte of JSON and 60 per byte of YAML, and 15 µs of
// CPU per model (TestLoadAllocationLinear holds the ratio). At 56 MiB that
// was 34 s and 2 GB; at this cap it is at most ~120 MB (JSON) or ~250 MB
// (YAML) and about a second. A real file, even with every model of
// several gateways, is well under 1 MiB; 4 MiB is 57,000 models.
const maxConfigBytes = 4 << 20

// Load builds a registry from the built-in catalog and the custom provider
// files in agentDir (none when agentDir is ""). env looks up environment
// variables for keys and header values; nil means an empty environment.
//
// models.json (pi's format) is read first, then models.yml (the
// original's). A provider named in both files takes its models.yml
// definition whole, in the place models.json gave it. A missing file is
// not an error; an unreadable or invalid one is, and a *ConfigError names
// the file, the line and the field. The files are read under engine/safefile's
// rule: a FIFO, a device, a link to /dev/zero or a file over 4 MiB is
// refused ("models: <path>: it is a named pipe (FIFO), not a regular
// file") instead of blocking or exhausting the start. Options narrow what
// a file may say (WithAPIs).
func Load(agentDir string, env func(string) string, opts ...Option) (*Registry, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	var lc loadConfig
	for _, o := range opts {
		o(&lc)
	}
	var cfgs []*providerConfig
	if agentDir != "" {
		files := []struct {
			name  string
			parse func(string, []byte) (*node, error)
		}{{"models.json", parseJSON}, {"models.yml", parseYAML}}
		for _, f := range files {
			path := filepath.Join(agentDir, f.name)
			data, err := safefile.ReadFile(path, maxConfigBytes)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			var refused *safefile.Refusal
			if errors.Is(err, safefile.ErrTooLarge) {
				return nil, fmt.Errorf("models: %w (a models file is read whole, and one this size takes seconds and hundreds of MB to load): keep the providers and models you use", &safefile.PathError{Path: path, Err: err})
			}
			if errors.As(err, &refused) {
				return nil, fmt.Errorf("models: %w", &safefile.PathError{Path: path, Err: err})
			}
			if err != nil {
				return nil, fmt.Errorf("models: %w", err)
			}
			root, err := f.parse(path, data)
			if err != nil {
				return nil, err
			}
			pcs, err := (&configParser{file: path, apis: lc.apis}).parseConfig(root)
			if err != nil {
				return nil, err
			}
			cfgs = mergeConfigs(cfgs, pcs)
		}
	}
	r := &Registry{
		env:          env,
		index:        map[modelKey]int{},
		providers:    map[string]*providerConfig{},
		modelHeaders: map[modelKey][]header{},
		keyOverrides: map[string]string{},
		keyless:      map[string]bool{},
	}
	r.build(cfgs)
	return r, nil
}

// mergeConfigs lays later's providers onto base's: one of the same name
// takes its place. Linear: a file may define thousands of providers.
func mergeConfigs(base, later []*providerConfig) []*providerConfig {
	at := make(map[string]int, len(base))
	for i, pc := range base {
		at[pc.name] = i
	}
	for _, pc := range later {
		if i, ok := at[pc.name]; ok {
			base[i] = pc
			continue
		}
		at[pc.name] = len(base)
		base = append(base, pc)
	}
	return base
}

// build applies the sources in the original's order (agent-core §10.2):
// catalog, provider overrides, per-model overrides, custom models. Each
// step finds its models through maps, so loading is linear in the size of
// the configuration (40,000 custom models take milliseconds).
func (r *Registry) build(cfgs []*providerConfig) {
	n := len(catalog)
	for _, pc := range cfgs {
		n += len(pc.models)
	}
	r.models = make([]engine.Model, 0, n)
	r.index = make(map[modelKey]int, n)
	for _, m := range catalog {
		r.upsert(cloneModel(m))
	}
	// A provider's overrides apply to the models before its own custom
	// ones: the catalog's (each name is configured once, after merging).
	byProvider := map[string][]int{}
	for i, m := range r.models {
		byProvider[m.Provider] = append(byProvider[m.Provider], i)
	}
	for _, pc := range cfgs {
		r.providers[pc.name] = pc
		for _, i := range byProvider[pc.name] {
			m := r.models[i]
			if pc.baseURL != "" {
				m.BaseURL = pc.baseURL
			}
			if pc.compat != nil {
				m.Compat = mergeCompat(m.Compat, pc.compat)
			}
			r.models[i] = m
		}
		for _, ov := range pc.overrides {
			if i, ok := r.index[modelKey{pc.name, ov.id}]; ok {
				r.models[i] = r.patch(r.models[i], ov)
			}
		}
		for _, mp := range pc.models {
			m := engine.Model{ID: mp.id, Name: mp.id, API: pc.api, Provider: pc.name, BaseURL: pc.baseURL,
				Input: []string{"text"}, ContextWindow: defaultContextWindow, MaxTokens: defaultMaxTokens}
			if pc.compat != nil {
				m.Compat = pc.compat.toJSON()
			}
			delete(r.modelHeaders, keyOf(m)) // a custom model replaces a built-in whole
			r.upsert(r.patch(m, mp))
		}
		if pc.discovery != "" {
			r.discoveries = append(r.discoveries, Discovery{Provider: pc.name, Type: pc.discovery, API: pc.api, BaseURL: pc.baseURL})
		}
	}
	for _, lp := range localProviders {
		d := Discovery{Provider: lp.name, Type: lp.name, API: lp.api, BaseURL: r.env(lp.env), Implicit: true}
		if d.BaseURL == "" {
			d.BaseURL = lp.url
		}
		if pc := r.providers[lp.name]; pc != nil {
			// A configuration that only adjusts a local provider (its
			// modelOverrides, compat, baseUrl, headers, api) changes the
			// models the server has; it never hides them, so the provider
			// is still discovered, at its baseUrl when it gives one. One
			// that lists models of its own, or a discovery block, is the
			// whole definition.
			if len(pc.models) > 0 || pc.discovery != "" {
				continue
			}
			if pc.baseURL != "" {
				d.BaseURL, d.Implicit = pc.baseURL, false
			}
			if pc.api != "" {
				d.API = pc.api
			}
		}
		// Each local provider is discovered the way its name says.
		r.discoveries = append(r.discoveries, d)
	}
	for i := range r.models {
		r.models[i] = r.finish(r.models[i])
	}
}

// patch applies the fields a definition or override set.
func (r *Registry) patch(m engine.Model, p modelPatch) engine.Model {
	if p.name != nil {
		m.Name = *p.name
	}
	if p.api != nil {
		m.API = *p.api
	}
	if p.reasoning != nil {
		m.Reasoning = *p.reasoning
	}
	if p.input != nil {
		m.Input = append([]string(nil), p.input...)
	}
	for i, c := range p.cost {
		if c != nil {
			*[]*float64{&m.Cost.Input, &m.Cost.Output, &m.Cost.CacheRead, &m.Cost.CacheWrite}[i] = *c
		}
	}
	if p.contextWindow != nil {
		// A configured window is the window: it never grows (a
		// discovered model's MaxContextWindow no longer applies).
		m.ContextWindow, m.MaxContextWindow = *p.contextWindow, 0
	}
	if p.maxTokens != nil {
		m.MaxTokens = *p.maxTokens
	}
	if p.compat != nil {
		m.Compat = mergeCompat(m.Compat, p.compat)
	}
	if p.thinking != nil {
		t := *p.thinking
		m.Thinking = &t
	}
	if p.headers != nil {
		k := keyOf(m)
		r.modelHeaders[k] = overlay(r.modelHeaders[k], p.headers)
	}
	return m
}

// finish completes a model before it is stored: reasoning models get
// thinking metadata when they have none (the original requires it and
// infers it for custom models), non-reasoning ones lose it, and Headers
// becomes the non-secret view of the configured headers.
func (r *Registry) finish(m engine.Model) engine.Model {
	if m.Name == "" {
		m.Name = m.ID
	}
	if len(m.Input) == 0 {
		m.Input = []string{"text"}
	}
	if m.ContextWindow <= 0 {
		m.ContextWindow = defaultContextWindow
	}
	if m.MaxContextWindow <= m.ContextWindow {
		m.MaxContextWindow = 0 // a window that cannot grow
	}
	if m.MaxTokens <= 0 {
		m.MaxTokens = defaultMaxTokens
	}
	switch {
	case !m.Reasoning:
		m.Thinking = nil
	case m.Thinking == nil:
		m.Thinking = inferThinking(m)
	}
	m.Headers = r.wireHeaders(m)
	return m
}

// upsert replaces the model with m's provider and id, or appends m.
func (r *Registry) upsert(m engine.Model) {
	k := keyOf(m)
	if i, ok := r.index[k]; ok {
		r.models[i] = m
		return
	}
	r.index[k] = len(r.models)
	r.models = append(r.models, m)
}

// mergeCompat lays the keys of over onto the compat object base (a shallow
// merge: the more specific configuration wins key by key).
func mergeCompat(base json.RawMessage, over *node) json.RawMessage {
	if len(base) == 0 {
		return over.toJSON()
	}
	b, err := parseJSON("", base)
	if err != nil || b.kind != kindMap {
		return over.toJSON()
	}
	for i, k := range over.keys {
		b.set(k, 0, over.vals[i])
	}
	return b.toJSON()
}

// Add inserts models found at run time (Ollama discovery), or replaces
// those with the same provider and id, keeping registry order. Missing
// fields get the custom-model defaults, a configured provider's api,
// baseUrl and compat apply, then its modelOverrides, and headers given on a model are kept for Headers but not shown
// in the model. Safe to call while other goroutines read.
func (r *Registry) Add(models ...engine.Model) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range models {
		m = cloneModel(m)
		if len(m.Headers) > 0 {
			hs := make([]header, 0, len(m.Headers))
			for _, name := range sortedKeys(m.Headers) {
				hs = append(hs, header{name: name, value: m.Headers[name], literal: true})
			}
			r.modelHeaders[keyOf(m)] = hs
		}
		m.Headers = nil
		if pc := r.providers[m.Provider]; pc != nil {
			// The user's configuration of the provider is the later word:
			// its compat keys win over what discovery reported.
			if m.API == "" {
				m.API = pc.api
			}
			if m.BaseURL == "" {
				m.BaseURL = pc.baseURL
			}
			if pc.compat != nil {
				m.Compat = mergeCompat(m.Compat, pc.compat)
			}
			for _, ov := range pc.overrides {
				if ov.id == m.ID {
					m = r.patch(m, ov)
				}
			}
		}
		r.upsert(r.finish(m))
	}
}

// All returns every model in registry order.
func (r *Registry) All() []engine.Model {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]engine.Model, len(r.models))
	for i, m := range r.models {
		out[i] = cloneModel(m)
	}
	return out
}

// Available returns the models whose provider needs no key or has one, in
// registry order: the list get_available_models answers with.
func (r *Registry) Available() []engine.Model {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []engine.Model{}
	for _, m := range r.models {
		if r.hasAuth(m.Provider) {
			out = append(out, cloneModel(m))
		}
	}
	return out
}

// Find returns the model with exactly this provider and id (case-sensitive,
// as set_model matches).
func (r *Registry) Find(provider, id string) (engine.Model, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if i, ok := r.index[modelKey{provider, id}]; ok {
		return cloneModel(r.models[i]), true
	}
	return engine.Model{}, false
}

// HasAuth reports whether m can be called: its provider needs no key or
// has one. set_model and cycle_model use it.
func (r *Registry) HasAuth(m engine.Model) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.hasAuth(m.Provider)
}

func (r *Registry) hasAuth(provider string) bool {
	return r.isKeyless(provider) || r.keyFor(provider) != "" || r.awsCredentials(provider)
}

// bedrockAPI is Amazon Bedrock's API, whose requests AWS's credential
// chain signs: no API key needed.
const bedrockAPI = "bedrock-converse-stream"

// awsCredentials reports whether provider is Amazon Bedrock (by the
// original's name, or a models.json provider of its API) and the
// environment shows AWS credentials the SDK's chain will find, as the
// original decides: a profile, static keys, a container or web identity
// role, or a Bedrock API key (which the adapter reads for any provider of
// the API). Credentials only in ~/.aws's default profile need AWS_PROFILE
// set, as there.
func (r *Registry) awsCredentials(provider string) bool {
	if pc := r.providers[provider]; provider != "amazon-bedrock" && (pc == nil || pc.api != bedrockAPI) {
		return false
	}
	return r.env("AWS_PROFILE") != "" ||
		r.env("AWS_ACCESS_KEY_ID") != "" && r.env("AWS_SECRET_ACCESS_KEY") != "" ||
		r.env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "" || r.env("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "" ||
		r.env("AWS_WEB_IDENTITY_TOKEN_FILE") != "" || r.env("AWS_BEARER_TOKEN_BEDROCK") != ""
}

func (r *Registry) isKeyless(provider string) bool {
	pc := r.providers[provider]
	switch {
	case r.keyless[provider], pc != nil && pc.auth == "none":
		return true
	case isLocalProvider(provider):
		return pc == nil || pc.auth == "" && pc.apiKey == ""
	}
	return false
}

// APIKey returns the key to call m with ("" for none): the --api-key
// override of its provider, else the provider's configured apiKey (an
// environment variable's value or a literal), else the provider's usual
// environment variables. It is the adapters' Options.APIKey. An apiKey
// that runs a command ("!cmd") is not supported and gives no key.
func (r *Registry) APIKey(m engine.Model) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.keyFor(m.Provider)
}

func (r *Registry) keyFor(provider string) string {
	if k := r.keyOverrides[provider]; k != "" {
		return k
	}
	if pc := r.providers[provider]; pc != nil && pc.apiKey != "" {
		if k := r.resolve(pc.apiKey, false); k != "" {
			return k
		}
	}
	for _, name := range envKeys[provider] {
		if k := r.env(name); k != "" {
			return k
		}
	}
	return ""
}

// resolve turns a configured value into what is sent: an environment
// variable's value for a name of that shape (unset: ""), nothing for a
// "!command" (not supported: never sent as is), else the literal.
func (r *Registry) resolve(v string, literal bool) string {
	switch {
	case literal:
		return v
	case strings.HasPrefix(v, "!"):
		return ""
	case envNameRE().MatchString(v):
		return r.env(v)
	}
	return v
}

// SetKeyOverride sets the key for every model of provider (the CLI's
// --api-key, which applies to the selected model's provider); "" removes
// it. It is not persisted anywhere.
func (r *Registry) SetKeyOverride(provider, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key == "" {
		delete(r.keyOverrides, provider)
		return
	}
	r.keyOverrides[provider] = key
}

// SetKeyless marks a provider registered at run time (the fake provider,
// an extension's) as needing no key, so its models are available.
func (r *Registry) SetKeyless(provider string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keyless[provider] = true
}

// Headers returns every header to send with a call to m, secrets included:
// the provider's headers, then the model's (a model header replaces a
// provider header of the same name, case-insensitively), values resolved
// like apiKey (a header whose variable is unset is left out), and
// "Authorization: Bearer <key>" when the provider sets authHeader and has a
// key. Adapters must take headers from here, not from Model.Headers, which
// only shows the non-secret ones.
func (r *Registry) Headers(m engine.Model) map[string]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string]string{}
	for _, h := range r.headerSpecs(m) {
		if v := r.resolve(h.value, h.literal); v != "" {
			out[h.name] = v
		}
	}
	if pc := r.providers[m.Provider]; pc != nil && pc.authHeader {
		if k := r.keyFor(m.Provider); k != "" {
			for name := range out {
				if strings.EqualFold(name, "authorization") {
					delete(out, name)
				}
			}
			out["Authorization"] = "Bearer " + k
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (r *Registry) headerSpecs(m engine.Model) []header {
	var hs []header
	if pc := r.providers[m.Provider]; pc != nil {
		hs = pc.headers
	}
	return overlay(hs, r.modelHeaders[keyOf(m)])
}

// wireHeaders is the part of the headers that may be shown: literal values
// under names that do not look like credentials. The original sends
// Model.headers in get_state and get_available_models, credentials and
// all; we keep the field but never put a secret in it (agent-core
// §10.1, rpc-protocol edge case 30).
func (r *Registry) wireHeaders(m engine.Model) map[string]string {
	var out map[string]string
	for _, h := range r.headerSpecs(m) {
		if sensitiveHeader(h.name) || !h.literal && (envNameRE().MatchString(h.value) || strings.HasPrefix(h.value, "!")) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[h.name] = h.value
	}
	return out
}

// sensitiveHeader reports whether a header's name suggests its value is a
// credential.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	if n == "authorization" || n == "proxy-authorization" || n == "cookie" {
		return true
	}
	for _, w := range []string{"key", "token", "secret", "auth", "password", "passwd", "credential", "session", "signature", "cookie"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// overlay returns base with over's headers laid on top, names compared
// case-insensitively, order kept.
func overlay(base, over []header) []header {
	if len(over) == 0 {
		return base
	}
	out := append([]header(nil), base...)
next:
	for _, h := range over {
		for i, b := range out {
			if strings.EqualFold(b.name, h.name) {
				out[i] = h
				continue next
			}
		}
		out = append(out, h)
	}
	return out
}

// Providers lists the provider names the registry knows, in registry
// order: those of its models, then configured or discoverable providers
// that have no model yet. The CLI's --provider is checked against it.
func (r *Registry) Providers() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []string{}
	seen := map[string]bool{}
	addName := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, m := range r.models {
		addName(m.Provider)
	}
	for _, d := range r.discoveries {
		addName(d.Provider)
	}
	names := make([]string, 0, len(r.providers))
	for name := range r.providers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		addName(name)
	}
	return out
}

// Discoveries lists the providers whose models are found at run time: those
// models.yml gives a discovery block, then the implicit local providers
// (ollama, llama.cpp, lm-studio, with their *_BASE_URL overrides) unless
// the configuration defines them whole (models of their own, or a
// discovery block): a configuration that only adjusts one (modelOverrides,
// compat, baseUrl) keeps its discovery.
func (r *Registry) Discoveries() []Discovery {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Discovery(nil), r.discoveries...)
}

// String describes the registry without any key or header value.
func (r *Registry) String() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fmt.Sprintf("models.Registry{%d models, %d configured providers}", len(r.models), len(r.providers))
}

// GoString keeps %#v from printing the configured keys.
func (r *Registry) GoString() string { return r.String() }

func cloneModel(m engine.Model) engine.Model {
	m.Input = append([]string(nil), m.Input...)
	if m.Headers != nil {
		h := make(map[string]string, len(m.Headers))
		for k, v := range m.Headers {
			h[k] = v
		}
		m.Headers = h
	}
	if m.Compat != nil {
		m.Compat = append(json.RawMessage(nil), m.Compat...)
	}
	if m.Thinking != nil {
		t := *m.Thinking
		m.Thinking = &t
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
