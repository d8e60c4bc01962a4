package provider

import (
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

func TestSecretsAndRedact(t *testing.T) {
	t.Parallel()
	m := engine.Model{Headers: map[string]string{"Authorization": "Bearer tok-123456", "X-Team": "platform", "X-Api-Key": "k-999999", "X-V": "1"}}
	got := Redact("key sk-abcdef, auth tok-123456, header k-999999, team platform, version 1", Secrets(m, "sk-abcdef"))
	if got != "key [redacted], auth [redacted], header [redacted], team platform, version 1" {
		t.Fatal(got)
	}
	if len(Secrets(engine.Model{}, "abc")) != 0 {
		t.Fatal("a 3-character placeholder key is not a secret")
	}
}
