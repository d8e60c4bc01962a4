package rpc

import (
	"slices"
	"testing"
)

// Every command the server handles is described for the schema, and
// nothing else is.
func TestWireCoversHandlers(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Commands() {
		if seen[c.Type] {
			t.Errorf("%s described twice", c.Type)
		}
		seen[c.Type] = true
		if _, ok := handlers[c.Type]; !ok {
			t.Errorf("%s is described but has no handler", c.Type)
		}
		if _, isReply := replyFrames[c.Type]; isReply != c.Reply {
			t.Errorf("%s: Reply is %v, the pending table says %v", c.Type, c.Reply, isReply)
		}
	}
	var missing []string
	for typ := range handlers {
		if !seen[typ] {
			missing = append(missing, typ)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("handled but not described in Commands (wire.go): %v", missing)
	}
}
