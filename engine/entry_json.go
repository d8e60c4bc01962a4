package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Session entries on the wire (agent-core.md §5.2). The key order of each
// type is the order in which the original builds the entry object (that
// is what JSON.stringify prints): most types start with type, id,
// parentId, timestamp; custom and custom_message put their payload first
// and the tree keys last. For any line the original writes, DecodeEntry
// then AppendJSON gives the same bytes (entry_json_test.go pins every
// type). Keys this package does not know inside a known type are not kept.

// ErrEntry: a session line is not an entry (not a JSON object, or no type).
var ErrEntry = errors.New("engine: bad session entry")

// isoMillis is the timestamp form of JavaScript's Date.toISOString.
const isoMillis = "2006-01-02T15:04:05.000Z"

// entryWire is what a decoded entry keeps to be written back unchanged.
type entryWire struct {
	// rawTimestamp is a timestamp that does not print back the same from
	// milliseconds (another precision, an offset); "" otherwise.
	rawTimestamp string
	// rest is the payload of an entry of a type this package does not
	// know: every key in file order, the tree keys as placeholders (val
	// nil) written from the Entry's fields.
	rest []rawField
}

// rawField is one key of a JSON object with its compact raw value.
type rawField struct {
	key string
	val []byte
}

// entryJSON is the union of the keys of every entry type. Pointers tell an
// absent key from a zero one where the encoding depends on it.
type entryJSON struct {
	Type             *string         `json:"type"`
	ID               string          `json:"id"`
	ParentID         *string         `json:"parentId"`
	Timestamp        string          `json:"timestamp"`
	Message          json.RawMessage `json:"message"`
	Model            string          `json:"model"`
	Role             string          `json:"role"`
	ThinkingLevel    *string         `json:"thinkingLevel"`
	Summary          string          `json:"summary"`
	ShortSummary     string          `json:"shortSummary"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	TokensBefore     int64           `json:"tokensBefore"`
	Details          json.RawMessage `json:"details"`
	PreserveData     json.RawMessage `json:"preserveData"`
	FromExtension    *bool           `json:"fromExtension"`
	FromID           string          `json:"fromId"`
	CustomType       string          `json:"customType"`
	Data             json.RawMessage `json:"data"`
	Content          json.RawMessage `json:"content"`
	Display          bool            `json:"display"`
	Attribution      string          `json:"attribution"`
	TargetID         string          `json:"targetId"`
	Label            *string         `json:"label"`
}

// DecodeEntry decodes one line of a session file (not the header). An
// entry of a type this package does not know decodes to an opaque entry
// that keeps its payload and encodes back to the same bytes. The line is
// not retained.
func DecodeEntry(line []byte) (*Entry, error) {
	var d EntryDecoder
	return d.decode(line)
}

// decodeEntry is the general path of DecodeEntry: every entry type, any
// layout.
func decodeEntry(line []byte) (*Entry, error) {
	var w entryJSON
	if err := json.Unmarshal(line, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEntry, err)
	}
	if w.Type == nil {
		return nil, fmt.Errorf("%w: no type", ErrEntry)
	}
	e := &Entry{Type: *w.Type, ID: w.ID}
	if w.ParentID != nil {
		e.ParentID = *w.ParentID
	}
	e.setTimestamp(w.Timestamp)
	switch e.Type {
	case EntryMessage:
		m, err := DecodeMessage(w.Message)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEntry, err)
		}
		e.Message = m
	case EntryModelChange:
		e.Model, e.Role = w.Model, w.Role
	case EntryThinkingLevelChange:
		if w.ThinkingLevel != nil {
			e.ThinkingLevel = ThinkingLevel(*w.ThinkingLevel)
		}
	case EntryCompaction:
		e.Compaction = &Compaction{
			Summary:          w.Summary,
			ShortSummary:     w.ShortSummary,
			FirstKeptEntryID: w.FirstKeptEntryID,
			TokensBefore:     w.TokensBefore,
			Details:          rawValue(w.Details),
			FromExtension:    w.FromExtension,
			PreserveData:     rawValue(w.PreserveData),
		}
	case EntryBranchSummary:
		e.BranchSummary = &BranchSummary{FromID: w.FromID, Summary: w.Summary,
			Details: rawValue(w.Details), FromExtension: w.FromExtension}
	case EntryCustom:
		e.Custom = &CustomState{CustomType: w.CustomType, Data: rawValue(w.Data)}
	case EntryCustomMessage:
		content, asString, err := decodeContent(w.Content)
		if err != nil {
			return nil, fmt.Errorf("%w: custom_message content: %v", ErrEntry, err)
		}
		e.CustomMessage = &CustomMessage{CustomType: w.CustomType, Content: content, StringContent: asString,
			Display: w.Display, Details: rawValue(w.Details), Attribution: w.Attribution}
	case EntryLabel:
		e.Label = &Label{TargetID: w.TargetID}
		if w.Label != nil {
			e.Label.Text, e.Label.emptyText = *w.Label, *w.Label == ""
		}
	default:
		rest, err := objectFields(line)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEntry, err)
		}
		if e.wire == nil {
			e.wire = &entryWire{}
		}
		e.wire.rest = rest
	}
	return e, nil
}

// EntryDecoder decodes the lines of one session file. It remembers the
// previous entry's id, which is nearly always the next entry's parentId, so
// the two share one string, and it interns the short strings that repeat
// (api, provider, model, stop reason, tool name). Not safe for concurrent
// use; the zero value is ready.
type EntryDecoder struct {
	lastID string
	strs   map[string]string
}

// Decode decodes one line, as DecodeEntry does.
func (d *EntryDecoder) Decode(line []byte) (*Entry, error) {
	if d.strs == nil {
		d.strs = make(map[string]string)
	}
	return d.decode(line)
}

func (d *EntryDecoder) decode(line []byte) (*Entry, error) {
	e := d.decodeMessageEntry(line)
	if e == nil {
		var err error
		if e, err = decodeEntry(line); err != nil {
			return nil, err
		}
	}
	d.lastID = e.ID
	return e, nil
}

// setTimestamp reads an entry timestamp. A string that does not print back
// the same from milliseconds is kept verbatim so the entry round-trips.
func (e *Entry) setTimestamp(s string) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		e.Timestamp = t.UnixMilli()
		var buf [32]byte
		if string(time.UnixMilli(e.Timestamp).UTC().AppendFormat(buf[:0], isoMillis)) == s {
			return
		}
	}
	if e.wire == nil {
		e.wire = &entryWire{}
	}
	e.wire.rawTimestamp = s
}

// objectFields returns the keys of a JSON object in order, with their
// compact values; the tree keys an Entry holds in fields get no value.
func objectFields(data []byte) ([]rawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []rawField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		switch key {
		case "type", "id", "parentId", "timestamp":
			out = append(out, rawField{key: key})
		default:
			out = append(out, rawField{key: key, val: compactRaw(v)})
		}
	}
	return out, nil
}

// AppendJSON appends the entry as a line of a version-3 session file
// (without the newline), in the original's key order.
func (e *Entry) AppendJSON(dst []byte) []byte {
	if e.wire != nil && e.wire.rest != nil {
		return e.appendOpaque(dst)
	}
	switch e.Type {
	case EntryCustom:
		c := e.Custom
		if c == nil {
			c = &CustomState{}
		}
		dst = appendStringField(appendType(dst, e.Type), "customType", c.CustomType)
		if c.Data != nil {
			dst = appendRawField(dst, "data", c.Data)
		}
		return append(e.appendTree(dst), '}')
	case EntryCustomMessage:
		c := e.CustomMessage
		if c == nil {
			c = &CustomMessage{}
		}
		dst = appendStringField(appendType(dst, e.Type), "customType", c.CustomType)
		dst = appendContent(appendKey(dst, "content"), c.Content, c.StringContent)
		dst = appendBoolField(dst, "display", c.Display)
		if c.Details != nil {
			dst = appendRawField(dst, "details", c.Details)
		}
		if c.Attribution != "" {
			dst = appendStringField(dst, "attribution", c.Attribution)
		}
		return append(e.appendTree(dst), '}')
	}
	dst = e.appendTree(appendType(dst, e.Type))
	switch e.Type {
	case EntryMessage:
		dst = appendMessage(appendKey(dst, "message"), e.Message)
	case EntryModelChange:
		dst = appendStringField(dst, "model", e.Model)
		if e.Role != "" {
			dst = appendStringField(dst, "role", e.Role)
		}
	case EntryThinkingLevelChange:
		if e.ThinkingLevel == "" {
			dst = append(appendKey(dst, "thinkingLevel"), "null"...)
		} else {
			dst = appendStringField(dst, "thinkingLevel", string(e.ThinkingLevel))
		}
	case EntryCompaction:
		if c := e.Compaction; c != nil {
			dst = appendStringField(dst, "summary", c.Summary)
			if c.ShortSummary != "" {
				dst = appendStringField(dst, "shortSummary", c.ShortSummary)
			}
			dst = appendStringField(dst, "firstKeptEntryId", c.FirstKeptEntryID)
			dst = appendIntField(dst, "tokensBefore", c.TokensBefore)
			dst = appendOptional(dst, c.Details, c.FromExtension)
			if c.PreserveData != nil {
				dst = appendRawField(dst, "preserveData", c.PreserveData)
			}
		}
	case EntryBranchSummary:
		if b := e.BranchSummary; b != nil {
			dst = appendStringField(dst, "fromId", b.FromID)
			dst = appendStringField(dst, "summary", b.Summary)
			dst = appendOptional(dst, b.Details, b.FromExtension)
		}
	case EntryLabel:
		if l := e.Label; l != nil {
			dst = appendStringField(dst, "targetId", l.TargetID)
			if l.Text != "" || l.emptyText {
				dst = appendStringField(dst, "label", l.Text)
			}
		}
	}
	return append(dst, '}')
}

// appendOptional appends the details and fromExtension keys when present.
func appendOptional(dst, details []byte, fromExtension *bool) []byte {
	if details != nil {
		dst = appendRawField(dst, "details", details)
	}
	if fromExtension != nil {
		dst = appendBoolField(dst, "fromExtension", *fromExtension)
	}
	return dst
}

// appendTree appends the id, parentId and timestamp keys.
func (e *Entry) appendTree(dst []byte) []byte {
	dst = appendStringField(dst, "id", e.ID)
	dst = e.appendParent(dst)
	return e.appendTimestamp(dst)
}

func (e *Entry) appendParent(dst []byte) []byte {
	if e.ParentID == "" {
		return append(appendKey(dst, "parentId"), "null"...)
	}
	return appendStringField(dst, "parentId", e.ParentID)
}

func (e *Entry) appendTimestamp(dst []byte) []byte {
	if e.wire != nil && e.wire.rawTimestamp != "" {
		return appendStringField(dst, "timestamp", e.wire.rawTimestamp)
	}
	dst = append(appendKey(dst, "timestamp"), '"')
	dst = time.UnixMilli(e.Timestamp).UTC().AppendFormat(dst, isoMillis)
	return append(dst, '"')
}

// appendOpaque writes an entry of an unknown type: its keys in the order
// they were read, the tree keys from the Entry's fields (so an entry moved
// to another parent is written as moved).
func (e *Entry) appendOpaque(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, '{')
	var seen [4]bool
	for _, f := range e.wire.rest {
		switch f.key {
		case "type":
			dst, seen[0] = appendStringField(dst, "type", e.Type), true
		case "id":
			dst, seen[1] = appendStringField(dst, "id", e.ID), true
		case "parentId":
			dst, seen[2] = e.appendParent(dst), true
		case "timestamp":
			dst, seen[3] = e.appendTimestamp(dst), true
		default:
			dst = appendRawField(dst, f.key, f.val)
		}
	}
	// A tree key the line lacked (a version 1 file has no ids) is added.
	if !seen[1] {
		dst = appendStringField(dst, "id", e.ID)
	}
	if !seen[2] {
		dst = e.appendParent(dst)
	}
	if !seen[3] {
		dst = e.appendTimestamp(dst)
	}
	// Every key was written with a leading comma; the first one's goes.
	dst = append(dst[:start+1], dst[start+2:]...)
	return append(dst, '}')
}
