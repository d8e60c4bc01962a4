package models

import (
	"slices"
	"testing"

	"github.com/xcsh-go/xcsh/engine"
)

// A Bedrock provider needs no apiKey: AWS's chain signs its requests, and
// its models are usable when the environment shows credentials, as the
// original decides.
func TestBedrockAuthFromTheAWSEnvironment(t *testing.T) {
	t.Parallel()
	files := map[string]string{"models.json": `{"providers":{
	  "amazon-bedrock":{"baseUrl":"https://bedrock-runtime.us-east-1.amazonaws.com","api":"bedrock-converse-stream",
	    "models":[{"id":"us.anthropic.claude-sonnet-4-20250514-v1:0","reasoning":true}]},
	  "corp":{"baseUrl":"https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com","api":"bedrock-converse-stream",
	    "models":[{"id":"amazon.nova-pro-v1:0"}]}}}`}
	tests := []struct {
		name string
		env  []string
		auth bool
		key  string
	}{
		{"nothing", nil, false, ""},
		{"profile", []string{"AWS_PROFILE", "dev"}, true, ""},
		{"static keys", []string{"AWS_ACCESS_KEY_ID", "AKID", "AWS_SECRET_ACCESS_KEY", "s"}, true, ""},
		{"half a key pair", []string{"AWS_ACCESS_KEY_ID", "AKID"}, false, ""},
		{"container role", []string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x"}, true, ""},
		{"web identity", []string{"AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"}, true, ""},
		{"Bedrock API key", []string{"AWS_BEARER_TOKEN_BEDROCK", "bedrock-key"}, true, "bedrock-key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := load(t, envOf(tc.env...), files)
			m := find(t, r, "amazon-bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0")
			if got := r.HasAuth(m); got != tc.auth {
				t.Errorf("HasAuth = %v, want %v", got, tc.auth)
			}
			if got := r.APIKey(m); got != tc.key {
				t.Errorf("APIKey = %q, want %q", got, tc.key)
			}
			// Another name with Bedrock's API: the same chain and bearer
			// variable (the adapter reads it for any provider of the API).
			if corp := find(t, r, "corp", "amazon.nova-pro-v1:0"); r.HasAuth(corp) != tc.auth {
				t.Errorf("corp: HasAuth = %v, want %v", r.HasAuth(corp), tc.auth)
			}
		})
	}
	// Another API's provider does not take AWS's credentials.
	r := load(t, envOf("AWS_PROFILE", "dev"), map[string]string{"models.json": `{"providers":{"lab":{"baseUrl":"http://x","api":"openai-completions","apiKey":"LAB_KEY","models":[{"id":"m"}]}}}`})
	if r.HasAuth(engine.Model{Provider: "lab"}) {
		t.Error("an openai-completions provider counted AWS_PROFILE as its key")
	}
	if !slices.Contains(r.KeyEnvNames(), "AWS_BEARER_TOKEN_BEDROCK") {
		t.Error("AWS_BEARER_TOKEN_BEDROCK is not among the key variables children lose")
	}
}
