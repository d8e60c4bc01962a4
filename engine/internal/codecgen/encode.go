package codecgen

import (
	"fmt"
	"slices"
	"strings"
)

// encodeFile writes codec_encode_gen.go: per object AppendJSON (and
// MarshalJSON for a message), in table order, and the size hints.
func encodeFile(g *gen) {
	g.p(`import "strconv"`)
	for i := range Objects {
		o := &Objects[i]
		r := o.recv()
		if o.message() {
			g.p("")
			g.p("// MarshalJSON implements json.Marshaler.")
			g.p("func (%s *%s) MarshalJSON() ([]byte, error) {", r, o.Type)
			g.p("return %s.AppendJSON(make([]byte, 0, %s.sizeHint())), nil", r, r)
			g.p("}")
		}
		g.p("")
		if o.message() {
			g.p("// AppendJSON appends the message's encoding (what MarshalJSON returns)")
			g.p("// to dst.")
		} else {
			g.p("// %s appends the %s's encoding to dst.", o.appendName(), o.Type)
		}
		g.p("func (%s *%s) %s(dst []byte) []byte {", r, o.Type, o.appendName())
		if o.Raw {
			g.p("if %s.raw != nil {", r)
			g.p("return append(dst, %s.raw...)", r)
			g.p("}")
		}
		var w writer
		fields := o.Fields
		tail := -1
		if o.Tail != "" {
			tail = slices.IndexFunc(fields, func(f Field) bool { return f.Key == o.Tail })
		}
		switch {
		case o.Legacy != "":
			w.lit = `{"role":`
			w.flush(g, func(d string) string { return "AppendJSONString(" + d + ", " + r + ".Role())" })
		case o.message():
			w.lit = `{"role":"` + o.Roles[0] + `"`
		default:
			w.lit = "{" + prefix(fields[0].Key)[1:]
			w.value(g, o, fields[0])
			fields = fields[1:]
			tail--
		}
		if len(o.Variants) > 0 {
			w.flushAll(g)
			g.p("switch %s.%s {", r, o.Fields[0].Go)
			for _, v := range o.Variants {
				g.p("case %s:", v.Name)
				for _, f := range fields {
					if slices.Contains(v.Keys, f.Key) {
						w.field(g, o, f)
					}
				}
				w.flushAll(g)
			}
			g.p("}")
			g.p("return append(dst, '}')")
			g.p("}")
			continue
		}
		for i, f := range fields {
			if i == tail {
				w.flushAll(g)
				g.p("return %s.appendTail(dst)", r)
				break
			}
			w.field(g, o, f)
		}
		if tail < 0 {
			w.close(g)
		}
		g.p("}")
		if tail >= 0 {
			g.p("")
			g.p("// appendTail appends everything from %q on (including the closing", o.Tail)
			g.p("// brace). The streaming partial caches these bytes.")
			g.p("func (%s *%s) appendTail(dst []byte) []byte {", r, o.Type)
			var w writer
			for _, f := range fields[tail:] {
				w.field(g, o, f)
			}
			w.close(g)
			g.p("}")
		}
	}
	for i := range Objects {
		sizeHint(g, &Objects[i])
	}
}

// writer emits appends, merging the constant text of consecutive keys
// into one append.
type writer struct{ lit string }

// flush emits the pending text joined to the value written by v (given
// the expression of dst with the text appended); v nil writes the text
// alone.
func (w *writer) flush(g *gen, v func(dst string) string) {
	d := "dst"
	if w.lit != "" {
		d = "append(dst, " + quote(w.lit) + "...)"
		w.lit = ""
	}
	if v == nil {
		if d != "dst" {
			g.p("dst = %s", d)
		}
		return
	}
	g.p("dst = %s", v(d))
}

func (w *writer) flushAll(g *gen) { w.flush(g, nil) }

// close emits the closing brace and the return.
func (w *writer) close(g *gen) {
	if w.lit == "" {
		g.p("return append(dst, '}')")
		return
	}
	g.p("return append(dst, %s...)", quote(w.lit+"}"))
	w.lit = ""
}

// field emits one key and its value, under the condition its row leaves
// it out by.
func (w *writer) field(g *gen, o *Object, f Field) {
	r := o.recv()
	x := r + "." + f.Go
	cond := ""
	switch {
	case f.Kind == Raw || f.Kind == Int64Ptr || f.Kind == IntPtr || f.Kind == BoolPtr || f.Kind == Float64Ptr || f.Kind == BlockPtr:
		cond = x + " != nil"
	case f.Kind == Attribution:
		cond = x + ` != "" || !` + r + ".no" + f.Go
	case f.Omit && (f.Kind == String || f.Kind == StopReason):
		cond = x + ` != ""`
	case f.Omit && f.Kind == Int64:
		cond = x + " != 0"
	case f.Omit && (f.Kind == Bool || f.Kind == OptionalBool):
		cond = x
	}
	if cond == "" {
		w.lit += prefix(f.Key)
		w.value(g, o, f)
		return
	}
	w.flushAll(g)
	g.p("if %s {", cond)
	w.lit = prefix(f.Key)
	w.value(g, o, f)
	g.p("}")
}

