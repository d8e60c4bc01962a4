package codecgen

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// The generated files parse, and each object gets its codecs.
func TestGenerate(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("files: %d", len(files))
	}
	all := ""
	for name, src := range files {
		if _, err := parser.ParseFile(token.NewFileSet(), name, src, 0); err != nil {
			t.Fatal(err)
		}
		all += string(src)
	}
	for _, o := range Objects {
		for _, want := range []string{") " + o.appendName() + "(dst []byte) []byte", "func (s *fastScan) read" + o.Type + "(", ") sizeHint() int"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no %q", o.Type, want)
			}
		}
	}
}

// A table the generated code would get wrong is refused.
func TestCheckRefuses(t *testing.T) {
	saved := Objects
	t.Cleanup(func() { Objects = saved })
	for name, o := range map[string]Object{
		"a key twice, in another case": {Type: "X", Roles: []string{"x"}, Fields: []Field{{Key: "a", Go: "A", Kind: String}, {Key: "A", Go: "B", Kind: String}}},
		"an optional first key":        {Type: "X", Fields: []Field{{Key: "a", Go: "A", Kind: String, Omit: true}}},
		"a variant of no key":          {Type: "X", Variants: []Variant{{Name: "V", Keys: []string{"b"}}}, Fields: []Field{{Key: "a", Go: "A", Kind: BlockType}}},
	} {
		Objects = []Object{o}
		if _, err := Generate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
