// Package schema validates tool-call arguments against the tools' JSON
// Schemas with github.com/santhosh-tekuri/jsonschema/v6, a maintained,
// spec-complete validator (drafts 4 to 2020-12) whose error tree gives an
// instance location for every problem. The validator is a copy in
// internal/jsonschema (third-party code, patched to start faster; see its
// README.xcsh.md), imported by this module's own path so that `go install
// github.com/xcsh-go/xcsh/cmd/xcsh@version` needs no replace directive.
//
// A tool's schema is one document: it may refer within itself, never to a
// file or URL, which the compiler is given no way to load (noLoader). Check
// says so when the tool is registered.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/xcsh-go/xcsh/engine/tools/schema/internal/jsonschema"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Validator implements engine.Validator. Compiled schemas, and the reasons
// a schema does not compile, are cached by the schema's bytes; it is safe
// for concurrent use.
type Validator struct {
	mu    sync.Mutex
	cache map[string]compiled
}

type compiled struct {
	s   *jsonschema.Schema
	err error
}

// New returns a Validator.
func New() *Validator { return &Validator{cache: map[string]compiled{}} }

// ErrExternalRef is why a schema that refers to another document is
// refused: a $ref (or $schema, or $id) that does not resolve inside the
// schema itself.
var ErrExternalRef = errors.New("it refers to a document outside itself")

// base is the URL a tool schema is compiled as. It is not a file: relative
// references resolve against it to URLs the loader refuses like any other,
// and no text the compiler writes carries the agent's working directory.
const base = "xcsh:///tool/schema.json"

// noLoader is the compiler's loader, and it loads nothing. A tool schema
// comes from outside the binary (a host's set_host_tools, an extension, an
// MCP server); the validator's default loader opens the file a reference
// names, so "$ref":"f.fifo" blocked the run for good, "file:///dev/stdin"
// read the host's protocol input, and a reference to a secret put its
// content in the validation errors the model reads. References inside the
// schema ("#/$defs/x", anchors, $id-relative ones that land in the same
// document) never reach a loader, and the meta-schemas of the drafts a
// $schema may name are embedded in the validator.
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, ErrExternalRef }

func (v *Validator) compile(schema []byte) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.cache[string(schema)]; ok {
		return c.s, c.err
	}
	s, err := compileSchema(schema)
	v.cache[string(schema)] = compiled{s, err}
	return s, err
}

// compileSchema compiles one tool schema; its error names the problem in
// words a host or a model can act on.
func compileSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(base, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(base)
	var le *jsonschema.LoadURLError
	var se *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	switch {
	case err == nil:
		return s, nil
	case errors.As(err, &le) && errors.Is(le.Err, ErrExternalRef):
		return nil, fmt.Errorf("%w: %q (only references within the schema, such as \"#/$defs/name\", are allowed)",
			ErrExternalRef, shortURL(le.URL))
	case errors.As(err, &se) && errors.As(se.Err, &ve):
		return nil, fmt.Errorf("not a valid JSON Schema: %s", strings.Join(leaves(ve), "; "))
	}
	return nil, errors.New(strings.ReplaceAll(err.Error(), base, "schema"))
}

// shortURL is u as the schema most likely wrote it: relative to base when
// it resolved under base's directory, an absolute path when it resolved
// elsewhere on base's host, else the whole URL.
func shortURL(u string) string {
	if r, ok := strings.CutPrefix(u, "xcsh:///tool/"); ok {
		return r
	}
	return strings.TrimPrefix(u, "xcsh://")
}

// leaves are the leaf problems of e, one "<location>: <problem>" line each,
// sorted.
func leaves(e *jsonschema.ValidationError) []string {
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
	walk(e)
	sort.Strings(out)
	return out
}

// Check implements engine.Validator: why schema cannot be a tool's
// parameters (it does not compile, or refers outside itself), nil when it
// can. The compiled schema is kept for the calls to come.
func (v *Validator) Check(schema []byte) error {
	_, err := v.compile(schema)
	return err
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
	return leaves(ve)
}

// ValidateValue implements engine.ValueValidator: Validate for a whole
// JSON value, exactly (a prompt's final answer against its output schema:
// a null there is the answer's, not a model's "not given").
func (v *Validator) ValidateValue(schema, doc []byte) []string {
	s, err := v.compile(schema)
	if err != nil {
		return []string{"schema: " + err.Error()}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return []string{"root: invalid JSON"}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{err.Error()}
	}
	return leaves(ve)
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
