package sessionfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/xcsh-go/xcsh/engine"
)

// Version is the session file format this package writes.
const Version = 3

// isoMillis is the timestamp form of JavaScript's Date.toISOString.
const isoMillis = "2006-01-02T15:04:05.000Z"

// Header is the first line of a session file (agent-core.md §5.2).
//
// The original prints a header's keys in the order its object got them: a
// new session has type, version, id, timestamp, cwd, parentSession, and a
// name set later adds title and titleSource at the end; a forked one has
// title and titleSource after id. A decoded header remembers its order
// (and any key this package does not know) so it is written back as it
// was read; a new one uses the new-session order.
type Header struct {
	Version       int    // 3 for files this package writes; 0 when absent (v1)
	ID            string // 16 hex
	Timestamp     int64  // Unix milliseconds
	Cwd           string
	Title         string // omitted when ""
	TitleSource   string // "user" or "auto"; omitted when ""
	ParentSession string // a session file path or id; omitted when ""

	keys         []headerKey // decoded order; nil for a new header
	rawTimestamp string      // a decoded timestamp that does not print back the same
}

// headerKey is a decoded key: a known one (val nil, written from the
// field) or an unknown one kept verbatim.
type headerKey struct {
	key string
	val []byte
}

// defaultHeaderKeys is the order of a new session's header.
var defaultHeaderKeys = []string{"type", "version", "id", "timestamp", "cwd", "parentSession", "title", "titleSource"}

// DecodeHeader decodes the first line of a session file. A line that is
// not a JSON object with type "session" and a string id is ErrNotSession.
func DecodeHeader(line []byte) (*Header, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: first line is not a JSON object", ErrNotSession)
	}
	h := &Header{}
	var typ string
	var hasID bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotSession, err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotSession, err)
		}
		known := true
		switch key {
		case "type":
			known = json.Unmarshal(raw, &typ) == nil
		case "version":
			known = json.Unmarshal(raw, &h.Version) == nil
		case "id":
			known = json.Unmarshal(raw, &h.ID) == nil
			hasID = known
		case "timestamp":
			var s string
			if known = json.Unmarshal(raw, &s) == nil; known {
				h.Timestamp, h.rawTimestamp = parseISO(s)
			}
		case "cwd":
			known = json.Unmarshal(raw, &h.Cwd) == nil
		case "title":
			known = json.Unmarshal(raw, &h.Title) == nil
		case "titleSource":
			known = json.Unmarshal(raw, &h.TitleSource) == nil
		case "parentSession":
			known = json.Unmarshal(raw, &h.ParentSession) == nil
		default:
			known = false
		}
		if known {
			h.keys = append(h.keys, headerKey{key: key})
		} else {
			var buf bytes.Buffer
			if json.Compact(&buf, raw) != nil {
				return nil, fmt.Errorf("%w: bad value of %q", ErrNotSession, key)
			}
			h.keys = append(h.keys, headerKey{key: key, val: buf.Bytes()})
		}
	}
	if typ != "session" || !hasID {
		return nil, fmt.Errorf("%w: no session header", ErrNotSession)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotSession, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the header", ErrNotSession)
	}
	return h, nil
}

// AppendJSON appends the header line (without the newline).
func (h *Header) AppendJSON(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, '{')
	var written [8]bool // indexed as defaultHeaderKeys
	for _, k := range h.keys {
		if k.val != nil {
			dst = engine.AppendJSONString(append(dst, ','), k.key)
			dst = engine.AppendRawJSON(append(dst, ':'), k.val)
			continue
		}
		for i, name := range defaultHeaderKeys {
			if name == k.key && !written[i] {
				written[i] = true
				dst = h.appendKey(dst, name, true)
			}
		}
	}
	for i, name := range defaultHeaderKeys {
		if !written[i] {
			dst = h.appendKey(dst, name, h.keys == nil)
		}
	}
	dst = append(dst[:start+1], dst[start+2:]...) // the first key's comma
	return append(dst, '}')
}

// appendKey writes one known key when it has a value. wasThere says the
// key was in the decoded header (or the header is new): cwd and version
// are then written even when empty, as the original writes them.
func (h *Header) appendKey(dst []byte, key string, wasThere bool) []byte {
	str := func(v string) []byte {
		dst = engine.AppendJSONString(append(dst, `,"`+key+`":`...), v)
		return dst
	}
	switch key {
	case "type":
		return str("session")
	case "version":
		if h.Version != 0 || (wasThere && h.keys != nil) {
			return strconv.AppendInt(append(dst, `,"version":`...), int64(h.Version), 10)
		}
	case "id":
		return str(h.ID)
	case "timestamp":
		if h.rawTimestamp != "" {
			return str(h.rawTimestamp)
		}
		dst = append(dst, `,"timestamp":"`...)
		dst = time.UnixMilli(h.Timestamp).UTC().AppendFormat(dst, isoMillis)
		return append(dst, '"')
	case "cwd":
		if h.Cwd != "" || wasThere {
			return str(h.Cwd)
		}
	case "title":
		if h.Title != "" {
			return str(h.Title)
		}
	case "titleSource":
		if h.TitleSource != "" {
			return str(h.TitleSource)
		}
	case "parentSession":
		if h.ParentSession != "" {
			return str(h.ParentSession)
		}
	}
	return dst
}

// parseISO reads an ISO-8601 timestamp; one that does not print back the
// same from milliseconds is also returned verbatim.
func parseISO(s string) (ms int64, raw string) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, s
	}
	ms = t.UnixMilli()
	if time.UnixMilli(ms).UTC().Format(isoMillis) != s {
		return ms, s
	}
	return ms, ""
}
