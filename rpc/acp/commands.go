package acp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/jsonrpc"
)

// The built-in slash commands: what RPC has as commands of its own
// (compact, export_html, get_session_stats, set_session_name, set_model),
// run from the prompt text. Each is a turn of its own, answered end_turn
// once it is over; its outcome is a message chunk. Any other "/name" goes
// to the engine, which expands prompt templates, skills and extension
// commands.
var builtins = []struct {
	name, description, hint string
	run                     func(ss *session, args string, done func())
}{
	{"compact", "Summarise the conversation so far to free the context window", "optional focus for the summary", (*session).cmdCompact},
	{"export", "Export the session as an HTML page", "optional path", (*session).cmdExport},
	{"session", "Show the session's statistics: messages, tokens, cost", "", (*session).cmdSession},
	{"name", "Name the session", "the name", (*session).cmdName},
	{"model", "Show the models, or switch to one", "provider/model", (*session).cmdModel},
}

func builtinCommands() []command {
	out := make([]command, 0, len(builtins))
	for _, b := range builtins {
		c := command{Name: b.name, Description: b.description}
		if b.hint != "" {
			c.Input = &commandInput{Hint: b.hint}
		}
		out = append(out, c)
	}
	return out
}

// builtinCommand finds the built-in command a prompt's text names.
func builtinCommand(text string) (func(*session, string, func()), string, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return nil, "", false
	}
	name, args, _ := strings.Cut(t[1:], " ")
	for _, b := range builtins {
		if b.name == name {
			return b.run, strings.TrimSpace(args), true
		}
	}
	return nil, "", false
}

func (ss *session) cmdCompact(args string, done func()) {
	ss.eng.Compact(args, func(r *engine.CompactionResult, err error) {
		if err != nil {
			ss.notice("Compaction failed: " + err.Error())
		} else {
			ss.notice(fmt.Sprintf("Compacted the conversation (%d tokens before).", r.TokensBefore))
		}
		done()
	})
}

func (ss *session) cmdExport(args string, done func()) {
	ss.eng.Export(args, func(path string, err error) {
		if err != nil {
			ss.notice("Export failed: " + err.Error())
		} else {
			ss.notice("Exported the session to " + path)
		}
		done()
	})
}

func (ss *session) cmdSession(_ string, done func()) {
	st := ss.eng.Stats()
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s\n", st.SessionID)
	if st.SessionFile != "" {
		fmt.Fprintf(&b, "File: %s\n", st.SessionFile)
	}
	fmt.Fprintf(&b, "Messages: %d from you, %d from the agent, %d tool calls\n", st.UserMessages, st.AssistantMessages, st.ToolCalls)
	fmt.Fprintf(&b, "Tokens: %d in, %d out, %d cache read, %d cache write\n", st.Tokens.Input, st.Tokens.Output, st.Tokens.CacheRead, st.Tokens.CacheWrite)
	if cu := st.ContextUsage; cu != nil {
		fmt.Fprintf(&b, "Context: %d of %d tokens (%.2f%%)\n", cu.Tokens, cu.ContextWindow, cu.Percent)
	}
	fmt.Fprintf(&b, "Cost: $%.4f", st.Cost)
	ss.notice(b.String())
	done()
}

func (ss *session) cmdName(args string, done func()) {
	ss.eng.SetSessionName(args, func(err error) {
		if err != nil {
			ss.notice("Cannot name the session: " + err.Error())
		} else {
			_, _, name := ss.eng.Identity()
			ss.update(infoUpdate{SessionUpdate: updateSessionInfo, Title: name})
		}
		done()
	})
}

func (ss *session) cmdModel(args string, done func()) {
	defer done()
	if args == "" {
		var b strings.Builder
		b.WriteString("Models:")
		cur := ss.eng.Model()
		for _, m := range ss.eng.AvailableModels() {
			mark := " "
			if cur != nil && cur.Provider == m.Provider && cur.ID == m.ID {
				mark = "*"
			}
			fmt.Fprintf(&b, "\n%s %s/%s", mark, m.Provider, m.ID)
		}
		ss.notice(b.String())
		return
	}
	if err := ss.selectModel(args); err != nil {
		ss.notice(err.Error())
		return
	}
	ss.notice("Model: " + args)
	ss.update(configUpdate{SessionUpdate: updateConfig, ConfigOptions: ss.configOptions()})
}

// selectModel selects "provider/id" (or a bare id when one provider has
// it). (actor)
func (ss *session) selectModel(v string) error {
	provider, id, ok := strings.Cut(v, "/")
	if !ok {
		for _, m := range ss.eng.AvailableModels() {
			if m.ID == v {
				provider, id = m.Provider, m.ID
				break
			}
		}
	}
	if _, err := ss.eng.SelectModel(provider, id); err != nil {
		return fmt.Errorf("Cannot select model %s: %w", v, err)
	}
	return nil
}

// The configuration options' ids.
const (
	optModel    = "model"
	optThinking = "thought_level"
)

func modelKey(m engine.Model) string { return m.Provider + "/" + m.ID }

// thinkingLevels are the levels the current model takes: off, then its
// efforts. (actor)
func (ss *session) thinkingLevels() []engine.ThinkingLevel {
	levels := []engine.ThinkingLevel{engine.ThinkingOff}
	m := ss.eng.Model()
	if m == nil {
		return levels
	}
	policy := ss.live.Parts().Config.Thinking
	if policy == nil {
		policy = engine.RangePolicy{}
	}
	return append(levels, policy.SupportedEfforts(*m)...)
}

