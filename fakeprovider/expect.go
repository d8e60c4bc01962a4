package fakeprovider

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/xcsh-go/xcsh/engine"
)

// expect is what a turn requires of the request before it replays. Pointer
// fields distinguish "not checked" from an expected zero value.
type expect struct {
	lastUserText         *string
	lastUserTextContains []string
	systemPromptContains []string
	toolsOffered         []string
	toolsAbsent          []string
	messageCount         *int
	lastRole             *string
	contextContains      []string
	thinkingLevel        *string
}

var thinkingLevels = []engine.ThinkingLevel{"", engine.ThinkingOff, engine.ThinkingMinimal, engine.ThinkingLow,
	engine.ThinkingMedium, engine.ThinkingHigh, engine.ThinkingXHigh}

func parseExpect(ef field) (*expect, error) {
	fields, err := objectFields(ef.val, `"expect"`)
	if err != nil {
		return nil, err
	}
	x := &expect{}
	for _, f := range fields {
		switch f.key {
		case "lastUserText":
			x.lastUserText, err = strPtr(f)
		case "lastUserTextContains":
			x.lastUserTextContains, err = f.strs()
		case "systemPromptContains":
			x.systemPromptContains, err = f.strs()
		case "toolsOffered":
			x.toolsOffered, err = f.strs()
		case "toolsAbsent":
			x.toolsAbsent, err = f.strs()
		case "messageCount":
			var n int
			n, err = f.count()
			x.messageCount = &n
		case "lastRole":
			x.lastRole, err = strPtr(f)
			if err == nil && *x.lastRole == "" {
				err = fmt.Errorf(`"lastRole" must not be empty`)
			}
		case "contextContains":
			x.contextContains, err = f.strs()
		case "thinkingLevel":
			x.thinkingLevel, err = strPtr(f)
			if err == nil && !knownLevel(*x.thinkingLevel) {
				err = fmt.Errorf(`bad "thinkingLevel" %q (want "", off, minimal, low, medium, high or xhigh)`, *x.thinkingLevel)
			}
		default:
			err = fmt.Errorf("unknown key %q (want lastUserText, lastUserTextContains, systemPromptContains, "+
				"toolsOffered, toolsAbsent, messageCount, lastRole, contextContains or thinkingLevel)", f.key)
		}
		if err != nil {
			return nil, err
		}
	}
	return x, nil
}

func strPtr(f field) (*string, error) {
	s, err := f.str()
	return &s, err
}

func knownLevel(s string) bool {
	for _, l := range thinkingLevels {
		if string(l) == s {
			return true
		}
	}
	return false
}

// check returns one "<what>: want <x>, got <y>" line per failed expectation,
// in a fixed order.
func (x *expect) check(req *engine.Request) []string {
	var fails []string
	failf := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }

	last, haveUser := lastUserText(req.Messages)
	gotUser := "no user message"
	if haveUser {
		gotUser = quote(last)
	}
	if x.lastUserText != nil && (!haveUser || last != *x.lastUserText) {
		failf("lastUserText: want %s, got %s", quote(*x.lastUserText), gotUser)
	}
	for _, want := range x.lastUserTextContains {
		if !haveUser || !strings.Contains(last, want) {
			failf("lastUserTextContains: want %s, got %s", quote(want), gotUser)
		}
	}
	for _, want := range x.systemPromptContains {
		if !strings.Contains(req.SystemPrompt, want) {
			failf("systemPromptContains: want %s, got %s", quote(want), quote(req.SystemPrompt))
		}
	}
	offered := make(map[string]bool, len(req.Tools))
	names := make([]string, 0, len(req.Tools))
	for _, t := range req.Tools {
		offered[t.Name] = true
		names = append(names, strconv.Quote(t.Name))
	}
	tools := "[" + strings.Join(names, ",") + "]"
	for _, want := range x.toolsOffered {
		if !offered[want] {
			failf("toolsOffered: want %s, got %s", quote(want), tools)
		}
	}
	for _, want := range x.toolsAbsent {
		if offered[want] {
			failf("toolsAbsent: want no %s, got %s", quote(want), tools)
		}
	}
	if x.messageCount != nil && len(req.Messages) != *x.messageCount {
		failf("messageCount: want %d, got %d", *x.messageCount, len(req.Messages))
	}
	if x.lastRole != nil {
		switch n := len(req.Messages); {
		case n == 0:
			failf("lastRole: want %s, got no messages", quote(*x.lastRole))
		case req.Messages[n-1].Role() != *x.lastRole:
			failf("lastRole: want %s, got %s", quote(*x.lastRole), quote(req.Messages[n-1].Role()))
		}
	}
	if len(x.contextContains) > 0 {
		encoded := make([]string, 0, len(req.Messages))
		for _, m := range req.Messages {
			if b, err := m.MarshalJSON(); err == nil {
				encoded = append(encoded, string(b))
			}
		}
		for _, want := range x.contextContains {
			if !containsAny(encoded, want) {
				failf("contextContains: want %s, got %d messages without it", quote(want), len(req.Messages))
			}
		}
	}
	if x.thinkingLevel != nil && string(req.ThinkingLevel) != *x.thinkingLevel {
		failf("thinkingLevel: want %s, got %s", quote(*x.thinkingLevel), quote(string(req.ThinkingLevel)))
	}
	return fails
}

// lastUserText returns the concatenated text blocks of the last user message.
func lastUserText(msgs []engine.Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if u, ok := msgs[i].(*engine.UserMessage); ok {
			return u.Text(), true
		}
	}
	return "", false
}

func containsAny(hay []string, needle string) bool {
	for _, h := range hay {
		if strings.Contains(h, needle) {
			return true
		}
	}
	return false
}

// maxQuoted bounds the runes of a quoted value in a failure message, so a
// long system prompt does not drown the line.
const maxQuoted = 200

// quote quotes s for a failure message, cutting it to maxQuoted runes.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxQuoted {
		return strconv.Quote(cutRunes(s, maxQuoted)) + "…"
	}
	return strconv.Quote(s)
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
