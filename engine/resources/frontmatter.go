package resources

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// document is a markdown file split into its frontmatter and body.
type document struct {
	fields map[string]any
	body   string // trimmed
	// problem says what was wrong with the frontmatter when it was read
	// leniently ("" when it was valid YAML or absent).
	problem string
}

// parseDocument splits text at its frontmatter: a first line "---", YAML
// up to the next "---" line. Invalid YAML is read leniently, line by line
// as "key: value" (so a description with an unquoted colon, common in
// skills written for other agents, still loads), and the problem is
// reported. A file without frontmatter is all body.
func parseDocument(text string) document {
	text = strings.TrimPrefix(text, "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	d := document{fields: map[string]any{}}
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || strings.TrimSpace(first) != "---" {
		d.body = strings.TrimSpace(text)
		return d
	}
	lines := strings.Split(rest, "\n")
	end := -1
	for i, line := range lines {
		if strings.TrimSpace(line) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		d.problem = "frontmatter has no closing ---"
		d.body = strings.TrimSpace(text)
		return d
	}
	block := strings.Join(lines[:end], "\n")
	d.body = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	if err := yaml.Unmarshal([]byte(block), &d.fields); err != nil || d.fields == nil {
		d.fields = lenientFields(block)
		if err != nil {
			d.problem = "invalid YAML frontmatter (" + yamlError(err) + "); read line by line"
		}
	}
	return d
}

var lenientLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_-]+):\s*(.*)$`) })

// lenientFields reads "key: value" lines, unquoting quoted values.
func lenientFields(block string) map[string]any {
	out := map[string]any{}
	for _, line := range strings.Split(block, "\n") {
		m := lenientLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[2])
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		switch v {
		case "true":
			out[m[1]] = true
		case "false":
			out[m[1]] = false
		default:
			out[m[1]] = v
		}
	}
	return out
}

// yamlError is the YAML parser's message without its "yaml: " prefix.
func yamlError(err error) string { return strings.TrimPrefix(err.Error(), "yaml: ") }

// str returns the field as text: strings as they are, other scalars
// printed, "" when absent or not a scalar.
func (d document) str(key string) string {
	switch v := d.fields[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	case bool, int, int64, float64:
		return fmt.Sprint(v)
	}
	return ""
}

// flag reports whether the field is true.
func (d document) flag(key string) bool {
	b, _ := d.fields[key].(bool)
	return b
}
