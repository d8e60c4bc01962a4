// Package schema validates tool-call arguments against the tools' JSON
// Schemas with github.com/santhosh-tekuri/jsonschema/v6, a maintained,
// spec-complete validator (drafts 4 to 2020-12) whose error tree gives an
// instance location for every problem. The validator is a copy in
// internal/jsonschema (third-party code, patched to start faster; see its
// README.xcsh.md), imported by this module's own path so that `go install
// github.com/xcsh-go/xcsh/cmd/xcsh@version` needs no replace directive.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine/tools/schema/internal/jsonschema"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Validator implements engine.Validator. Compiled schemas are cached by
// their bytes; it is safe for concurrent use.
type Validator struct {
	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

// New returns a Validator.
func New() *Validator { return &Validator{cache: map[string]*jsonschema.Schema{}} }

func (v *Validator) compile(schema []byte) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[string(schema)]; ok {
		return s, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("tool.json")
	if err != nil {
		return nil, err
	}
	v.cache[string(schema)] = s
	return s, nil
}

// Validate implements engine.Validator: one "<location>: <problem>" line
// per leaf problem, sorted; nil when args are valid.
func (v *Validator) Validate(schema, args []byte) []string {
	s, err := v.compile(schema)
	if err != nil {
		return []string{"schema: " + err.Error()}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(StripOptionalNulls(schema, args)))
	if err != nil {
		return []string{"arguments: invalid JSON"}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "root"
			if len(e.InstanceLocation) > 0 {
				loc = "/" + strings.Join(e.InstanceLocation, "/")
			}
			out = append(out, fmt.Sprintf("%s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return out
}

// StripOptionalNulls drops top-level properties whose value is null and
// that the schema does not require: models often send null for "not
// given", which the original accepts.
func StripOptionalNulls(schema, args []byte) []byte {
	var sch struct {
		Required []string `json:"required"`
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(schema, &sch) != nil || json.Unmarshal(args, &obj) != nil || obj == nil {
		return args
	}
	required := map[string]bool{}
	for _, r := range sch.Required {
		required[r] = true
	}
	changed := false
	for k, val := range obj {
		if !required[k] && string(bytes.TrimSpace(val)) == "null" {
			delete(obj, k)
			changed = true
		}
	}
	if !changed {
		return args
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return args
	}
	return b
}
