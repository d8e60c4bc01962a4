// Package codecgen writes package engine's message codec from one table
// per JSON object (Objects, spec.go): each key is named once there, and
// the three codecs of engine are generated from it, so they cannot
// disagree about a key:
//
//   - the encoder (codec_encode_gen.go): AppendJSON, MarshalJSON and a
//     size hint per object, keys in table order, each left out exactly
//     where its row says;
//   - the fast decoder (codec_fast_gen.go): a reader per object on
//     engine/internal/jsonscan that takes the keys in any order and gives
//     up (for the general decoder to decide) on anything else: an unknown,
//     duplicated or escaped key, a null, a value of another type;
//   - the general decoder (codec_decode_gen.go): UnmarshalJSON per object
//     through an aux struct that encoding/json fills, so its rules hold
//     exactly (keys matched case-insensitively, a later duplicate wins,
//     null leaves a value alone, unknown keys are skipped).
//
// The output is plain code, as fast as code written by hand: a codec
// that walked the same tables at run time (a loop over the rows, a switch
// on each value's kind) measured 20-40% slower to encode and about 10%
// slower to decode, on the path every streamed, saved and loaded message
// takes. Run go generate in
// engine after changing a table; TestCodecGenerated fails while the
// committed files differ from what Generate writes.
package codecgen

import (
	"bytes"
	"fmt"
	"go/format"
	"strconv"
	"strings"
)

// Kind is the type of a row's value, which decides how each codec treats
// it.
type Kind int

const (
	String       Kind = iota + 1 // string (Intern: interned by the fast reader)
	StopReason                   // engine.StopReason, interned
	Int64                        // int64
	Bool                         // bool
	Float64                      // float64, written in the original's shortest form
	Raw                          // []byte holding a JSON value, compacted; nil is absent
	RawObject                    // []byte holding a JSON object, written as {} when empty
	Int64Ptr                     // *int64; nil is absent
	IntPtr                       // *int; nil is absent
	BoolPtr                      // *bool; nil is absent
	Float64Ptr                   // *float64; nil is absent
	OptionalBool                 // bool written only when true, read as an optional boolean (null is false)
	Blocks                       // []ContentBlock
	BlockPtr                     // *ContentBlock; nil is absent
	UsageObject                  // Usage
	CostObject                   // Cost
	FileMentions                 // []FileMention, nil written as []
	Content                      // []ContentBlock, and StringContent: content given as a string stays one
	Attribution                  // string, and noAttribution: absent stays absent, else "user" unless set
	BlockType                    // a block's type: the fast reader knows the variants', another is kept raw
)

// Field is one key of an object: its name on the wire, the Go field that
// holds it, its kind; Omit leaves it out when it is zero (the original
// does not write it), Intern makes the fast reader intern the string (it
// repeats across a session file: api, provider, model, tool name).
type Field struct {
	Key    string
	Go     string
	Kind   Kind
	Omit   bool
	Intern bool
}

// Variant is one variant of an object whose keys depend on its type (a
// content block): the Go constant of the type and its keys.
type Variant struct {
	Name string
	Keys []string
}

// Object is one JSON object type of the codec.
type Object struct {
	Type string // the Go type in package engine
	Recv string // its receiver name; "m" when empty
	// Roles are a message's roles: the first is written, any is read.
	// Legacy, if set, is the role that sets Legacy (and Role() writes).
	Roles  []string
	Legacy string
	// Tail is the key from which a message's encoding is also written by
	// appendTail (the streaming partial caches it).
	Tail string
	// Raw marks an object kept as its bytes when its type is no variant's
	// (a block of a type this package does not know).
	Raw      bool
	Variants []Variant
	// Exported gives a nested object an exported AppendJSON and
	// UnmarshalJSON (messages and blocks have them anyway).
	Exported bool
	Fields   []Field
}

func (o *Object) recv() string {
	if o.Recv == "" {
		return "m"
	}
	return o.Recv
}

func (o *Object) message() bool { return len(o.Roles) > 0 }

func (o *Object) appendName() string {
	if o.message() || o.Exported || o.Raw {
		return "AppendJSON"
	}
	return "appendJSON"
}

// lower is name with its first letter in lower case.
func lower(name string) string { return strings.ToLower(name[:1]) + name[1:] }

// Generate returns the generated files of package engine, by name,
// formatted.
func Generate() (map[string][]byte, error) {
	if err := check(); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for name, emit := range map[string]func(*gen){
		"codec_encode_gen.go": encodeFile,
		"codec_fast_gen.go":   fastFile,
		"codec_decode_gen.go": decodeFile,
		"codec_wire_gen.go":   wireFile,
	} {
		g := &gen{}
		g.p("// Code generated by engine/internal/codecgen from its spec.go; DO NOT EDIT.")
		g.p("")
		g.p("package engine")
		g.p("")
		emit(g)
		src, err := format.Source(g.buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %v\n%s", name, err, g.buf.Bytes())
		}
		out[name] = src
	}
	return out, nil
}

// check refuses a table the generated code would get wrong.
func check() error {
	for _, o := range Objects {
		keys := map[string]bool{}
		for i, f := range o.Fields {
			if keys[strings.ToLower(f.Key)] {
				return fmt.Errorf("%s: key %q twice (encoding/json matches keys case-insensitively)", o.Type, f.Key)
			}
			keys[strings.ToLower(f.Key)] = true
			if i == 0 && !o.message() && (f.Omit || f.Kind == Int64Ptr || f.Kind == IntPtr || f.Kind == BoolPtr ||
				f.Kind == Float64Ptr || f.Kind == BlockPtr || f.Kind == Raw) {
				return fmt.Errorf("%s: the first key %q must always be written", o.Type, f.Key)
			}
		}
		if len(o.Fields) > 31 {
			return fmt.Errorf("%s: more keys than the fast reader's seen bits", o.Type)
		}
		for _, v := range o.Variants {
			for _, k := range v.Keys {
				if !keys[strings.ToLower(k)] {
					return fmt.Errorf("%s: variant %s names no key %q", o.Type, v.Name, k)
				}
			}
		}
	}
	return nil
}

// gen accumulates a file.
type gen struct{ buf bytes.Buffer }

func (g *gen) p(format string, args ...any) {
	fmt.Fprintf(&g.buf, format, args...)
	g.buf.WriteByte('\n')
}

func prefix(key string) string { return `,"` + key + `":` }

// quote is s as a Go string literal, raw when it can be (keys read
// better without escaped quotes).
func quote(s string) string {
	if strings.ContainsAny(s, "`\n") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
