package serve

import "testing"

// Every command of the server is described for the schema, and nothing
// else is.
func TestWireCoversCommands(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands() {
		seen[c.Type] = true
		if serverCommands[c.Type] == nil {
			t.Errorf("%s is described but not a server command", c.Type)
		}
	}
	for typ := range serverCommands {
		if !seen[typ] {
			t.Errorf("%s is a server command but not described in Commands (wire.go)", typ)
		}
	}
}
