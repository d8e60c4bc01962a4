package models

import (
	"errors"
	"strconv"
)

// ErrInvalidConfig is wrapped by every *ConfigError, so callers can tell a
// broken models.json or models.yml from an unreadable one with errors.Is.
var ErrInvalidConfig = errors.New("invalid models configuration")

// ConfigError locates a problem in a models.json or models.yml file: the
// file, the 1-based line and the dotted path of the field
// (providers.my-vllm.models[0].contextWindow). Its text never quotes a
// configured value, so an API key or a header value cannot leak through it.
type ConfigError struct {
	File  string // the path as read, <agentDir>/models.yml
	Line  int    // 1-based; 0 when unknown
	Field string // "" for a syntax error
	Msg   string
}

func (e *ConfigError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Unwrap makes errors.Is(err, ErrInvalidConfig) hold.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }
