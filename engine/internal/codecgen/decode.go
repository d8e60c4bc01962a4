package codecgen

import (
	"fmt"
	"strings"
)

// decodeFile writes codec_decode_gen.go: the role dispatch of the general
// path and UnmarshalJSON per object, through an aux struct.
func decodeFile(g *gen) {
	g.p(`import "encoding/json"`)
	g.p("")
	g.p("// messageOfRole returns a new message of a role this package knows, nil")
	g.p("// for any other.")
	g.p("func messageOfRole(role string) interface {")
	g.p("Message")
	g.p("json.Unmarshaler")
	g.p("} {")
	g.p("switch role {")
	for i := range Objects {
		o := &Objects[i]
		if o.message() {
			g.p("case %s:", quoteAll(o.Roles))
			g.p("return new(%s)", o.Type)
		}
	}
	g.p("}")
	g.p("return nil")
	g.p("}")
	for i := range Objects {
		o := &Objects[i]
		r := o.recv()
		nested := !o.message() && !o.Exported && !o.Raw
		g.p("")
		if nested {
			// Decoded as a plain struct inside its parent's aux struct, as
			// encoding/json decodes any struct (a repeated key's objects
			// merge); value converts it.
			g.p("// %sJSON is what encoding/json decodes a %s object into, in its", lower(o.Type), o.Type)
			g.p("// parent's aux struct; value converts it.")
			g.p("type %sJSON struct {", lower(o.Type))
			for _, f := range o.Fields {
				g.p("%s %s `json:%q`", f.Go, wireType(f), f.Key)
			}
			g.p("}")
			g.p("")
			g.p("func (a *%sJSON) value() %s {", lower(o.Type), o.Type)
			g.p("return %s{", o.Type)
			for _, f := range o.Fields {
				g.p("%s: %s,", f.Go, wireValue(f, "a."+f.Go))
			}
			g.p("}")
			g.p("}")
			continue
		}
		if o.Raw {
			g.p("// UnmarshalJSON implements json.Unmarshaler. A %s of a type this", o.Type)
			g.p("// package does not know keeps its bytes and encodes back to them.")
		} else if o.Legacy != "" {
			g.p("// UnmarshalJSON implements json.Unmarshaler. It accepts the legacy role")
			g.p("// %q and remembers it in Legacy.", o.Legacy)
		} else {
			g.p("// UnmarshalJSON implements json.Unmarshaler.")
		}
		g.p("func (%s *%s) UnmarshalJSON(data []byte) error {", r, o.Type)
		g.p("var aux struct {")
		if o.message() {
			g.p("Role string `json:\"role\"`")
		}
		for _, f := range o.Fields {
			g.p("%s %s `json:%q`", f.Go, wireType(f), f.Key)
		}
		g.p("}")
		g.p("if err := json.Unmarshal(data, &aux); err != nil {")
		g.p("return err")
		g.p("}")
		if o.message() {
			g.p("if err := checkRole(aux.Role, %s); err != nil {", quoteAll(o.Roles))
			g.p("return err")
			g.p("}")
		}
		for _, f := range o.Fields {
			if f.Kind == Content {
				g.p("content, asString, err := decodeContent(aux.%s)", f.Go)
				g.p("if err != nil {")
				g.p("return err")
				g.p("}")
			}
		}
		if o.Raw {
			g.p("switch aux.%s {", o.Fields[0].Go)
			var names []string
			for _, v := range o.Variants {
				names = append(names, v.Name)
			}
			g.p("case %s:", strings.Join(names, ", "))
		}
		g.p("*%s = %s{", r, o.Type)
		if o.Legacy != "" {
			g.p("Legacy: aux.Role == %q,", o.Legacy)
		}
		for _, f := range o.Fields {
			switch f.Kind {
			case Content:
				g.p("%s: content,", f.Go)
				g.p("StringContent: asString,")
			case Attribution:
				g.p("no%s: aux.%s == nil,", f.Go, f.Go)
			default:
				g.p("%s: %s,", f.Go, wireValue(f, "aux."+f.Go))
			}
		}
		g.p("}")
		for _, f := range o.Fields {
			if f.Kind == Attribution {
				g.p("if aux.%s != nil {", f.Go)
				g.p("%s.%s = *aux.%s", r, f.Go, f.Go)
				g.p("}")
			}
		}
		if o.Raw {
			g.p("default:")
			g.p("*%s = %s{%s: aux.%s, raw: compactRaw(data)}", r, o.Type, o.Fields[0].Go, o.Fields[0].Go)
			g.p("}")
		}
		g.p("return nil")
		g.p("}")
	}
}

// wireType is the type encoding/json decodes a value of f into.
func wireType(f Field) string {
	switch f.Kind {
	case String, BlockType:
		return "string"
	case StopReason:
		return "StopReason"
	case Int64:
		return "int64"
	case Bool:
		return "bool"
	case Float64:
		return "float64"
	case Raw, RawObject, Content:
		return "json.RawMessage"
	case Int64Ptr:
		return "*int64"
	case IntPtr:
		return "*int"
	case BoolPtr, OptionalBool:
		return "*bool"
	case Float64Ptr:
		return "*float64"
	case Attribution:
		return "*string"
	case Blocks:
		return "[]ContentBlock"
	case BlockPtr:
		return "*ContentBlock"
	case UsageObject:
		return "Usage"
	case CostObject:
		return "costJSON"
	case FileMentions:
		return "[]fileMentionJSON"
	}
	panic(fmt.Sprintf("no wire type for kind %d", f.Kind))
}

// wireValue is the expression of f's value from x, its decoded wire value.
func wireValue(f Field, x string) string {
	switch f.Kind {
	case Raw, RawObject:
		return "rawValue(" + x + ")"
	case OptionalBool:
		return x + " != nil && *" + x
	case CostObject:
		return x + ".value()"
	case FileMentions:
		return "fileMentionValues(" + x + ")"
	}
	return x
}
