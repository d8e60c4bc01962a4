package tools

import "github.com/xcsh-go/xcsh/engine"

// spec is the static half of engine.Tool that every built-in shares: a
// tool embeds one and implements only Run, so the four describing methods
// are written once.
type spec struct {
	name        string
	description string
	schema      []byte
	concurrency engine.Concurrency
	// idempotent: the tool only reads, so a call that may have started
	// before a crash can run again (engine.IdempotentTool).
	idempotent bool
}

func (s *spec) Name() string                    { return s.name }
func (s *spec) Description() string             { return s.description }
func (s *spec) Schema() []byte                  { return s.schema }
func (s *spec) Concurrency() engine.Concurrency { return s.concurrency }

// Idempotent implements engine.IdempotentTool.
func (s *spec) Idempotent() bool { return s.idempotent }
