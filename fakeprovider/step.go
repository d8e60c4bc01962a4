package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/xcsh-go/xcsh/engine"
)

// stepKind is what a step emits; its String is the step's JSON key.
type stepKind int

const (
	kindText stepKind = iota + 1
	kindThinking
	kindToolCall
	kindUsage
	kindError
	kindBlock
	kindEcho
)

// kindKeys maps each kind to its JSON key.
var kindKeys = [...]string{
	kindText:     "text",
	kindThinking: "thinking",
	kindToolCall: "toolCall",
	kindUsage:    "usage",
	kindError:    "error",
	kindBlock:    "block",
	kindEcho:     "echo",
}

// kindNames maps each JSON key to its kind.
var kindNames = func() map[string]stepKind {
	m := make(map[string]stepKind, len(kindKeys))
	for k, name := range kindKeys {
		if name != "" {
			m[name] = stepKind(k)
		}
	}
	return m
}()

func (k stepKind) String() string { return kindKeys[k] }

// modifiers lists the keys a step of each kind may carry besides its kind.
var modifiers = map[stepKind][]string{
	kindText:     {"repeat"},
	kindThinking: {"repeat", "signature"},
	kindToolCall: {"argDeltas", "cut"},
}

// step is one validated step of a turn.
type step struct {
	kind stepKind

	// text and thinking
	deltas    []string
	repeat    int // how many times deltas are sent, at least 1
	signature string

	// toolCall; argDeltas concatenate to args
	toolID    string // "" means "call_<call>_<k>"
	toolName  string
	args      []byte // compact JSON object; nil for a cut call
	argDeltas []string
	cut       bool // argDeltas stop short of a JSON object; the end has no final arguments

	usage engine.Usage

	// error
	status       int
	message      string
	retryAfterMs int

	// echo: the part of the request the text shows (echo.go)
	echo string
}

func parseStep(raw json.RawMessage, st *step) error {
	fields, err := objectFields(raw, "a step")
	if err != nil {
		return err
	}
	var kinds []string
	var unknown string
	for _, f := range fields {
		if k, ok := kindNames[f.key]; ok {
			kinds = append(kinds, f.key)
			st.kind = k
		} else if unknown == "" && !isModifier(f.key) {
			unknown = f.key
		}
	}
	switch {
	case len(kinds) == 0 && unknown != "":
		return fmt.Errorf("unknown step kind %q (want text, thinking, toolCall, usage, error, block or echo)", unknown)
	case len(kinds) == 0:
		return errors.New("step has no kind (want one of text, thinking, toolCall, usage, error, block or echo)")
	case len(kinds) > 1:
		return fmt.Errorf("step has several kinds (%s); use one step each", strings.Join(kinds, ", "))
	case unknown != "":
		return fmt.Errorf("unknown key %q in a %s step", unknown, st.kind)
	}
	for _, f := range fields {
		if _, ok := kindNames[f.key]; ok {
			continue
		}
		if !allowed(st.kind, f.key) {
			return fmt.Errorf("key %q is not allowed in a %s step", f.key, st.kind)
		}
	}

	st.repeat = 1
	for _, f := range fields {
		switch f.key {
		case "text", "thinking":
			err = st.parseDeltas(f)
		case "repeat":
			st.repeat, err = f.count()
			if err == nil && st.repeat == 0 {
				err = errors.New(`"repeat" must be at least 1`)
			}
		case "signature":
			st.signature, err = f.str()
		case "toolCall":
			err = st.parseToolCall(f)
		case "argDeltas":
			if jsonKind(f.val) != "an array" {
				err = fmt.Errorf(`"argDeltas" must be an array of strings, got %s`, jsonKind(f.val))
			} else {
				st.argDeltas, err = f.strs()
			}
		case "cut":
			var b bool
			if b, err = f.boolean(); err == nil && !b {
				err = errors.New(`"cut" must be true`)
			}
			st.cut = b
		case "usage":
			err = st.parseUsage(f)
		case "error":
			err = st.parseError(f)
		case "block":
			var b bool
			if b, err = f.boolean(); err == nil && !b {
				err = errors.New(`"block" must be true`)
			}
		case "echo":
			if st.echo, err = f.str(); err == nil && !knownEcho(st.echo) {
				err = fmt.Errorf(`"echo" must be one of %s, got %q`, strings.Join(echoParts, ", "), st.echo)
			}
		}
		if err != nil {
			return err
		}
	}
	if st.kind == kindToolCall {
		return st.checkArgDeltas()
	}
	return nil
}

