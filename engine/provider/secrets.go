package provider

import (
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// Secrets lists the values no text a host sees may contain for a call to
// m: the API key and the values of headers that carry credentials (by
// name: key, auth, token, secret, cookie, password, credential, session,
// signature), with the token of a "Bearer <token>" value on its own.
// Other header values (a version, a team name) are not secrets, and
// scrubbing them would garble a provider's wording. A key of fewer than 4
// characters is a keyless server's placeholder, not a secret. Adapters
// pass every error text through Redact with these.
func Secrets(m engine.Model, key string) []string {
	var out []string
	if len(key) >= 4 {
		out = append(out, key)
	}
	for name, v := range m.Headers {
		if len(v) < 4 || !credentialHeader(name) {
			continue
		}
		out = append(out, v)
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 4 {
			out = append(out, tok)
		}
	}
	return out
}

func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"key", "auth", "token", "secret", "cookie", "password", "credential", "session", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redact replaces every secret in s with "[redacted]".
func Redact(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}
