package rules

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// frontmatter is what a rule file's header may say: the fields of every
// family, read by name (a field is in at most one family's format).
type frontmatter struct {
	description string
	globs       []string // Cursor, Windsurf: patterns, or one comma-separated string
	paths       []string // Claude Code, Cline: patterns
	alwaysApply bool     // Cursor
	trigger     string   // Windsurf: always_on, glob, model_decision, manual
	// TTSR (ours and omp's): the condition under its three names.
	condition, ttsrTrigger, ttsrTrigger2 []string
	scope                                []string
	interruptMode                        string
	enabled                              *bool
}

// parseFrontmatter reads the header. Cursor writes globs unquoted
// (globs: **/*.ts, which YAML reads as an alias), so a globs or paths
// value that is not quoted or a list is taken as written. Invalid YAML is
// read line by line as "key: value" (and "- item" lists), the problem
// returned as a warning; a field of the wrong type is an error.
func parseFrontmatter(head []byte) (frontmatter, string, error) {
	fields := map[string]any{}
	warning := ""
	if err := yaml.Unmarshal(quoteRawGlobs(head), &fields); err != nil {
		fields = lenientFields(head)
		warning = "invalid YAML frontmatter (" + strings.TrimPrefix(err.Error(), "yaml: ") + "); read line by line"
	}
	var fm frontmatter
	var err error
	str := func(key string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = fieldString(fields, key)
		return s
	}
	list := func(key string) []string {
		if err != nil {
			return nil
		}
		var l []string
		l, err = fieldList(fields, key)
		return l
	}
	fm.description = str("description")
	fm.trigger = str("trigger")
	fm.interruptMode = str("interruptMode")
	fm.globs = list("globs")
	fm.paths = list("paths")
	fm.condition = list("condition")
	fm.ttsrTrigger = list("ttsr_trigger")
	fm.ttsrTrigger2 = list("ttsrTrigger")
	fm.scope = list("scope")
	if err == nil {
		fm.alwaysApply, err = fieldBool(fields, "alwaysApply")
	}
	if v, ok := fields["enabled"]; ok && v != nil && err == nil {
		var b bool
		if b, err = fieldBool(fields, "enabled"); err == nil {
			fm.enabled = &b
		}
	}
	return fm, warning, err
}

func fieldString(fields map[string]any, key string) (string, error) {
	switch v := fields[key].(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("%s: want text", key)
}

func fieldList(fields map[string]any, key string) ([]string, error) {
	switch v := fields[key].(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			s, err := fieldString(map[string]any{key: item}, key)
			if err != nil {
				return nil, fmt.Errorf("%s: want text or a list of text", key)
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := fieldString(fields, key)
	if err != nil {
		return nil, fmt.Errorf("%s: want text or a list of text", key)
	}
	return []string{s}, nil
}

func fieldBool(fields map[string]any, key string) (bool, error) {
	switch v := fields[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, fmt.Errorf("%s: want true or false, got %s", key, quoteValue(fields[key]))
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// rawGlobLine is a globs or paths line with its value.
var rawGlobLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(globs|paths):[ \t]*(.*?)[ \t]*$`) })

// quoteRawGlobs quotes the value of a globs or paths line that is neither
// quoted, nor a list, nor empty, so YAML reads the patterns as written
// (Cursor's "globs: **/*.ts, src/*.{js,jsx}"). A " #" starts a comment,
// as in YAML.
func quoteRawGlobs(head []byte) []byte {
	return rawGlobLine().ReplaceAllFunc(head, func(line []byte) []byte {
		m := rawGlobLine().FindSubmatch(line)
		v := string(m[2])
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if v == "" || strings.ContainsAny(v[:1], `"'[-|>`) {
			return line
		}
		return []byte(string(m[1]) + ": " + strconv.Quote(v))
	})
}

var lenientLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_-]+):\s*(.*)$`) })

// lenientFields reads a header that is not valid YAML line by line:
// "key: value" (quotes removed; true and false as booleans), and "- item"
// lines after a key with no value as its list.
func lenientFields(head []byte) map[string]any {
	out := map[string]any{}
	var listKey string
	for _, line := range strings.Split(string(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n"))), "\n") {
		t := strings.TrimSpace(line)
		if item, ok := strings.CutPrefix(t, "- "); ok && listKey != "" {
			l, _ := out[listKey].([]any)
			out[listKey] = append(l, unquote(strings.TrimSpace(item)))
			continue
		}
		m := lenientLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		listKey = ""
		v := strings.TrimSpace(m[2])
		switch v {
		case "":
			listKey = m[1]
		case "true":
			out[m[1]] = true
		case "false":
			out[m[1]] = false
		default:
			out[m[1]] = unquote(v)
		}
	}
	return out
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// split cuts a file into its YAML frontmatter (between two --- lines at
// the top) and its body.
func split(b []byte) (head, body []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(b, []byte("---\n")) {
		return nil, b, false
	}
	rest := b[4:]
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(rest, []byte("---")) {
		return nil, bytes.TrimPrefix(rest, []byte("---")), true
	}
	i := bytes.Index(rest, []byte("\n---"))
	if i < 0 {
		return nil, b, false
	}
	end := i + 4
	if end < len(rest) && rest[end] != '\n' {
		return nil, b, false
	}
	return rest[:i+1], rest[min(end+1, len(rest)):], true
}
