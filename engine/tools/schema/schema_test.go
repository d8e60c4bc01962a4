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
