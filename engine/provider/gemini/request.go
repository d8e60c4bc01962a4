package gemini

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/xcsh-go/xcsh/engine"
)

// maxTokensCap bounds the max output tokens sent when the model allows
// more, as the original does (agent-core.md §9.4).
const maxTokensCap = 32000

// Text that stands in for what a request cannot carry.
const (
	imageOnlyToolResult = "(see attached image)"
	toolImagesIntro     = "Tool result image:"
	missingToolResult   = "No result provided"
)

// The thinking modes a model's thinking rules name (engine/models).
const (
	modeGoogleLevel = "google-level" // Gemini 3: thinkingLevel
	modeBudget      = "budget"       // Gemini 2.5: thinkingBudget in tokens
)

var geminiRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|/)gemini-(\d+)(?:\.(\d+))?(?:-|$)`) })

// major is the Gemini generation of a model id (2 for gemini-2.5-pro), 0
// when the id is not a Gemini's.
func major(id string) int {
	m := geminiRE().FindStringSubmatch(strings.ToLower(id))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// buildRequest converts an engine request to the SDK's contents and
// configuration.
func buildRequest(req *engine.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	m := &req.Model
	cfg := &genai.GenerateContentConfig{}
	if req.SystemPrompt != "" {
		cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.SystemPrompt}}}
	}
	if m.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(min(m.MaxTokens, maxTokensCap))
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			params := json.RawMessage(t.Parameters)
			if len(params) == 0 {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			// parametersJsonSchema takes the tool's JSON Schema as it is
			// (anyOf, const, additionalProperties...), where the older
			// parameters field takes only OpenAPI's subset.
			decls[i] = &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: params}
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	cfg.ThinkingConfig = thinkingConfig(m, req.ThinkingLevel)
	// Native structured output. Gemini before 3 refuses a JSON response
	// type beside function calling (400 "Function calling with a response
	// mime type: 'application/json' is unsupported"), so a run that offers
	// tools to such a model gets the schema in its system prompt only, and
	// the engine checks the answer either way.
	if o := req.Output; o != nil && (len(req.Tools) == 0 || major(m.ID) >= 3) {
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = json.RawMessage(o.Schema)
	}
	return convertMessages(req), cfg
}

// Thinking budgets in tokens per effort, by model family, as the original
// sets them (its getGoogleBudget); -1 asks the model to decide.
var (
	budgets25Pro   = map[engine.ThinkingLevel]int32{engine.ThinkingMinimal: 128, engine.ThinkingLow: 2048, engine.ThinkingMedium: 8192, engine.ThinkingHigh: 32768}
	budgets25Flash = map[engine.ThinkingLevel]int32{engine.ThinkingMinimal: 128, engine.ThinkingLow: 2048, engine.ThinkingMedium: 8192, engine.ThinkingHigh: 24576}
)

// thinkingConfig is the thinking a request asks for, from the session's
// level and the model's thinking rules: a Gemini 3 model takes a
// thinkingLevel, a Gemini 2.5 a thinkingBudget. No level sends nothing
// (the model's default); off asks for the least the model allows (Gemini
// 2.5 Pro and Gemini 3 cannot turn thinking off). Thought summaries are
// asked for whenever the model thinks on request.
func thinkingConfig(m *engine.Model, level engine.ThinkingLevel) *genai.ThinkingConfig {
	if !m.Reasoning || level == "" {
		return nil
	}
	id := strings.ToLower(m.ID)
	mode := ""
	if m.Thinking != nil {
		mode = m.Thinking.Mode
	}
	if mode == "" {
		mode = modeBudget
		if major(id) >= 3 {
			mode = modeGoogleLevel
		}
	}
	pro := strings.Contains(id, "pro")
	if level == engine.ThinkingXHigh {
		level = engine.ThinkingHigh // Gemini's highest
	}
	if mode == modeGoogleLevel {
		var l genai.ThinkingLevel
		switch {
		case level == engine.ThinkingOff && pro:
			l = genai.ThinkingLevelLow
		case level == engine.ThinkingOff:
			l = genai.ThinkingLevelMinimal
		case pro && (level == engine.ThinkingMinimal || level == engine.ThinkingLow):
			l = genai.ThinkingLevelLow
		case pro:
			l = genai.ThinkingLevelHigh
		case level == engine.ThinkingMinimal:
			l = genai.ThinkingLevelMinimal
		case level == engine.ThinkingLow:
			l = genai.ThinkingLevelLow
		case level == engine.ThinkingMedium:
			l = genai.ThinkingLevelMedium
		default:
			l = genai.ThinkingLevelHigh
		}
		return &genai.ThinkingConfig{IncludeThoughts: level != engine.ThinkingOff, ThinkingLevel: l}
	}
	if level == engine.ThinkingOff {
		budget := int32(0)
		if strings.Contains(id, "2.5-pro") {
			budget = 128 // its least: it only works thinking
		}
		return &genai.ThinkingConfig{ThinkingBudget: &budget}
	}
	budget := int32(-1)
	switch {
	case strings.Contains(id, "2.5-pro"):
		budget = budgets25Pro[level]
	case strings.Contains(id, "2.5-flash-lite") && level == engine.ThinkingMinimal:
		budget = 512 // Flash-Lite's least
	case strings.Contains(id, "2.5-flash"):
		budget = budgets25Flash[level]
	}
	return &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &budget}
}

// convertMessages builds the contents, as the original's convertMessages
// (google-shared.ts) does: errored and aborted assistant messages are left
// out with their tool results, a function call with no response gets one
// that says so before the next message (the API wants as many responses as
// calls), and the responses to one turn's calls go in one user content.
//
// What a model said goes back as it was said when the message is the same
// model's (same provider and id): thinking as thought parts, and every
// part with its thought signature. Another model's thinking is plain text,
// and its signatures are dropped.
func convertMessages(req *engine.Request) []*genai.Content {
	m := &req.Model
	acceptImages := acceptsImages(m)
	out := make([]*genai.Content, 0, len(req.Messages))
	var (
		skipped    map[string]bool // tool call ids of left-out assistant messages
		unanswered []engine.ContentBlock
	)
	addResponse := func(p *genai.Part) {
		if n := len(out); n > 0 && out[n-1].Role == genai.RoleUser && hasFunctionResponse(out[n-1]) {
			out[n-1].Parts = append(out[n-1].Parts, p)
			return
		}
		out = append(out, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{p}})
	}
	// closeCalls ends a turn's responses: a response for each call left
	// unanswered, then the images of its tool results (before Gemini 3
	// they cannot go inside the responses, and a content between two
	// responses would split the turn's).
	var images []*genai.Part
	closeCalls := func() {
		for _, b := range unanswered {
			addResponse(&genai.Part{FunctionResponse: &genai.FunctionResponse{ID: b.ID, Name: b.Name,
				Response: map[string]any{"error": missingToolResult}}})
		}
		unanswered = unanswered[:0]
		if len(images) > 0 {
			out = append(out, &genai.Content{Role: genai.RoleUser, Parts: append([]*genai.Part{{Text: toolImagesIntro}}, images...)})
			images = nil
		}
	}
	for _, msg := range req.Messages {
		switch v := msg.(type) {
		case *engine.UserMessage:
			closeCalls()
			if parts := userParts(v.Content, acceptImages); len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleUser, Parts: parts})
			}
		case *engine.DeveloperMessage:
			closeCalls()
			if parts := userParts(v.Content, acceptImages); len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleUser, Parts: parts})
			}
		case *engine.AssistantMessage:
			closeCalls()
			if v.StopReason == engine.StopError || v.StopReason == engine.StopAborted {
				for _, b := range v.Content {
					if b.Type == engine.BlockToolCall {
						if skipped == nil {
							skipped = map[string]bool{}
						}
						skipped[b.ID] = true
					}
				}
				continue
			}
			same := v.Provider == m.Provider && v.Model == m.ID
			var parts []*genai.Part
			for _, b := range v.Content {
				if p := modelPart(b, same); p != nil {
					parts = append(parts, p)
					if b.Type == engine.BlockToolCall {
						unanswered = append(unanswered, b)
					}
				}
			}
			if len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleModel, Parts: parts})
			}
		case *engine.ToolResultMessage:
			if skipped[v.ToolCallID] {
				continue
			}
			for i, b := range unanswered {
				if b.ID == v.ToolCallID {
					unanswered = append(unanswered[:i], unanswered[i+1:]...)
					break
				}
			}
			resp, imgs := functionResponse(v, m, acceptImages)
			addResponse(resp)
			images = append(images, imgs...)
		}
	}
	closeCalls()
	return out
}

func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// userParts converts a user message's blocks; images are dropped for a
// text-only model, and so is empty text.
func userParts(blocks []engine.ContentBlock, images bool) []*genai.Part {
	var parts []*genai.Part
	for _, b := range blocks {
		switch b.Type {
		case engine.BlockText:
			if b.Text != "" {
				parts = append(parts, &genai.Part{Text: b.Text})
			}
		case engine.BlockImage:
			if images {
				if p := inlinePart(b); p != nil {
					parts = append(parts, p)
				}
			}
		}
	}
	return parts
}

// inlinePart is an image block as inline data; nil when its data is not
// base64 (it could not be sent).
func inlinePart(b engine.ContentBlock) *genai.Part {
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return nil
	}
	return &genai.Part{InlineData: &genai.Blob{MIMEType: b.MimeType, Data: data}}
}

// modelPart converts one block of an assistant message; nil when the block
// sends nothing.
func modelPart(b engine.ContentBlock, same bool) *genai.Part {
	switch b.Type {
	case engine.BlockThinking:
		if strings.TrimSpace(b.Thinking) == "" {
			return nil
		}
		if !same {
			return &genai.Part{Text: b.Thinking}
		}
		return &genai.Part{Text: b.Thinking, Thought: true, ThoughtSignature: signature(b.ThinkingSignature)}
	case engine.BlockText:
		if strings.TrimSpace(b.Text) == "" {
			return nil
		}
		p := &genai.Part{Text: b.Text}
		if same {
			p.ThoughtSignature = signature(b.TextSignature)
		}
		return p
	case engine.BlockToolCall:
		args := map[string]any{}
		if len(b.Arguments) > 0 {
			_ = json.Unmarshal(b.Arguments, &args)
		}
		p := &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args}}
		if same {
			p.ThoughtSignature = signature(b.ThoughtSignature)
		}
		return p
	}
	return nil
}

// signature decodes a stored thought signature (base64, as the API sends
// it); nil for none, or for one that is not base64 (another API's
// signature in a block of the same model id).
func signature(s string) []byte {
	if s == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// functionResponse answers a call: {"output": text}, or {"error": text}
// for a failed tool. Its images go inside it for Gemini 3 and later, else
// they are returned to follow it.
func functionResponse(v *engine.ToolResultMessage, m *engine.Model, images bool) (*genai.Part, []*genai.Part) {
	var texts []string
	var imgs []*genai.Part
	for _, b := range v.Content {
		switch b.Type {
		case engine.BlockText:
			texts = append(texts, b.Text)
		case engine.BlockImage:
			if images {
				if p := inlinePart(b); p != nil {
					imgs = append(imgs, p)
				}
			}
		}
	}
	text := strings.Join(texts, "\n")
	if text == "" && len(imgs) > 0 {
		text = imageOnlyToolResult
	}
	key := "output"
	if v.IsError {
		key = "error"
	}
	fr := &genai.FunctionResponse{ID: v.ToolCallID, Name: v.ToolName, Response: map[string]any{key: text}}
	if len(imgs) > 0 && major(m.ID) >= 3 {
		for _, p := range imgs {
			fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: p.InlineData.MIMEType, Data: p.InlineData.Data}})
		}
		imgs = nil
	}
	return &genai.Part{FunctionResponse: fr}, imgs
}

func acceptsImages(m *engine.Model) bool {
	for _, in := range m.Input {
		if in == "image" {
			return true
		}
	}
	return false
}
