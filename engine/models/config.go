package models

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// providerConfig is one entry of "providers" in models.json or models.yml.
type providerConfig struct {
	name       string
	baseURL    string
	api        string
	apiKey     string // as written: an env var name, a literal or "!command"
	auth       string // "", "apiKey" or "none"
	authHeader bool
	headers    []header
	compat     *node // a mapping, or nil
	models     []modelPatch
	overrides  []modelPatch // modelOverrides, in file order
	discovery  string       // discovery.type, or ""
}

// header is a configured header; its value is resolved like apiKey.
type header struct {
	name, value string
	literal     bool // sent as is (headers given to Add), never resolved
}

// modelPatch is a model definition (models[i]) or an override
// (modelOverrides.<id>): the fields the file set, nil where it did not.
type modelPatch struct {
	id            string
	line          int
	name          *string
	api           *string
	reasoning     *bool
	input         []string
	cost          [4]*float64 // input, output, cacheRead, cacheWrite
	contextWindow *int
	maxTokens     *int
	headers       []header
	compat        *node
	thinking      *engine.ModelThinking
}

// configParser turns the nodes of one file into provider configurations,
// failing at the first problem with a *ConfigError naming file, line and
// field. Messages never quote a value the user wrote.
type configParser struct {
	file string
	apis []string // the APIs with an adapter (WithAPIs); nil: every known one
}

