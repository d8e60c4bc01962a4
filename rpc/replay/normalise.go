package replay

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// WorkToken is what the work directory is written as in goldens and
// transcripts.
const WorkToken = "$WORK"

// SchemaHashToken is what the ready frame's schemaHash is written as in
// goldens and transcripts, so they do not change with every change of the
// schema (the scenario ready_has_schema_hash checks the real one).
const SchemaHashToken = "$SCHEMA_HASH"

// schemaHashRE is the ready frame's schemaHash member: 16 hex digits (or
// "", from a front given none).
var schemaHashRE = regexp.MustCompile(`"schemaHash":"[0-9a-f]{0,16}"`)

// NormaliseWork replaces the work directory with the literal $WORK, both as
// written and as it appears inside JSON strings (escaped backslashes on
// Windows), so goldens do not depend on the temporary directory, and the
// schema hash with SchemaHashToken. It is the suite's only normalisation
// of what the agent writes (the golden command of rpc/rpctest and agent
// mode use it): everything else must be made deterministic at the source
// (XCSH_DETERMINISTIC). An occurrence followed by a character that could
// continue a file name is left alone, so a sibling such as $WORK-other is
// not half replaced.
func NormaliseWork(data []byte, work string) []byte {
	if bytes.Contains(data, []byte(`"schemaHash":"`)) {
		data = schemaHashRE.ReplaceAllLiteral(data, []byte(`"schemaHash":"`+SchemaHashToken+`"`))
	}
	if work == "" {
		return data
	}
	forms := []string{work}
	if esc := jsonEscaped(work); esc != work {
		forms = append(forms, esc)
	}
	for _, f := range forms {
		data = replaceBounded(data, []byte(f), []byte(WorkToken))
	}
	return data
}

// expandWork is NormaliseWork's inverse for a line to send or play: $WORK
// becomes the work directory, JSON-escaped when the line is JSON.
func expandWork(line []byte, work string, isJSON bool) []byte {
	if work == "" || !bytes.Contains(line, []byte(WorkToken)) {
		return line
	}
	repl := work
	if isJSON {
		repl = jsonEscaped(work)
	}
	return bytes.ReplaceAll(line, []byte(WorkToken), []byte(repl))
}

// jsonEscaped is s as it appears between the quotes of a JSON string.
func jsonEscaped(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return s
	}
	q := strings.TrimSuffix(buf.String(), "\n")
	if len(q) < 2 {
		return s
	}
	return q[1 : len(q)-1]
}

func replaceBounded(data, old, repl []byte) []byte {
	var out []byte
	for {
		i := bytes.Index(data, old)
		if i < 0 {
			return append(out, data...)
		}
		end := i + len(old)
		out = append(out, data[:i]...)
		if end < len(data) && continuesName(data[end]) {
			out = append(out, old...)
		} else {
			out = append(out, repl...)
		}
		data = data[end:]
	}
}

func continuesName(c byte) bool {
	return c == '_' || c == '-' || c == '.' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