func isModifier(key string) bool {
	for _, keys := range modifiers {
		for _, k := range keys {
			if k == key {
				return true
			}
		}
	}
	return false
}

func allowed(kind stepKind, key string) bool {
	for _, k := range modifiers[kind] {
		if k == key {
			return true
		}
	}
	return false
}

// parseDeltas reads a text or thinking value: a string is split after each
// space, an array gives the exact deltas.
func (st *step) parseDeltas(f field) error {
	if jsonKind(f.val) == "a string" {
		s, err := f.str()
		st.deltas = splitWords(s)
		return err
	}
	var err error
	st.deltas, err = f.strs()
	return err
}

func (st *step) parseToolCall(tf field) error {
	fields, err := objectFields(tf.val, `"toolCall"`)
	if err != nil {
		return err
	}
	for _, f := range fields {
		switch f.key {
		case "id":
			st.toolID, err = f.str()
		case "name":
			st.toolName, err = f.str()
		case "arguments":
			st.args, err = f.object()
		default:
			err = fmt.Errorf("unknown key %q in \"toolCall\" (want id, name or arguments)", f.key)
		}
		if err != nil {
			return err
		}
	}
	if st.toolName == "" {
		return errors.New(`"toolCall" needs a non-empty "name"`)
	}
	return nil
}

// checkArgDeltas makes the streamed deltas and the final arguments agree:
// explicit argDeltas must concatenate to a JSON object (equal to arguments
// when both are given); otherwise the compact arguments are cut into pieces.
// A cut call is the opposite: its argDeltas must not make an object.
func (st *step) checkArgDeltas() error {
	if st.cut {
		joined := strings.Join(st.argDeltas, "")
		switch {
		case strings.TrimSpace(joined) == "":
			return errors.New(`"cut" needs "argDeltas": the arguments as far as they got`)
		case st.args != nil:
			return errors.New(`"cut" and "arguments" exclude each other: a cut call has no final arguments`)
		case json.Valid([]byte(joined)) && jsonKind(json.RawMessage(joined)) == "an object":
			return fmt.Errorf(`"cut" needs "argDeltas" that stop short of a JSON object, got %q`, joined)
		}
		return nil
	}
	if st.argDeltas == nil {
		if st.args == nil {
			st.args = []byte("{}")
		}
		st.argDeltas = splitBytes(string(st.args), argPiece)
		return nil
	}
	joined := strings.Join(st.argDeltas, "")
	if !json.Valid([]byte(joined)) || jsonKind(json.RawMessage(joined)) != "an object" {
		return fmt.Errorf(`"argDeltas" must concatenate to a JSON object, got %q`, joined)
	}
	got, err := compact([]byte(joined))
	if err != nil {
		return err
	}
	if st.args == nil {
		st.args = got
	} else if !bytes.Equal(got, st.args) {
		return fmt.Errorf(`"argDeltas" concatenate to %s but "arguments" is %s`, got, st.args)
	}
	return nil
}

func (st *step) parseUsage(uf field) error {
	fields, err := objectFields(uf.val, `"usage"`)
	if err != nil {
		return err
	}
	u := &st.usage
	total := int64(-1)
	for _, f := range fields {
		var dst *int64
		switch f.key {
		case "input":
			dst = &u.Input
		case "output":
			dst = &u.Output
		case "cacheRead":
			dst = &u.CacheRead
		case "cacheWrite":
			dst = &u.CacheWrite
		case "totalTokens":
			dst = &total
		default:
			return fmt.Errorf("unknown key %q in \"usage\" (want input, output, cacheRead, cacheWrite or totalTokens)", f.key)
		}
		n, err := f.count()
		if err != nil {
			return err
		}
		*dst = int64(n)
	}
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	if total >= 0 {
		u.TotalTokens = total
	}
	return nil
}

func (st *step) parseError(ef field) error {
	fields, err := objectFields(ef.val, `"error"`)
	if err != nil {
		return err
	}
	for _, f := range fields {
		switch f.key {
		case "status":
			st.status, err = f.count()
		case "message":
			st.message, err = f.str()
		case "retryAfterMs":
			st.retryAfterMs, err = f.count()
		default:
			err = fmt.Errorf("unknown key %q in \"error\" (want status, message or retryAfterMs)", f.key)
		}
		if err != nil {
			return err
		}
	}
	if st.message == "" {
		return errors.New(`"error" needs a non-empty "message"`)
	}
	return nil
}
