package shellexec

import "encoding/json"

// applyConfig applies the agent's configuration to the supervisor itself
// before it starts any command, and returns what it enforces.
func applyConfig(raw json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
