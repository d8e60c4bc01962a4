package replay

import "testing"

func TestNormaliseWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, work, in, want string
	}{
		{"every occurrence", "/tmp/w/script-a", `{"cwd":"/tmp/w/script-a","f":"/tmp/w/script-a/x.go"}`, `{"cwd":"$WORK","f":"$WORK/x.go"}`},
		{"sibling left alone", "/tmp/w/script-a", `"/tmp/w/script-ab" "/tmp/w/script-a.bak" "/tmp/w/script-a"`, `"/tmp/w/script-ab" "/tmp/w/script-a.bak" "$WORK"`},
		{"json escaped form", `C:\t\script-a`, `{"cwd":"C:\\t\\script-a\\f"}`, `{"cwd":"$WORK\\f"}`},
		{"raw form too", `C:\t\script-a`, `C:\t\script-a\f`, `$WORK\f`},
		{"nothing to do", "/tmp/w", `{"a":1}`, `{"a":1}`},
		{"no work dir", "", `/tmp/w`, `/tmp/w`},
		{"key order and spacing kept", "/w", `{"z":"/w", "a" : 1}`, `{"z":"$WORK", "a" : 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := string(NormaliseWork([]byte(tt.in), tt.work)); got != tt.want {
				t.Errorf("NormaliseWork(%q, %q) = %q, want %q", tt.in, tt.work, got, tt.want)
			}
		})
	}
}

func TestExpandWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, work, in string
		json           bool
		want           string
	}{
		{"json string", "/tmp/w", `{"cwd":"$WORK/a"}`, true, `{"cwd":"/tmp/w/a"}`},
		{"json escaped", `C:\w`, `{"cwd":"$WORK"}`, true, `{"cwd":"C:\\w"}`},
		{"raw text", `C:\w`, `cd $WORK`, false, `cd C:\w`},
		{"none", "/tmp/w", `{"a":1}`, true, `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(expandWork([]byte(tt.in), tt.work, tt.json))
			if got != tt.want {
				t.Errorf("expandWork(%q, %q) = %q, want %q", tt.in, tt.work, got, tt.want)
			}
			if back := string(NormaliseWork([]byte(got), tt.work)); back != tt.in {
				t.Errorf("NormaliseWork(expandWork(%q)) = %q, want it back", tt.in, back)
			}
		})
	}
}

// The ready frame's schemaHash becomes the token, whatever the hash (and
// "" too, from a front given none); nothing else that looks like it does.
func TestNormaliseSchemaHash(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"ready","version":"0.1.0","schemaHash":"0123456789abcdef"}`: `{"type":"ready","version":"0.1.0","schemaHash":"$SCHEMA_HASH"}`,
		`{"type":"ready","version":"0.1.0","schemaHash":""}`:                 `{"type":"ready","version":"0.1.0","schemaHash":"$SCHEMA_HASH"}`,
		`{"text":"schemaHash 0123456789abcdef"}`:                             `{"text":"schemaHash 0123456789abcdef"}`,
	} {
		if got := string(NormaliseWork([]byte(in), "")); got != want {
			t.Errorf("NormaliseWork(%s) = %s, want %s", in, got, want)
		}
	}
}
