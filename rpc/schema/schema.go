package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/rpc"
)

// Version is the protocol's version, the schema's "version" and the
// clients' PROTOCOL_VERSION. docs/rpc.md ("Versioning") says what bumps
// it: the minor number for an additive change, the major for one that
// can break a host.
const Version = "1.0"

// Protocols are the protocols `xcsh schema --protocol` prints.
var Protocols = []string{"rpc", "server", "acp-ext", "extensions"}

// base is where the schemas' $ids live: names, not URLs anything fetches.
const base = "https://xcsh.dev/schema/"

// document is a schema under construction: its definitions, in order.
type document struct {
	defs Props
}

func (d *document) has(name string) bool { return d.defs.Get(name) != nil }

// reserve places name's definition now (so definitions read in the order
// they are first used) before its schema is made.
func (d *document) reserve(name string) {
	if !d.has(name) {
		d.defs = append(d.defs, Prop{name, &Schema{}})
	}
}

func (d *document) define(name string, s *Schema) {
	for i := range d.defs {
		if d.defs[i].Name == name {
			d.defs[i].Schema = s
			return
		}
	}
	d.defs = append(d.defs, Prop{name, s})
}

// docOf is the doc comment of a Go type, docOfField of one of its fields.
func docOf(t reflect.Type) string { return docs[t.PkgPath()+"."+t.Name()] }

func docOfField(t reflect.Type, field string) string {
	if t.Name() == "" {
		return ""
	}
	return docs[t.PkgPath()+"."+t.Name()+"."+field]
}

// builder is a document with its reflector.
type builder struct {
	document
	r *reflector
}

func newBuilder() *builder {
	b := &builder{}
	b.r = &reflector{doc: &b.document, seen: map[reflect.Type]string{},
		shapes: map[reflect.Type]string{}, enums: map[reflect.Type][]string{},
		// A host tool's result reaches tool_execution_end exactly as the
		// host sent it, extra keys included.
		open: map[reflect.Type]bool{reflect.TypeFor[rpc.HostToolContent](): true}}
	b.closedSets()
	b.messages()
	b.shape("BudgetState", budgetState{}, engine.BudgetState{})
	b.shape("CompactionResult", compactionResult{}, engine.CompactionResult{})
	return b
}

// typeOf is the schema of a Go value's type.
func (b *builder) typeOf(v any) *Schema { return b.r.typeOf(reflect.TypeOf(v)) }

// shape defines name as the schema of the struct of shape, for values of
// the types of encoded (whose encoding is written by hand).
func (b *builder) shape(name string, shape any, encoded ...any) {
	t := reflect.TypeOf(shape)
	b.r.seen[t] = name
	b.reserve(name)
	s := b.r.fields(t, docOf(t))
	b.define(name, s)
	for _, e := range encoded {
		b.r.shapes[reflect.TypeOf(e)] = name
	}
}

// enum defines a closed set of strings as a named definition and makes
// values of the Go types t use it.
func (b *builder) enum(name, desc string, values []string, types ...any) {
	b.define(name, enum(desc, values...))
	for _, t := range types {
		b.r.shapes[reflect.TypeOf(t)] = name
	}
}