func (p *configParser) fail(n *node, field, format string, args ...any) error {
	return &ConfigError{File: p.file, Line: n.line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (p *configParser) want(n *node, field string, k nodeKind) error {
	if n.kind != k {
		return p.fail(n, field, "must be %s", k)
	}
	return nil
}

func (p *configParser) str(n *node, field string) (string, error) {
	return n.text, p.want(n, field, kindString)
}

func (p *configParser) boolean(n *node, field string) (bool, error) {
	return n.bool, p.want(n, field, kindBool)
}

func (p *configParser) number(n *node, field string) (float64, error) {
	if err := p.want(n, field, kindNumber); err != nil {
		return 0, err
	}
	f, err := parseNumber(n.text)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, p.fail(n, field, "must be a number")
	}
	return f, nil
}

// positive reads contextWindow and maxTokens: agent-core §10.3 requires
// them positive.
func (p *configParser) positive(n *node, field string) (*int, error) {
	f, err := p.number(n, field)
	if err != nil {
		return nil, err
	}
	if f != math.Trunc(f) || f > math.MaxInt32 {
		return nil, p.fail(n, field, "must be an integer")
	}
	if f <= 0 {
		return nil, p.fail(n, field, "must be positive")
	}
	v := int(f)
	return &v, nil
}

// parseConfig reads the root of a models file.
func (p *configParser) parseConfig(root *node) ([]*providerConfig, error) {
	if root.kind != kindMap {
		return nil, p.fail(root, "(root)", "must be a mapping with a providers key")
	}
	var out []*providerConfig
	for i, key := range root.keys {
		v := root.vals[i]
		switch key {
		case "providers":
			if v.kind == kindNull {
				continue
			}
			if err := p.want(v, "providers", kindMap); err != nil {
				return nil, err
			}
			for j, name := range v.keys {
				pc, err := p.parseProvider(name, v.klns[j], v.vals[j])
				if err != nil {
					return nil, err
				}
				out = append(out, pc)
			}
		case "equivalence":
			// The original's cross-provider equivalence table only feeds
			// its usage statistics; accepted and ignored.
		}
		// Other top-level keys are ignored, like unknown keys anywhere, so
		// a file written for a newer original still loads.
	}
	return out, nil
}

func (p *configParser) parseProvider(name string, line int, n *node) (*providerConfig, error) {
	at := "providers." + name
	if err := p.want(n, at, kindMap); err != nil {
		return nil, err
	}
	if err := p.checkKeys(n, at, providerKeys); err != nil {
		return nil, err
	}
	pc := &providerConfig{name: name}
	var err error
	var modelsNode *node
	hasOverrides := false
	for i, key := range n.keys {
		v, f := n.vals[i], at+"."+key
		switch key {
		case "baseUrl":
			if pc.baseURL, err = p.str(v, f); err == nil {
				err = p.checkBaseURL(v, f, pc.baseURL)
			}
		case "api":
			if pc.api, err = p.str(v, f); err == nil {
				err = p.checkAPI(v, f, pc.api)
			}
		case "apiKey":
			pc.apiKey, err = p.str(v, f)
		case "auth":
			if pc.auth, err = p.str(v, f); err == nil && pc.auth != "apiKey" && pc.auth != "none" {
				err = p.fail(v, f, "must be apiKey or none")
			}
		case "authHeader":
			pc.authHeader, err = p.boolean(v, f)
		case "headers":
			pc.headers, err = p.headers(v, f)
		case "compat":
			if err = p.want(v, f, kindMap); err == nil {
				pc.compat = v
			}
		case "models":
			if err = p.want(v, f, kindList); err == nil {
				modelsNode = v
				pc.models = make([]modelPatch, 0, len(v.items))
				for j, item := range v.items {
					var m modelPatch
					m, err = p.parseModel(item, fmt.Sprintf("%s[%d]", f, j), true)
					if err != nil {
						break
					}
					pc.models = append(pc.models, m)
				}
			}
		case "modelOverrides":
			if err = p.want(v, f, kindMap); err == nil {
				for j, id := range v.keys {
					var m modelPatch
					m, err = p.parseModel(v.vals[j], f+"."+id, false)
					if err != nil {
						break
					}
					m.id, m.line = id, v.klns[j]
					pc.overrides = append(pc.overrides, m)
				}
				hasOverrides = len(v.keys) > 0
			}
		case "discovery":
			pc.discovery, err = p.discovery(v, f)
		}
		if err != nil {
			return nil, err
		}
	}

	// The rules of agent-core §10.3, in the original's order.
	where := &node{line: line}
	if len(pc.models) > 0 {
		if pc.baseURL == "" {
			return nil, p.fail(where, at+".baseUrl", "required when the provider defines models")
		}
		if pc.apiKey == "" && pc.auth != "none" && pc.api != bedrockAPI {
			// Bedrock signs with AWS's credential chain; an apiKey there is
			// an optional Bedrock API key.
			return nil, p.fail(where, at+".apiKey", "required when the provider defines models (or set auth: none)")
		}
	} else if pc.baseURL == "" && pc.headers == nil && pc.compat == nil && pc.apiKey == "" &&
		pc.auth != "none" && !hasOverrides && pc.discovery == "" && modelsNode == nil {
		return nil, p.fail(where, at, "must set models, baseUrl, headers, apiKey, auth: none, compat, modelOverrides or discovery")
	}
	if pc.discovery != "" && pc.api == "" {
		return nil, p.fail(where, at+".api", "required when discovery is enabled")
	}
	for i, m := range pc.models {
		if m.api == nil && pc.api == "" {
			return nil, p.fail(&node{line: m.line}, fmt.Sprintf("%s.models[%d].api", at, i), "required: set api on the provider or on the model")
		}
	}
	return pc, nil
}

// knownAPIs are the values api may take: the original's (agent-core
// §10.1), Ollama's native API, and the fake provider's. Anything else is a
// typo that would only surface at the first prompt, so it is a load error.
// Given WithAPIs, only the APIs with an adapter may be named: a known one
// without an adapter fails the load too, saying so.
var knownAPIs = []string{
	"openai-completions", "openai-responses", "openai-codex-responses", "azure-openai-responses",
	"anthropic-messages", "bedrock-converse-stream", "google-generative-ai", "google-gemini-cli",
	"google-vertex", "cursor-agent", "ollama", "fake",
}

func (p *configParser) checkAPI(n *node, field, api string) error {
	if p.apis == nil {
		if !slices.Contains(knownAPIs, api) {
			return p.fail(n, field, "must be one of %s", strings.Join(knownAPIs, ", "))
		}
		return nil
	}
	if slices.Contains(p.apis, api) {
		return nil
	}
	if slices.Contains(knownAPIs, api) {
		// A constant of ours, not the user's text: safe to quote.
		return p.fail(n, field, "%s has no adapter in this build; the APIs that work: %s", api, strings.Join(p.apis, ", "))
	}
	return p.fail(n, field, "must be one of %s", strings.Join(p.apis, ", "))
}

// checkBaseURL refuses a baseUrl that is not an absolute http or https
// URL: a file:// or schemeless value would only fail at the first call,
// and the adapters speak HTTP only. "" is "not set" (the rules below say
// when it is required).
func (p *configParser) checkBaseURL(n *node, field, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return p.fail(n, field, "must be an http:// or https:// URL")
	}
	return nil
}

func (p *configParser) discovery(n *node, field string) (string, error) {
	if err := p.want(n, field, kindMap); err != nil {
		return "", err
	}
	t := n.get("type")
	if t == nil {
		return "", p.fail(n, field+".type", "required")
	}
	typ, err := p.str(t, field+".type")
	if err != nil {
		return "", err
	}
	switch typ {
	case "ollama", "llama.cpp", "lm-studio", "openai-compat":
		return typ, nil
	}
	return "", p.fail(t, field+".type", "must be ollama, llama.cpp, lm-studio or openai-compat")
}

