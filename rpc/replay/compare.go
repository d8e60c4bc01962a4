package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// ignoredKeys are the keys host mode does not compare, at any depth: a
// host stamps its messages with its own clock.
var ignoredKeys = map[string]bool{"timestamp": true}

// difference describes where two JSON values first differ.
type difference struct {
	Pointer string // RFC 6901 JSON pointer ("" is the whole value)
	What    string // a sentence: want X, got Y
}

// decodeJSON parses one JSON value, keeping numbers as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	return v, nil
}

// compareJSON returns the first difference between want and got, both
// decoded by decodeJSON, or nil when they are equal as JSON values: object
// key order does not count, numbers compare by value, and the keys of
// ignore (at any depth) and skip (at the top level) are not compared.
func compareJSON(want, got any, ignore, skipTop map[string]bool) *difference {
	return compareAt("", want, got, ignore, skipTop)
}

func compareAt(ptr string, want, got any, ignore, skip map[string]bool) *difference {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return &difference{ptr, fmt.Sprintf("want an object, got %s", brief(got))}
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if ignore[k] || skip[k] {
				continue
			}
			p := ptr + "/" + escapePointer(k)
			wv, inW := w[k]
			gv, inG := g[k]
			switch {
			case !inG:
				return &difference{p, fmt.Sprintf("missing (want %s)", brief(wv))}
			case !inW:
				return &difference{p, fmt.Sprintf("not in the transcript (got %s)", brief(gv))}
			}
			if d := compareAt(p, wv, gv, ignore, nil); d != nil {
				return d
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return &difference{ptr, fmt.Sprintf("want an array, got %s", brief(got))}
		}
		for i := range min(len(w), len(g)) {
			if d := compareAt(fmt.Sprintf("%s/%d", ptr, i), w[i], g[i], ignore, nil); d != nil {
				return d
			}
		}
		if len(w) != len(g) {
			return &difference{ptr, fmt.Sprintf("want %d elements, got %d", len(w), len(g))}
		}
		return nil
	case json.Number:
		g, ok := got.(json.Number)
		if !ok || !sameNumber(w, g) {
			return &difference{ptr, fmt.Sprintf("want %s, got %s", brief(want), brief(got))}
		}
		return nil
	default: // string, bool, nil
		if want != got {
			return &difference{ptr, fmt.Sprintf("want %s, got %s", brief(want), brief(got))}
		}
		return nil
	}
}

// sameNumber compares two JSON numbers by value (1, 1.0 and 1e0 are
// equal), exactly.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okA := new(big.Rat).SetString(string(a))
	y, okB := new(big.Rat).SetString(string(b))
	return okA && okB && x.Cmp(y) == 0
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// brief renders a decoded JSON value for a message, clipped.
func brief(v any) string {
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 200)
}

// clip shortens s to at most max bytes (plus a note), on a UTF-8 boundary.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// firstDifference locates the first difference between two frames that
// are not byte-equal, for a message: a JSON pointer when both are JSON
// and differ as values, else a note that only their bytes differ.
func firstDifference(want, got []byte) *difference {
	wv, errW := decodeJSON(want)
	gv, errG := decodeJSON(got)
	switch {
	case errW != nil || errG != nil:
		return &difference{What: fmt.Sprintf("want %s, got %s", clip(string(want), 200), clip(string(got), 200))}
	}
	if d := compareJSON(wv, gv, nil, nil); d != nil {
		return d
	}
	return &difference{What: "the same JSON value written differently (key order, spacing or escapes)"}
}
