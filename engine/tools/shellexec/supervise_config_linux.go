package shellexec

import (
	"encoding/json"

	"github.com/xcsh-go/xcsh/engine/tools/sandbox"
)

// applyConfig applies the agent's sandbox (a sandbox.Config, or nothing)
// to the supervisor itself before it starts any command, so every command
// inherits it, and returns how it is enforced (a sandbox.Enforcement).
func applyConfig(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c sandbox.Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	e, err := c.Apply()
	if err != nil {
		return nil, err
	}
	return json.Marshal(e)
}
