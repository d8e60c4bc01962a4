package schema

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/rpc"
)

// docTable returns the backquoted names of the first cell of each row of
// the first table after heading in docs/rpc.md (its header row aside).
func docTable(t *testing.T, doc, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/rpc.md has no %q", heading)
	}
	// A wire name: a code span of letters and underscores (not a call
	// such as `agent.continue()` mentioned beside one).
	tick := regexp.MustCompile("`([A-Za-z_]+)`")
	var names []string
	inTable, header := false, true
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(line, "|")
		if len(cells) < 3 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || header {
			header = false
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("docs/rpc.md: no table after %q", heading)
	}
	return names
}

// compare reports what is in one list and not the other, both ways.
func compare(t *testing.T, what string, doc, schema []string) {
	t.Helper()
	for _, n := range doc {
		if !slices.Contains(schema, n) {
			t.Errorf("%s: docs/rpc.md lists %q, the schema has no such", what, n)
		}
	}
	for _, n := range schema {
		if !slices.Contains(doc, n) {
			t.Errorf("%s: the schema has %q, docs/rpc.md's table does not list it", what, n)
		}
	}
}

// docs/rpc.md's tables of commands, frame types and UI methods agree with
// the schema, both ways.
func TestDocsTablesAgree(t *testing.T) {
	raw, err := os.ReadFile("../../docs/rpc.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	var cmds []string
	for _, c := range rpc.Commands() {
		cmds = append(cmds, c.Type)
	}
	compare(t, "commands", docTable(t, doc, "## Commands (this release)"), cmds)

	frames := []string{"ready", "response"}
	for _, f := range events {
		frames = append(frames, f.Event.EventType())
	}
	frames = append(frames, uiRequests[0].Event.EventType())
	compare(t, "frame types", docTable(t, doc, "### Frame types"), frames)

	var methods []string
	for _, f := range uiRequests {
		methods = append(methods, f.Method)
	}
	compare(t, "extension UI methods", docTable(t, doc, "The `method`s of `extension_ui_request`:"), methods)
}
