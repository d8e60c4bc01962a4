package schema

import (
	"bytes"
	"encoding/json"
)

// indent prints s with two spaces of indentation and a final newline.
func indent(s *Schema) ([]byte, error) {
	raw, err := marshal(s)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
