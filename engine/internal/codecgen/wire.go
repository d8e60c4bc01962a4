package codecgen

import "strconv"

// wireKinds name each kind for the protocol schema (engine.WireKey.Kind):
// what a host sees on the wire, not how the codec stores it.
var wireKinds = map[Kind]string{
	String:       "string",
	StopReason:   "stopReason",
	Int64:        "integer",
	Bool:         "boolean",
	Float64:      "number",
	Raw:          "any",
	RawObject:    "object",
	Int64Ptr:     "integer",
	IntPtr:       "integer",
	BoolPtr:      "boolean",
	Float64Ptr:   "number",
	OptionalBool: "boolean",
	Blocks:       "blocks",
	BlockPtr:     "block",
	UsageObject:  "Usage",
	CostObject:   "Cost",
	FileMentions: "fileMentions",
	Content:      "content",
	Attribution:  "string",
	BlockType:    "blockType",
}

// optional reports whether the key may be absent on the wire: left out
// when zero, or (Attribution) absent on a message the engine did not
// write.
func (f Field) optional() bool { return f.Omit || f.Kind == Attribution }

// wireFile writes codec_wire_gen.go: the same tables as data, for the
// protocol schema (rpc/schema) to describe messages and blocks from the
// rows the codec is made of.
func wireFile(g *gen) {
	g.p("// WireObjects are the message codec's JSON objects, key by key, as the")
	g.p("// protocol schema (rpc/schema) describes them: the rows of the tables")
	g.p("// the codec itself is generated from.")
	g.p("var WireObjects = []WireObject{")
	for _, o := range Objects {
		g.p("{Type: %s,", strconv.Quote(o.Type))
		if len(o.Roles) > 0 {
			g.p("Roles: []string{%s},", quoteAll(o.Roles))
		}
		if len(o.Variants) > 0 {
			g.p("Variants: []WireVariant{")
			for _, v := range o.Variants {
				g.p("{Type: %s, Keys: []string{%s}},", v.Name, quoteAll(v.Keys))
			}
			g.p("},")
		}
		g.p("Keys: []WireKey{")
		for _, f := range o.Fields {
			g.p("{Key: %s, Kind: %s, Optional: %v},", strconv.Quote(f.Key), strconv.Quote(wireKinds[f.Kind]), f.optional())
		}
		g.p("}},")
	}
	g.p("}")
}
