package ollama

import "testing"

func TestParseHost(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"  ", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"example.com", "http://example.com:11434"},
		{"example.com:8080", "http://example.com:8080"},
		{":8080", "http://127.0.0.1:8080"},
		{"http://example.com", "http://example.com:80"},
		{"https://example.com", "https://example.com:443"},
		{"https://example.com:8443/ollama", "https://example.com:8443/ollama"},
		{"[::1]:11434", "http://[::1]:11434"},
		{"[::1]", "http://[::1]:11434"},
		{"example.com:notaport", "http://example.com:11434"},
	}
	for _, tt := range tests {
		if got := parseHost(tt.in); got != tt.want {
			t.Errorf("parseHost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHostFromEnvironment(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "gpu-box:9999")
	if got, want := Host(), "http://gpu-box:9999"; got != want {
		t.Errorf("Host() = %q, want %q", got, want)
	}
	t.Setenv("OLLAMA_HOST", "")
	if got := Host(); got != DefaultHost {
		t.Errorf("Host() = %q, want %q", got, DefaultHost)
	}
}
