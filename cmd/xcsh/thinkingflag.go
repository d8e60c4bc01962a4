package main

import (
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
)

// thinkingFlag reads --thinking ("" when not given). A value that is no
// level is a start-up error (exit 2), as a bad --provider is: the
// original warns and goes on at its default, so a typo (--thinking huge)
// silently costs the most expensive level.
func thinkingFlag(v string) (engine.ThinkingLevel, error) {
	if v == "" {
		return "", nil
	}
	l, ok := parseThinking(v)
	if !ok {
		return "", &exitError{2, fmt.Sprintf("Error: invalid --thinking %q (expected off, minimal, low, medium, high or xhigh)", v)}
	}
	return l, nil
}