// value emits the append of f's value after the pending text.
func (w *writer) value(g *gen, o *Object, f Field) {
	x := o.recv() + "." + f.Go
	switch f.Kind {
	case String, BlockType:
		w.flush(g, func(d string) string { return "AppendJSONString(" + d + ", " + x + ")" })
	case StopReason:
		w.flush(g, func(d string) string { return "AppendJSONString(" + d + ", string(" + x + "))" })
	case Attribution:
		g.p("a := %s", x)
		g.p(`if a == "" {`)
		g.p(`a = "user"`)
		g.p("}")
		w.flush(g, func(d string) string { return "AppendJSONString(" + d + ", a)" })
	case Int64:
		w.flush(g, func(d string) string { return "strconv.AppendInt(" + d + ", " + x + ", 10)" })
	case Int64Ptr:
		w.flush(g, func(d string) string { return "strconv.AppendInt(" + d + ", *" + x + ", 10)" })
	case IntPtr:
		w.flush(g, func(d string) string { return "strconv.AppendInt(" + d + ", int64(*" + x + "), 10)" })
	case Bool, OptionalBool:
		w.flush(g, func(d string) string { return "strconv.AppendBool(" + d + ", " + x + ")" })
	case BoolPtr:
		w.flush(g, func(d string) string { return "strconv.AppendBool(" + d + ", *" + x + ")" })
	case Float64:
		w.flush(g, func(d string) string { return "appendFloat(" + d + ", " + x + ")" })
	case Float64Ptr:
		w.flush(g, func(d string) string { return "appendFloat(" + d + ", *" + x + ")" })
	case Raw:
		w.flush(g, func(d string) string { return "AppendRawJSON(" + d + ", " + x + ")" })
	case RawObject:
		g.p("%s := %s", lower(f.Go), x)
		g.p("if len(%s) == 0 {", lower(f.Go))
		g.p(`%s = []byte("{}")`, lower(f.Go))
		g.p("}")
		w.flush(g, func(d string) string { return "AppendRawJSON(" + d + ", " + lower(f.Go) + ")" })
	case Blocks:
		w.flush(g, func(d string) string { return "appendBlocks(" + d + ", " + x + ")" })
	case Content:
		w.flush(g, func(d string) string { return "appendContent(" + d + ", " + x + ", " + o.recv() + ".StringContent)" })
	case BlockPtr, UsageObject:
		w.flush(g, func(d string) string { return x + ".AppendJSON(" + d + ")" })
	case CostObject:
		w.flush(g, func(d string) string { return x + ".appendJSON(" + d + ")" })
	case FileMentions:
		w.lit += "["
		w.flushAll(g)
		g.p("for i := range %s {", x)
		g.p("if i > 0 {")
		g.p("dst = append(dst, ',')")
		g.p("}")
		g.p("dst = %s[i].appendJSON(dst)", x)
		g.p("}")
		w.lit = "]"
	default:
		panic(fmt.Sprintf("no encoder for kind %d", f.Kind))
	}
}

// sizeHint emits the size hint of an object: the text of its keys, and
// an estimate of each value (see strHint in message.go).
func sizeHint(g *gen, o *Object) {
	r := o.recv()
	fixed := 2
	if o.message() {
		fixed += len(`"role":""`) + len(o.Roles[0])
	}
	var vary []string
	// A key the original leaves out when empty counts only its value
	// (nothing when it is empty): most are.
	fieldHint := func(f Field) int {
		x := r + "." + f.Go
		n := len(prefix(f.Key))
		if f.Omit {
			n = 0
		}
		switch f.Kind {
		case String, BlockType, Attribution:
			vary = append(vary, "strHint("+x+")")
			n += 2
		case StopReason:
			vary = append(vary, "len("+x+")")
			n += 2
		case Raw, RawObject:
			vary = append(vary, "len("+x+")")
		case Blocks, Content:
			vary = append(vary, "blocksHint("+x+")")
		case BlockPtr:
			vary = append(vary, "blockPtrHint("+x+")")
		case UsageObject, CostObject:
			vary = append(vary, x+".sizeHint()")
		case FileMentions:
			vary = append(vary, "fileMentionsHint("+x+")")
		case Float64:
			n += 4 // costs are mostly short
		case Int64:
			n += 8 // a timestamp in milliseconds has 13 digits, counts fewer
		case Bool:
			n += 5
		}
		return n
	}
	g.p("")
	g.p("func (%s *%s) sizeHint() int {", r, o.Type)
	if o.Raw {
		g.p("if %s.raw != nil {", r)
		g.p("return len(%s.raw)", r)
		g.p("}")
	}
	if len(o.Variants) > 0 {
		fixed += fieldHint(o.Fields[0])
		for _, f := range o.Fields[1:] {
			fieldHint(f) // the values of every variant; the keys below
		}
		g.p("n := %d + %s", fixed, strings.Join(vary, " + "))
		g.p("switch %s.%s {", r, o.Fields[0].Go)
		for _, v := range o.Variants {
			keys := 0
			for _, f := range o.Fields {
				if slices.Contains(v.Keys, f.Key) {
					keys += len(prefix(f.Key)) + 2
				}
			}
			g.p("case %s:", v.Name)
			g.p("n += %d", keys)
		}
		g.p("}")
		g.p("return n")
		g.p("}")
		return
	}
	for _, f := range o.Fields {
		fixed += fieldHint(f)
	}
	if len(vary) == 0 {
		g.p("return %d", fixed)
	} else {
		g.p("return %d + %s", fixed, strings.Join(vary, " + "))
	}
	g.p("}")
}
