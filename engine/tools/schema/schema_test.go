package schema

import (
	"strings"
	"sync"
	"testing"
)

const writeSchema = `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"n":{"type":"integer"}},"required":["path","content"],"additionalProperties":false}`

func TestValidate(t *testing.T) {
	t.Parallel()
	v := New()
	cases := []struct {
		args string
		want string
	}{
		{`{"path":"a","content":"b"}`, ""},
		{`{"path":"a","content":"b","n":null}`, ""},
		{`{"path":"a"}`, `root: missing property 'content'`},
		{`{"path":"a","content":5,"mode":"x"}`, `/content: got number, want string|root: additional properties 'mode' not allowed`},
		{`{"path":`, `arguments: invalid JSON`},
	}
	for _, c := range cases {
		got := strings.Join(v.Validate([]byte(writeSchema), []byte(c.args)), "|")
		if got != c.want {
			t.Errorf("%s: got %q want %q", c.args, got, c.want)
		}
	}
	if got := v.Validate([]byte(`{"type":"nope"}`), []byte(`{}`)); len(got) != 1 || !strings.HasPrefix(got[0], "schema: ") {
		t.Errorf("bad schema: %v", got)
	}
}

// ValidateValue checks a whole value exactly: a null is not "not given",
// and a value need not be an object.
func TestValidateValue(t *testing.T) {
	t.Parallel()
	v := New()
	for _, c := range []struct{ schema, doc, want string }{
		{writeSchema, `{"path":"a","content":"b"}`, ""},
		{writeSchema, `{"path":"a","content":"b","n":null}`, `/n: got null, want integer`},
		{writeSchema, `[1]`, `root: got array, want object`},
		{`{"type":"array","items":{"type":"string"}}`, `["a",2]`, `/1: got number, want string`},
		{writeSchema, `{"path":`, `root: invalid JSON`},
	} {
		if got := strings.Join(v.ValidateValue([]byte(c.schema), []byte(c.doc)), "|"); got != c.want {
			t.Errorf("%s: got %q want %q", c.doc, got, c.want)
		}
	}
}

func TestValidateConcurrent(t *testing.T) {
	t.Parallel()
	v := New()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := v.Validate([]byte(writeSchema), []byte(`{"path":1,"content":"x"}`)); len(got) != 1 {
				t.Errorf("got %v", got)
			}
		}()
	}
	wg.Wait()
}

// References that stay inside the schema, and the meta-schemas of every
// supported draft named by $schema (embedded, not loaded), work.
func TestCheckAcceptsInDocumentRefs(t *testing.T) {
	t.Parallel()
	v := New()
	for _, c := range []struct{ schema, bad string }{
		{`{"$defs":{"k":{"type":"string","minLength":3}},"properties":{"p":{"$ref":"#/$defs/k"}}}`, `{"p":"ab"}`},
		{`{"$defs":{"k":{"$anchor":"key","type":"string"}},"properties":{"p":{"$ref":"#key"}}}`, `{"p":1}`},
		{`{"$id":"https://example.com/t.json","$defs":{"k":{"type":"string"}},"properties":{"p":{"$ref":"t.json#/$defs/k"}}}`, `{"p":1}`},
		{`{"$id":"https://example.com/t.json","$defs":{"k":{"$id":"k.json","type":"string"}},"properties":{"p":{"$ref":"k.json"}}}`, `{"p":1}`},
		{`{"definitions":{"k":{"type":"string"}},"properties":{"p":{"$ref":"#/definitions/k"}}}`, `{"p":1}`},
		{`{"properties":{"p":{"type":"array","items":{"$ref":"#"}}}}`, `{"p":[{"p":1}]}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"p":{"type":"string"}}}`, `{"p":1}`},
		{`{"$schema":"http://json-schema.org/draft-06/schema#","properties":{"p":{"type":"string"}}}`, `{"p":1}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"p":{"type":"string"}}}`, `{"p":1}`},
		{`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"p":{"type":"string"}}}`, `{"p":1}`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"p":{"type":"string"}}}`, `{"p":1}`},
	} {
		if err := v.Check([]byte(c.schema)); err != nil {
			t.Errorf("%s: %v", c.schema, err)
			continue
		}
		if got := v.Validate([]byte(c.schema), []byte(c.bad)); len(got) == 0 || strings.HasPrefix(got[0], "schema:") {
			t.Errorf("%s: %s validated: %v", c.schema, c.bad, got)
		}
	}
}

// A schema that is not one says why, in words a host can act on; the
// reason is cached with the schema.
func TestCheckInvalidSchema(t *testing.T) {
	t.Parallel()
	v := New()
	for schema, want := range map[string]string{
		`{"type":"nope"}`:   `not a valid JSON Schema: /type: `,
		`{"type":`:          `not valid JSON: `,
		`{"$ref":"#/nope"}`: `json-pointer in "schema#/nope" not found`,
	} {
		err := v.Check([]byte(schema))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %s…", schema, err, want)
		}
		if again := v.Check([]byte(schema)); again != err {
			t.Errorf("%s: not cached: %v", schema, again)
		}
	}
}
