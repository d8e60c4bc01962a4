package codecgen

import "fmt"

// fastFile writes codec_fast_gen.go: the role dispatch of the fast path
// and a reader per object.
func fastFile(g *gen) {
	g.p("")
	g.p("// roleMessage reads a message of a role this package knows whose first")
	g.p("// key is \"role\", as every encoder writes it. It returns nil without")
	g.p("// failing (and at an unspecified position) for any other message.")
	g.p("func (s *fastScan) roleMessage() Message {")
	g.p("s.WS()")
	g.p("if !s.HasPrefix(`{\"role\":\"`) {")
	g.p("return nil")
	g.p("}")
	g.p("s.Consume(`{\"role\":`)")
	g.p("body, _, _ := s.StrBody()")
	g.p("switch string(body) {")
	for i := range Objects {
		o := &Objects[i]
		for _, role := range o.Roles {
			g.p("case %q:", role)
			if role == o.Legacy {
				g.p("m := s.read%s()", o.Type)
				g.p("m.Legacy = true")
				g.p("return m")
			} else {
				g.p("return s.read%s()", o.Type)
			}
		}
	}
	g.p("}")
	g.p("return nil")
	g.p("}")
	for i := range Objects {
		o := &Objects[i]
		r := o.recv()
		g.p("")
		if o.message() {
			g.p("// read%s reads the rest of a %s message after its role.", o.Type, o.Roles[0])
			g.p("func (s *fastScan) read%s() *%s {", o.Type, o.Type)
			init := ""
			for _, f := range o.Fields {
				if f.Kind == Attribution {
					init = "no" + f.Go + ": true"
				}
			}
			g.p("%s := &%s{%s}", r, o.Type, init)
			g.p("seen := uint32(1)")
			g.p("for s.Next('}') && !s.Failed() {")
			g.p("switch string(s.Key()) {")
			g.p(`case "role":`)
			g.p("s.Once(&seen, 1<<0)")
			for i, f := range o.Fields {
				readCase(g, o, f, i+1)
			}
		} else {
			g.p("// read%s reads a %s object.", o.Type, o.Type)
			g.p("func (s *fastScan) read%s(%s *%s) {", o.Type, r, o.Type)
			if o.Raw {
				g.p("if !s.Open('{') {")
				g.p("return")
				g.p("}")
				g.p("if s.Close('}') {")
				g.p("s.Fail() // no type: the general path keeps it raw")
				g.p("return")
				g.p("}")
			} else {
				g.p("if !s.Open('{') || s.Close('}') {")
				g.p("return")
				g.p("}")
			}
			g.p("var seen uint32")
			g.p("for more := true; more && !s.Failed(); more = s.Next('}') {")
			g.p("switch string(s.Key()) {")
			for i, f := range o.Fields {
				readCase(g, o, f, i)
			}
		}
		g.p("default:")
		g.p("s.Fail()")
		g.p("}")
		g.p("}")
		if o.Raw {
			g.p("if seen&1 == 0 {")
			g.p("s.Fail()")
			g.p("}")
		}
		if o.message() {
			g.p("return %s", r)
		}
		g.p("}")
	}
}

// readCase emits the case of one key: its seen bit, then its value.
func readCase(g *gen, o *Object, f Field, bit int) {
	x := o.recv() + "." + f.Go
	g.p("case %q:", f.Key)
	g.p("s.Once(&seen, 1<<%d)", bit)
	str := "s.Str()"
	if f.Intern {
		str = "s.IStr()"
	}
	switch f.Kind {
	case String:
		g.p("%s = %s", x, str)
	case StopReason:
		g.p("%s = StopReason(s.IStr())", x)
	case Attribution:
		g.p("%s, %s.no%s = s.IStr(), false", x, o.recv(), f.Go)
	case BlockType:
		// The constants are kept, not the line's bytes.
		g.p("body, _, _ := s.StrBody()")
		g.p("switch string(body) {")
		for _, v := range o.Variants {
			g.p("case %s:", v.Name)
			g.p("%s = %s", x, v.Name)
		}
		g.p("default:")
		g.p("s.Fail()")
		g.p("}")
	case Int64:
		g.p("%s = s.Int()", x)
	case Bool, OptionalBool:
		g.p("%s = s.Bool()", x)
	case Float64:
		g.p("%s = s.Float()", x)
	case Raw, RawObject:
		g.p("%s = s.Raw()", x)
	case Int64Ptr:
		g.p("v := s.Int()")
		g.p("%s = &v", x)
	case IntPtr:
		g.p("v := int(s.Int())")
		g.p("%s = &v", x)
	case BoolPtr:
		g.p("v := s.Bool()")
		g.p("%s = &v", x)
	case Float64Ptr:
		g.p("v := s.Float()")
		g.p("%s = &v", x)
	case Blocks:
		g.p("%s = s.blocks()", x)
	case Content:
		g.p("%s, %s.StringContent = s.contentValue()", x, o.recv())
	case BlockPtr:
		g.p("%s = new(ContentBlock)", x)
		g.p("s.readContentBlock(%s)", x)
	case UsageObject:
		g.p("s.readUsage(&%s)", x)
	case CostObject:
		g.p("s.readCost(&%s)", x)
	case FileMentions:
		g.p("%s = s.fileMentions()", x)
	default:
		panic(fmt.Sprintf("no reader for kind %d", f.Kind))
	}
}