func strs[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// closedSets are the enums every protocol shares.
func (b *builder) closedSets() {
	b.enum("StopReason", "Why an assistant message ended.",
		strs(engine.StopStop, engine.StopLength, engine.StopToolUse, engine.StopError, engine.StopAborted), engine.StopReason(""))
	b.enum("ThinkingLevel", "A reasoning effort; off turns reasoning off.",
		strs(engine.ThinkingOff, engine.ThinkingMinimal, engine.ThinkingLow, engine.ThinkingMedium, engine.ThinkingHigh, engine.ThinkingXHigh),
		engine.ThinkingLevel(""))
	b.enum("UpdateKind", "The kind of a message_update step.",
		strs(engine.UpdateTextStart, engine.UpdateTextDelta, engine.UpdateTextEnd, engine.UpdateThinkingStart,
			engine.UpdateThinkingDelta, engine.UpdateThinkingEnd, engine.UpdateToolCallStart, engine.UpdateToolCallDelta,
			engine.UpdateToolCallEnd), engine.UpdateKind(""))
	b.enum("BudgetKind", "A budget: cost in US dollars, tokens, or time in milliseconds.",
		strs(engine.BudgetCost, engine.BudgetTokens, engine.BudgetTime), engine.BudgetKind(""))
	b.enum("AgentEndStopReason", "Why a run stopped, when it is not its last message's.",
		[]string{engine.StopBudgetReached}, AgentEndStopReason(""))
	b.enum("CompactionReason", "Why an automatic compaction started.", []string{"threshold", "overflow"}, CompactionReason(""))
	b.enum("NotifyType", "The kind of a notify request.", []string{"info", "warning", "error"}, NotifyType(""))
	b.enum("QueueMode", "How many queued messages are taken at once.", strs(rpc.QueueModes...), rpc.QueueMode(""))
	b.enum("InterruptMode", "Whether steering interrupts the running tools.", strs(rpc.InterruptModes...), rpc.InterruptMode(""))
	b.enum("StreamingBehavior", "How a prompt sent during a run is queued.", strs(rpc.StreamingBehaviors...), rpc.StreamingBehavior(""))
	b.enum("PageOrder", "The order of a page of messages.", strs(rpc.PageOrders...), rpc.PageOrder(""))
	b.enum("ErrorCode", "A machine-readable code beside a failure's text.", rpc.ErrorCodes())
}

// messages defines the messages and content blocks from the codec's rows.
func (b *builder) messages() {
	kind := func(k string) *Schema {
		switch k {
		case "string", "integer", "number", "boolean", "object":
			return &Schema{Type: k}
		case "any":
			return anyValue("")
		case "stopReason":
			return ref("StopReason")
		case "blocks":
			return &Schema{Type: "array", Items: ref("ContentBlock")}
		case "block":
			return ref("ContentBlock")
		case "content":
			return &Schema{OneOf: []*Schema{{Type: "string"}, {Type: "array", Items: ref("ContentBlock")}}}
		case "fileMentions":
			return &Schema{Type: "array", Items: ref("FileMention")}
		case "Usage", "Cost":
			return ref(k)
		}
		panic("schema: unknown wire kind " + k) // a new kind in codecgen's wire.go
	}
	var msgs []*Schema
	for _, o := range engine.WireObjects {
		keys := map[string]engine.WireKey{}
		for _, k := range o.Keys {
			keys[k.Key] = k
		}
		switch {
		case len(o.Variants) > 0:
			var variants []*Schema
			for _, v := range o.Variants {
				name := "Block" + strings.ToUpper(v.Type[:1]) + v.Type[1:]
				props := Props{{"type", constant(v.Type)}}
				var opt []string
				for _, k := range v.Keys {
					props = append(props, Prop{k, kind(keys[k].Kind)})
					if keys[k].Optional {
						opt = append(opt, k)
					}
				}
				b.define(name, object(fmt.Sprintf("A content block of type %s.", v.Type), props, opt...))
				variants = append(variants, ref(name))
			}
			b.define(o.Type, &Schema{Description: "A content block of a message.", OneOf: variants})
		default:
			var props Props
			var opt []string
			if len(o.Roles) > 0 {
				role := constant(o.Roles[0])
				if len(o.Roles) > 1 {
					role = enum("", o.Roles...)
				}
				props = append(props, Prop{"role", role})
			}
			for _, k := range o.Keys {
				props = append(props, Prop{k.Key, kind(k.Kind)})
				if k.Optional {
					opt = append(opt, k.Key)
				}
			}
			desc := docs["github.com/xcsh-go/xcsh/engine."+o.Type]
			b.define(o.Type, object(desc, props, opt...))
			if len(o.Roles) > 0 {
				msgs = append(msgs, ref(o.Type))
			}
		}
	}
	b.define("Message", &Schema{Description: "A message of the conversation, by its role.", OneOf: msgs})
	var m engine.Message
	b.r.shapes[reflect.TypeOf(&m).Elem()] = "Message"
	for _, v := range []any{engine.ContentBlock{}, engine.AssistantMessage{}, engine.ToolResultMessage{}, engine.UserMessage{}} {
		b.r.shapes[reflect.TypeOf(v)] = defName(reflect.TypeOf(v))
	}
	b.r.shapes[reflect.TypeFor[engine.Usage]()] = "Usage"
}

// root finishes the document: the definitions the top schema (or keep)
// reaches, in order; the shared ones no frame of the protocol uses are
// left out.
func (b *builder) root(id, title, desc string, top *Schema, keep ...string) (*Schema, error) {
	if b.r.err != nil {
		return nil, b.r.err
	}
	reached := map[string]bool{}
	var walk func(s *Schema)
	walk = func(s *Schema) {
		if s == nil {
			return
		}
		if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok && !reached[name] {
			reached[name] = true
			walk(b.defs.Get(name))
		}
		if s.Properties != nil {
			for _, p := range *s.Properties {
				walk(p.Schema)
			}
		}
		if len(s.Additional) > 0 && s.Additional[0] == '{' {
			var v Schema
			if json.Unmarshal(s.Additional, &v) == nil {
				walk(&v)
			}
		}
		walk(s.Items)
		for _, o := range append(s.OneOf, s.AnyOf...) {
			walk(o)
		}
	}
	walk(top)
	for _, k := range keep {
		walk(ref(k))
	}
	var defs Props
	for _, d := range b.defs {
		if reached[d.Name] {
			defs = append(defs, d)
		}
	}
	top.Schema = "https://json-schema.org/draft/2020-12/schema"
	top.ID = base + id
	top.Title = title
	top.Description = desc
	top.Version = Version
	top.Defs = &defs
	return top, nil
}

// Generate returns the schema of protocol (one of Protocols).
func Generate(protocol string) (*Schema, error) {
	switch protocol {
	case "rpc":
		return rpcSchema()
	case "server":
		return serverSchema()
	case "acp-ext":
		return acpSchema()
	case "extensions":
		return extensionsSchema()
	}
	return nil, fmt.Errorf("unknown protocol %q (want one of %s)", protocol, strings.Join(Protocols, ", "))
}

// JSON is the schema of protocol as printed: indented, keys in order.
func JSON(protocol string) ([]byte, error) {
	s, err := Generate(protocol)
	if err != nil {
		return nil, err
	}
	return indent(s)
}

// Hash is the short hash of protocol's schema: the first 16 hex digits
// of the SHA-256 of its printed form. SchemaHash (hash_gen.go) is the rpc
// schema's, kept by go generate; TestHashGenerated holds the two equal.
func Hash(protocol string) (string, error) {
	s, err := Generate(protocol)
	if err != nil {
		return "", err
	}
	return hashOf(s)
}

// hashOf is the short hash of a generated schema's printed form.
func hashOf(s *Schema) (string, error) {
	b, err := indent(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16], nil
}

// HashFile is hash_gen.go as it should be.
func HashFile() ([]byte, error) {
	h, err := Hash("rpc")
	if err != nil {
		return nil, err
	}
	ah, err := Hash("acp-ext")
	if err != nil {
		return nil, err
	}
	return []byte("// Code generated by rpc/schema/internal/hashgen; DO NOT EDIT.\n\npackage schema\n\n" +
		"// SchemaHash is Hash(\"rpc\"), the ready frame's schemaHash (--mode rpc and xcsh serve).\nconst SchemaHash = \"" + h + "\"\n\n" +
		"// ACPSchemaHash is Hash(\"acp-ext\"), ACP initialize's _meta.xcsh.schemaHash.\nconst ACPSchemaHash = \"" + ah + "\"\n"), nil
}

// sortedKeys are m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
