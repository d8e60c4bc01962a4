package engine

// WireObject is one JSON object of the message codec as the protocol
// schema describes it (WireObjects, generated from the codec's tables).
type WireObject struct {
	// Type is the Go type in this package ("UserMessage", "ContentBlock").
	Type string
	// Roles are a message's roles (the first is written); none for an
	// object that is not a message.
	Roles []string
	// Variants are the keys of each block type, for an object whose keys
	// depend on its type (a content block).
	Variants []WireVariant
	// Keys are the object's keys in wire order.
	Keys []WireKey
}

// WireVariant is one variant of a WireObject: its type and its keys
// ("type" aside).
type WireVariant struct {
	Type string
	Keys []string
}

// WireKey is one key of a WireObject: its name, what it holds ("string",
// "integer", "number", "boolean", "object", "any", "stopReason",
// "blockType", "blocks", "block", "content", "fileMentions", or an
// object's type: "Usage", "Cost") and whether it may be absent.
type WireKey struct {
	Key      string
	Kind     string
	Optional bool
}