func (ss *session) thinkingLevel() string {
	l := ss.eng.ThinkingLevel()
	if l == "" {
		return string(engine.ThinkingOff)
	}
	return string(l)
}

// configOptions are the session's selectors: the model and the thinking
// level, and its budgets once it has one. (actor)
func (ss *session) configOptions() []sdk.SessionConfigOption {
	var models sdk.SessionConfigSelectOptionsUngrouped
	cur := ""
	if m := ss.eng.Model(); m != nil {
		cur = modelKey(*m)
	}
	found := false
	for _, m := range ss.eng.AvailableModels() {
		k := modelKey(m)
		found = found || k == cur
		models = append(models, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(k), Name: m.Name})
	}
	if !found && cur != "" {
		m := ss.eng.Model()
		models = append([]sdk.SessionConfigSelectOption{{Value: sdk.SessionConfigValueId(cur), Name: m.Name}}, models...)
	}
	var levels sdk.SessionConfigSelectOptionsUngrouped
	for _, l := range ss.thinkingLevels() {
		levels = append(levels, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(l), Name: string(l)})
	}
	modelCat, thinkCat := sdk.SessionConfigOptionCategoryModel, sdk.SessionConfigOptionCategoryThoughtLevel
	return append([]sdk.SessionConfigOption{
		{Select: &sdk.SessionConfigOptionSelect{Id: optModel, Name: "Model", Category: &modelCat, CurrentValue: sdk.SessionConfigValueId(cur),
			Options: sdk.SessionConfigSelectOptions{Ungrouped: &models}}},
		{Select: &sdk.SessionConfigOptionSelect{Id: optThinking, Name: "Thinking", Category: &thinkCat, CurrentValue: sdk.SessionConfigValueId(ss.thinkingLevel()),
			Options: sdk.SessionConfigSelectOptions{Ungrouped: &levels}}},
	}, ss.budgetConfigOptions()...) // budget.go
}

// modes are the thinking levels as the legacy session modes, for
// clients that predate configuration options. (actor)
func (ss *session) modes() *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(ss.thinkingLevel())}
	for _, l := range ss.thinkingLevels() {
		desc := "Thinking level " + string(l)
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(l), Name: "Thinking: " + string(l), Description: &desc})
	}
	return st
}

// setConfigOption is session/set_config_option; the answer holds every
// option (a model change can clamp the thinking level). A thinking change
// is also sent as current_mode_update, for clients that show modes.
// (actor)
func (ss *session) setConfigOption(from *Server, req *jsonrpc.Request) {
	var p sdk.SetSessionConfigOptionRequest
	if err := json.Unmarshal(req.Params, &p); err != nil || p.ValueId == nil {
		reason := "a select option takes a value id"
		if err != nil {
			reason = err.Error()
		}
		ss.reply(from, req, nil, errInvalidParams(reason))
		return
	}
	before := ss.thinkingLevel()
	v := string(p.ValueId.Value)
	switch string(p.ValueId.ConfigId) {
	case optModel:
		if err := ss.selectModel(v); err != nil {
			ss.reply(from, req, nil, errInvalidParams(err.Error()))
			return
		}
	case optThinking:
		if !ss.setThinking(v) {
			ss.reply(from, req, nil, errInvalidParams(fmt.Sprintf("unknown thinking level %q", v)))
			return
		}
	case optMaxCost, optMaxTokens, optMaxTime: // budget.go
		if err := ss.setBudgetOption(string(p.ValueId.ConfigId), v); err != nil {
			ss.reply(from, req, nil, errInvalidParams(err.Error()))
			return
		}
	default:
		ss.reply(from, req, nil, errInvalidParams(fmt.Sprintf("unknown configuration option %q", p.ValueId.ConfigId)))
		return
	}
	ss.reply(from, req, sdk.SetSessionConfigOptionResponse{ConfigOptions: ss.configOptions()}, nil)
	if after := ss.thinkingLevel(); after != before {
		ss.update(modeUpdate{SessionUpdate: updateMode, CurrentModeID: after})
	}
}

// setMode is the legacy session/set_mode: a thinking level; the options
// follow (config_option_update). (actor)
func (ss *session) setMode(from *Server, req *jsonrpc.Request) {
	var p sdk.SetSessionModeRequest
	if err := json.Unmarshal(req.Params, &p); err != nil {
		ss.reply(from, req, nil, errInvalidParams(err.Error()))
		return
	}
	if !ss.setThinking(string(p.ModeId)) {
		ss.reply(from, req, nil, errInvalidParams(fmt.Sprintf("unknown mode %q", p.ModeId)))
		return
	}
	ss.reply(from, req, sdk.SetSessionModeResponse{}, nil)
	ss.update(configUpdate{SessionUpdate: updateConfig, ConfigOptions: ss.configOptions()})
}

// setThinking sets a level the model offers. (actor)
func (ss *session) setThinking(v string) bool {
	for _, l := range ss.thinkingLevels() {
		if string(l) == v {
			ss.eng.SetThinkingLevel(l)
			return true
		}
	}
	return false
}
