package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func toolNames(tools []engine.Tool) []string {
	names := []string{}
	for _, tool := range tools {
		names = append(names, tool.Name())
	}
	return names
}

func TestBuiltinsOrder(t *testing.T) {
	t.Parallel()
	want := []string{"read", "write", "edit", "bash", "grep", "find", "todo_write"}
	if got := toolNames(Builtins(Options{Cwd: t.TempDir()})); !reflect.DeepEqual(got, want) {
		t.Errorf("Builtins order %v, want %v", got, want)
	}
	if !reflect.DeepEqual(Names, want) {
		t.Errorf("Names %v, want %v", Names, want)
	}
	// Each call builds fresh tools.
	a, b := Builtins(Options{}), Builtins(Options{})
	for i := range a {
		if a[i] == b[i] {
			t.Errorf("%s: Builtins returned a shared instance", a[i].Name())
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{"given order", []string{"find", "read"}, []string{"find", "read"}, ""},
		{"all, reversed", []string{"find", "grep", "bash", "edit", "write", "read"}, []string{"find", "grep", "bash", "edit", "write", "read"}, ""},
		{"duplicates dropped", []string{"bash", "bash", "grep", "bash"}, []string{"bash", "grep"}, ""},
		{"spaces trimmed, blanks skipped", []string{" edit ", "", "  ", "edit"}, []string{"edit"}, ""},
		{"empty list selects nothing", []string{}, []string{}, ""},
		{"nil selects nothing", nil, []string{}, ""},
		{"unknown name", []string{"read", "ls"}, nil, `unknown tool "ls" (available: read, write, edit, bash, grep, find, todo_write)`},
		{"unknown name first", []string{"todos", "read"}, nil, `unknown tool "todos" (available: read, write, edit, bash, grep, find, todo_write)`},
		{"optional todo_write", []string{"read", "todo_write"}, []string{"read", "todo_write"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Select(Options{}, tt.names)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("tools %v returned with an error", toolNames(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(got); !reflect.DeepEqual(names, tt.want) {
				t.Errorf("Select(%q) = %v, want %v", tt.names, names, tt.want)
			}
		})
	}
}

func TestSelectPassesOptions(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"only.txt": "x\n"})
	picked, err := Select(Options{Cwd: dir}, []string{"find"})
	if err != nil {
		t.Fatal(err)
	}
	wantText(t, call(t, picked[0], `{"pattern":"*.txt"}`), "only.txt", false, false)
}

func TestBuiltinSchemas(t *testing.T) {
	t.Parallel()
	for _, tool := range Builtins(Options{Cwd: t.TempDir()}) {
		t.Run(tool.Name(), func(t *testing.T) {
			if strings.TrimSpace(tool.Name()) == "" || strings.TrimSpace(tool.Description()) == "" {
				t.Fatalf("name %q, description %q", tool.Name(), tool.Description())
			}
			raw := tool.Schema()
			if !json.Valid(raw) {
				t.Fatalf("schema is not valid JSON: %s", raw)
			}
			var schema struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(raw, &schema); err != nil {
				t.Fatalf("schema: %v", err)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 {
				t.Errorf("type %q with %d properties", schema.Type, len(schema.Properties))
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
			if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
				t.Error("schema is not strict (additionalProperties must be false)")
			}
			for name, p := range schema.Properties {
				var prop map[string]any
				if err := json.Unmarshal(p, &prop); err != nil || prop["type"] == nil {
					t.Errorf("property %s: %s", name, p)
				}
			}
		})
	}
}