func (p *configParser) headers(n *node, field string) ([]header, error) {
	if err := p.want(n, field, kindMap); err != nil {
		return nil, err
	}
	hs := []header{} // non-nil: "headers: {}" still counts as set
	for i, k := range n.keys {
		v, err := p.str(n.vals[i], field+"."+k)
		if err != nil {
			return nil, err
		}
		hs = append(hs, header{name: k, value: v})
	}
	return hs, nil
}

// parseModel reads one model definition (full: models[i], where id is
// required) or one override (modelOverrides.<id>).
func (p *configParser) parseModel(n *node, at string, full bool) (modelPatch, error) {
	m := modelPatch{line: n.line}
	if err := p.want(n, at, kindMap); err != nil {
		return m, err
	}
	if err := p.checkKeys(n, at, modelKeys); err != nil {
		return m, err
	}
	for i, key := range n.keys {
		v, f := n.vals[i], at+"."+key
		var err error
		switch key {
		case "id":
			if full {
				m.id, err = p.str(v, f)
			}
		case "name":
			var s string
			if s, err = p.str(v, f); err == nil {
				m.name = &s
			}
		case "api":
			if full {
				var s string
				if s, err = p.str(v, f); err == nil {
					if err = p.checkAPI(v, f, s); err == nil {
						m.api = &s
					}
				}
			}
		case "reasoning":
			var b bool
			if b, err = p.boolean(v, f); err == nil {
				m.reasoning = &b
			}
		case "input":
			m.input, err = p.input(v, f)
		case "cost":
			err = p.cost(v, f, &m)
		case "contextWindow":
			m.contextWindow, err = p.positive(v, f)
		case "maxTokens":
			m.maxTokens, err = p.positive(v, f)
		case "headers":
			m.headers, err = p.headers(v, f)
		case "compat":
			if err = p.want(v, f, kindMap); err == nil {
				m.compat = v
			}
		case "thinking":
			m.thinking, err = p.thinking(v, f)
		}
		if err != nil {
			return m, err
		}
	}
	if full && m.id == "" {
		return m, p.fail(n, at+".id", "required")
	}
	return m, nil
}

func (p *configParser) input(n *node, field string) ([]string, error) {
	if err := p.want(n, field, kindList); err != nil {
		return nil, err
	}
	out := []string{}
	for i, it := range n.items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, err := p.str(it, f)
		if err != nil {
			return nil, err
		}
		if s != "text" && s != "image" {
			return nil, p.fail(it, f, "must be text or image")
		}
		out = append(out, s)
	}
	return out, nil
}

var costFields = [4]string{"input", "output", "cacheRead", "cacheWrite"}

func (p *configParser) cost(n *node, field string, m *modelPatch) error {
	if err := p.want(n, field, kindMap); err != nil {
		return err
	}
	for i, name := range costFields {
		v := n.get(name)
		if v == nil {
			continue
		}
		f, err := p.number(v, field+"."+name)
		if err != nil {
			return err
		}
		if f < 0 {
			return p.fail(v, field+"."+name, "must not be negative")
		}
		m.cost[i] = &f
	}
	return nil
}

func (p *configParser) thinking(n *node, field string) (*engine.ModelThinking, error) {
	if err := p.want(n, field, kindMap); err != nil {
		return nil, err
	}
	t := &engine.ModelThinking{MinLevel: engine.ThinkingMinimal, MaxLevel: engine.ThinkingXHigh, Mode: modeEffort}
	for i, key := range n.keys {
		v, f := n.vals[i], field+"."+key
		switch key {
		case "minLevel", "maxLevel":
			s, err := p.str(v, f)
			if err != nil {
				return nil, err
			}
			l, ok := engine.ParseEffort(s)
			if !ok {
				return nil, p.fail(v, f, "must be one of minimal, low, medium, high, xhigh")
			}
			if key == "minLevel" {
				t.MinLevel = l
			} else {
				t.MaxLevel = l
			}
		case "mode":
			s, err := p.str(v, f)
			if err != nil {
				return nil, err
			}
			if !contains(thinkingModes, s) {
				return nil, p.fail(v, f, "must be one of %s", strings.Join(thinkingModes, ", "))
			}
			t.Mode = s
		}
	}
	if effortRank(t.MinLevel) > effortRank(t.MaxLevel) {
		return nil, p.fail(n, field, "minLevel is above maxLevel")
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
