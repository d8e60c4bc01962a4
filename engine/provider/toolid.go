package provider

// ToolID makes a tool-call id acceptable to APIs that allow only
// [a-zA-Z0-9_-]{1,64} (Anthropic's Messages, Bedrock's Converse). Their
// own ids pass unchanged; another provider's (OpenAI Responses ids hold
// '|') are rewritten alike on the call and on its result, so the pair
// still matches.
func ToolID(id string) string {
	ok := len(id) > 0 && len(id) <= 64
	for i := 0; ok && i < len(id); i++ {
		ok = isIDByte(id[i])
	}
	if ok {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if !isIDByte(c) {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
