package engine

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Partial is the assistant message under construction during streaming. It
// keeps the JSON encoding of every content block cached: a text or thinking
// delta is escaped once and appended to the block's cached bytes, so
// encoding the whole partial for each message_update is a copy, not a
// re-marshal (which would make a long stream quadratic in CPU, not just in
// bytes). Partial is actor state: only the executor touches it.
type Partial struct {
	msg    AssistantMessage
	blocks []partialBlock
	tail   []byte // cached msg.appendTail; nil when stale
}

type partialBlock struct {
	open bool   // still streaming
	enc  []byte // finished: the whole block; open text/thinking: prefix + escaped text so far
	raw  []byte // open: raw text (or raw argument JSON) so far
}

func newPartial(m AssistantMessage) *Partial {
	m.Content = nil
	return &Partial{msg: m}
}

func (p *Partial) startBlock(b ContentBlock) int {
	p.msg.Content = append(p.msg.Content, b)
	i := len(p.msg.Content) - 1
	pb := partialBlock{open: true}
	switch b.Type {
	case BlockText:
		pb.enc = append(pb.enc, `{"type":"text","text":"`...)
	case BlockThinking:
		pb.enc = append(pb.enc, `{"type":"thinking","thinking":"`...)
	default:
		pb.enc = b.AppendJSON(nil)
	}
	p.blocks = append(p.blocks, pb)
	return i
}

// appendDelta adds streamed text to an open text or thinking block, or a raw
// argument fragment to an open tool call.
func (p *Partial) appendDelta(i int, d string) {
	pb := &p.blocks[i]
	pb.raw = append(pb.raw, d...)
	b := &p.msg.Content[i]
	if b.Type == BlockToolCall {
		if args := completePartialJSON(pb.raw); args != nil {
			b.Arguments = args
			pb.enc = b.AppendJSON(pb.enc[:0])
		}
		return
	}
	pb.enc = appendEscaped(pb.enc, d)
}

// endBlock closes block i. For text and thinking it materialises the text;
// for tool calls finalArgs (when valid) replaces the streamed arguments.
func (p *Partial) endBlock(i int, signature string, finalArgs []byte) {
	pb := &p.blocks[i]
	b := &p.msg.Content[i]
	switch b.Type {
	case BlockText:
		b.Text = string(pb.raw)
		b.TextSignature = signature
	case BlockThinking:
		b.Thinking = string(pb.raw)
		b.ThinkingSignature = signature
	case BlockToolCall:
		if signature != "" {
			// Gemini's thought signature of a function call part.
			b.ThoughtSignature = signature
		}
		if argsCut(pb.raw, finalArgs) {
			b.cut = cutArgs
		}
		if args := compactObject(finalArgs); args != nil {
			b.Arguments = args
		} else if args := compactObject(pb.raw); args != nil {
			b.Arguments = args
		} else if b.Arguments == nil {
			b.Arguments = []byte("{}")
		}
	}
	pb.open = false
	pb.raw = nil
	pb.enc = b.AppendJSON(pb.enc[:0])
}

func (p *Partial) setUsage(u Usage) {
	p.msg.Usage = u
	p.tail = nil
}

func (p *Partial) setResponseID(id string) {
	p.msg.ResponseID = id
	p.tail = nil
}

