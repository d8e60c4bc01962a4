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

// rawField is one key of a JSON object with its compact raw value.
type rawField struct {
	key string
	val []byte
}

// entryWire is the union of the keys of every entry type. Pointers tell an
// absent key from a zero one where the encoding depends on it.
type entryWire struct {
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
	var w entryWire
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
	e.Timestamp, e.rawTimestamp = parseISO(w.Timestamp)
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
		e.Summary, e.ShortSummary = w.Summary, w.ShortSummary
		e.FirstKeptEntryID, e.TokensBefore = w.FirstKeptEntryID, w.TokensBefore
		e.Details, e.PreserveData = rawValue(w.Details), rawValue(w.PreserveData)
		e.FromExtension = w.FromExtension
	case EntryBranchSummary:
		e.FromID, e.Summary = w.FromID, w.Summary
		e.Details, e.FromExtension = rawValue(w.Details), w.FromExtension
	case EntryCustom:
		e.CustomType, e.Data = w.CustomType, rawValue(w.Data)
	case EntryCustomMessage:
		content, asString, err := decodeContent(w.Content)
		if err != nil {
			return nil, fmt.Errorf("%w: custom_message content: %v", ErrEntry, err)
		}
		e.CustomType, e.Content, e.StringContent = w.CustomType, content, asString
		e.Display, e.Details, e.Attribution = w.Display, rawValue(w.Details), w.Attribution
	case EntryLabel:
		e.TargetID = w.TargetID
		if w.Label != nil {
			e.Label = *w.Label
			e.emptyLabel = *w.Label == ""
		}
	default:
		rest, err := objectFields(line)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEntry, err)
		}
		e.rest = rest
	}
	return e, nil
}

// parseISO reads an entry timestamp. A string that does not print back
// the same from milliseconds (another precision, an offset, garbage) is
// kept verbatim so the entry still round-trips.
func parseISO(s string) (ms int64, raw string) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, s
	}
	ms = t.UnixMilli()
	var buf [32]byte
	if string(time.UnixMilli(ms).UTC().AppendFormat(buf[:0], isoMillis)) != s {
		return ms, s
	}
	return ms, ""
}

// objectFields returns the keys of a JSON object in order, with their
// compact values, leaving out the tree keys an Entry holds in fields.
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
			// Written from the Entry's fields; a nil value marks the place.
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
	switch e.Type {
	case EntryCustom:
		dst = appendType(dst, e.Type)
		dst = appendStringField(dst, "customType", e.CustomType)
		if e.Data != nil {
			dst = appendRawField(dst, "data", e.Data)
		}
		return append(e.appendTree(dst), '}')
	case EntryCustomMessage:
		dst = appendType(dst, e.Type)
		dst = appendStringField(dst, "customType", e.CustomType)
		dst = appendContent(appendKey(dst, "content"), e.Content, e.StringContent)
		dst = appendBoolField(dst, "display", e.Display)
		if e.Details != nil {
			dst = appendRawField(dst, "details", e.Details)
		}
		if e.Attribution != "" {
			dst = appendStringField(dst, "attribution", e.Attribution)
		}
		return append(e.appendTree(dst), '}')
	}
	if e.rest != nil {
		return e.appendOpaque(dst)
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
		dst = appendStringField(dst, "summary", e.Summary)
		if e.ShortSummary != "" {
			dst = appendStringField(dst, "shortSummary", e.ShortSummary)
		}
		dst = appendStringField(dst, "firstKeptEntryId", e.FirstKeptEntryID)
		dst = appendIntField(dst, "tokensBefore", e.TokensBefore)
		if e.Details != nil {
			dst = appendRawField(dst, "details", e.Details)
		}
		if e.FromExtension != nil {
			dst = appendBoolField(dst, "fromExtension", *e.FromExtension)
		}
		if e.PreserveData != nil {
			dst = appendRawField(dst, "preserveData", e.PreserveData)
		}
	case EntryBranchSummary:
		dst = appendStringField(dst, "fromId", e.FromID)
		dst = appendStringField(dst, "summary", e.Summary)
		if e.Details != nil {
			dst = appendRawField(dst, "details", e.Details)
		}
		if e.FromExtension != nil {
			dst = appendBoolField(dst, "fromExtension", *e.FromExtension)
		}
	case EntryLabel:
		dst = appendStringField(dst, "targetId", e.TargetID)
		if e.Label != "" || e.emptyLabel {
			dst = appendStringField(dst, "label", e.Label)
		}
	}
	return append(dst, '}')
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
	if e.rawTimestamp != "" {
		return appendStringField(dst, "timestamp", e.rawTimestamp)
	}
	dst = append(appendKey(dst, "timestamp"), '"')
	dst = time.UnixMilli(e.Timestamp).UTC().AppendFormat(dst, isoMillis)
	return append(dst, '"')
}

// appendOpaque writes an entry of an unknown type: its keys in the order
// they were read, the tree keys from the Entry's fields (so an entry moved
// to another parent is written as moved). A tree key the line lacked is
// written after the others.
func (e *Entry) appendOpaque(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, '{')
	var seen [4]bool
	for _, f := range e.rest {
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
	if !seen[0] {
		dst = appendStringField(dst, "type", e.Type)
	}
	if !seen[1] {
		dst = appendStringField(dst, "id", e.ID)
	}
	if !seen[2] {
		dst = e.appendParent(dst)
	}
	if !seen[3] {
		dst = e.appendTimestamp(dst)
	}
	// Every key above was written with a leading comma; the first one's
	// goes.
	dst = append(dst[:start+1], dst[start+2:]...)
	return append(dst, '}')
}