// AppendJSON appends the partial message's encoding; byte-identical to the
// MarshalJSON of the message it would be if it ended now.
func (p *Partial) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"role":"assistant","content":[`...)
	for i := range p.blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		pb := &p.blocks[i]
		dst = append(dst, pb.enc...)
		if pb.open && (p.msg.Content[i].Type == BlockText || p.msg.Content[i].Type == BlockThinking) {
			dst = append(dst, '"', '}')
		}
	}
	dst = append(dst, ']')
	if p.tail == nil {
		p.tail = p.msg.appendTail(nil)
	}
	return append(dst, p.tail...)
}

// SizeHint is an upper bound of the length AppendJSON adds, so an encoder
// can size its buffer once instead of growing it by copies.
func (p *Partial) SizeHint() int {
	n := 64
	for i := range p.blocks {
		n += len(p.blocks[i].enc) + 3
	}
	if p.tail == nil {
		p.tail = p.msg.appendTail(nil)
	}
	return n + len(p.tail)
}

// snapshot returns the message as it stands, as an independent value.
func (p *Partial) snapshot() *AssistantMessage {
	m := p.msg
	m.Content = make([]ContentBlock, len(p.msg.Content))
	copy(m.Content, p.msg.Content)
	for i := range p.blocks {
		if !p.blocks[i].open {
			continue
		}
		switch m.Content[i].Type {
		case BlockText:
			m.Content[i].Text = string(p.blocks[i].raw)
		case BlockThinking:
			m.Content[i].Thinking = string(p.blocks[i].raw)
		case BlockToolCall:
			// A call whose end never came has no known end of its
			// arguments: it must not run (cutcalls.go).
			m.Content[i].cut = cutArgs
		}
	}
	return &m
}

// ToolCall returns the id and name of block i when it is a tool call, and
// its arguments as streamed so far (completed into a valid object; nil
// before the first complete one). A front that shows a call as soon as
// it starts (ACP's pending tool_call) reads it at toolcall_start. (actor)
func (p *Partial) ToolCall(i int) (id, name string, args []byte, ok bool) {
	if i < 0 || i >= len(p.msg.Content) || p.msg.Content[i].Type != BlockToolCall {
		return "", "", nil, false
	}
	b := p.msg.Content[i]
	return b.ID, b.Name, b.Arguments, true
}

// blockText returns the text of block i so far.
func (p *Partial) blockText(i int) string {
	if p.blocks[i].open {
		return string(p.blocks[i].raw)
	}
	b := p.msg.Content[i]
	if b.Type == BlockThinking {
		return b.Thinking
	}
	return b.Text
}

func compactObject(raw []byte) []byte {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	c := compactRaw(raw)
	if len(c) == 0 || c[0] != '{' {
		return nil
	}
	return c
}

// completePartialJSON makes a best-effort object out of a truncated JSON
// prefix (for the streamed arguments of a tool call): it closes an open
// string and the open brackets, dropping a dangling key or separator. It
// returns nil when no object can be recovered yet.
func completePartialJSON(raw []byte) []byte {
	if c := compactObject(raw); c != nil {
		return c
	}
	s := strings.TrimRight(string(raw), " \t\r\n")
	for attempt := 0; attempt < 4 && s != ""; attempt++ {
		closed, cut := closeJSON(s)
		if c := compactObject([]byte(closed)); c != nil {
			return c
		}
		if cut < 0 || cut >= len(s) {
			return nil
		}
		s = strings.TrimRight(s[:cut], " \t\r\n")
	}
	return nil
}

// closeJSON appends closers for an unterminated JSON prefix and reports the
// position of the last top-level-safe cut point (a ',' or an opening
// bracket) for a retry with less input.
func closeJSON(s string) (string, int) {
	var stack []byte
	inStr, esc := false, false
	cut := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			stack = append(stack, c)
			cut = i + 1
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			cut = i
		}
	}
	var b strings.Builder
	b.WriteString(s)
	if inStr {
		t := s
		if esc {
			t = t[:len(t)-1]
		}
		// Drop an incomplete \uXXXX escape.
		if k := strings.LastIndex(t, `\u`); k >= 0 && len(t)-k < 6 {
			t = t[:k]
		}
		for len(t) > 0 && !utf8.ValidString(t[len(t)-1:]) && !utf8.ValidString(t) {
			t = t[:len(t)-1]
		}
		b.Reset()
		b.WriteString(t)
		b.WriteByte('"')
	}
	out := b.String()
	trimmed := strings.TrimRight(out, " \t\r\n")
	if strings.HasSuffix(trimmed, ",") || strings.HasSuffix(trimmed, ":") {
		trimmed = trimmed[:len(trimmed)-1]
		if strings.HasSuffix(trimmed, ":") {
			trimmed = trimmed[:len(trimmed)-1]
		}
	}
	out = trimmed
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i] == '{' {
			out += "}"
		} else {
			out += "]"
		}
	}
	return out, cut
}
