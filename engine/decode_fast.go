package engine

import (
	"time"

	"github.com/xcsh-go/xcsh/engine/internal/jsonscan"
)

// fastScan is the fast path's reader: the lexer, and the readers below of
// this package's types on it.
type fastScan struct{ jsonscan.Scanner }

// The fast path of decoding: the readers below take the messages a
// session file is made of (user, assistant and toolResult, with their
// blocks and usage) and the message entry around them in one pass over the
// line, with the lexer of internal/jsonscan, straight into the final structs. The
// general decoders (decode.go) call json.Unmarshal inside json.Unmarshal,
// so every nested value is validated and scanned again at each level and
// each level allocates its aux struct; on a 100k-entry session that was
// most of the load time and of the garbage.
//
// The path is strict and conservative: it accepts only valid JSON (it
// validates as it reads) and only the keys and value types the general
// decoders read; anything else (an unknown or duplicated key, a null, a
// block type it does not know, an escaped key, deep nesting) makes it give
// up, and the caller takes the general path, which decodes the line or
// reports why it cannot. So whatever it accepts decodes to what the
// general path gives, which TestFastDecodeAgrees checks.

// contentValue reads a content value, a string or an array of blocks, as
// decodeContent does.
func (s *fastScan) contentValue() (blocks []ContentBlock, asString bool) {
	s.WS()
	if s.Peek() == '"' {
		return []ContentBlock{TextBlock(s.Str())}, true
	}
	return s.blocks(), false
}

// blocks reads an array of content blocks into a slice of its exact size
// (json.Unmarshal grows one by doubling).
func (s *fastScan) blocks() []ContentBlock {
	if !s.Open('[') {
		return nil
	}
	var buf [4]ContentBlock
	bs := buf[:0]
	if !s.Close(']') {
		for more := true; more && !s.Failed(); more = s.Next(']') {
			bs = append(bs, ContentBlock{})
			s.block(&bs[len(bs)-1])
		}
	}
	if s.Failed() {
		return nil
	}
	out := make([]ContentBlock, len(bs))
	copy(out, bs)
	return out
}

// block reads a content block of a type this package knows.
func (s *fastScan) block(b *ContentBlock) {
	if !s.Open('{') {
		return
	}
	if s.Close('}') {
		s.Fail() // no type: the general path keeps it raw
		return
	}
	var seen uint32
	for more := true; more && !s.Failed(); more = s.Next('}') {
		switch string(s.Key()) {
		case "type":
			s.Once(&seen, 1<<0)
			body, _, _ := s.StrBody()
			switch string(body) {
			case BlockText:
				b.Type = BlockText
			case BlockThinking:
				b.Type = BlockThinking
			case BlockRedactedThinking:
				b.Type = BlockRedactedThinking
			case BlockImage:
				b.Type = BlockImage
			case BlockToolCall:
				b.Type = BlockToolCall
			default:
				s.Fail()
			}
		case "text":
			s.Once(&seen, 1<<1)
			b.Text = s.Str()
		case "textSignature":
			s.Once(&seen, 1<<2)
			b.TextSignature = s.Str()
		case "thinking":
			s.Once(&seen, 1<<3)
			b.Thinking = s.Str()
		case "thinkingSignature":
			s.Once(&seen, 1<<4)
			b.ThinkingSignature = s.Str()
		case "data":
			s.Once(&seen, 1<<5)
			b.Data = s.Str()
		case "mimeType":
			s.Once(&seen, 1<<6)
			b.MimeType = s.IStr()
		case "id":
			s.Once(&seen, 1<<7)
			b.ID = s.Str()
		case "name":
			s.Once(&seen, 1<<8)
			b.Name = s.IStr()
		case "arguments":
			s.Once(&seen, 1<<9)
			b.Arguments = s.Raw()
		case "thoughtSignature":
			s.Once(&seen, 1<<10)
			b.ThoughtSignature = s.Str()
		case "intent":
			s.Once(&seen, 1<<11)
			b.Intent = s.Str()
		default:
			s.Fail()
		}
	}
	if seen&1 == 0 {
		s.Fail()
	}
}

// usage reads a usage object.
func (s *fastScan) usage(u *Usage) {
	if !s.Open('{') || s.Close('}') {
		return
	}
	var seen uint32
	for more := true; more && !s.Failed(); more = s.Next('}') {
		switch string(s.Key()) {
		case "input":
			s.Once(&seen, 1<<0)
			u.Input = s.Int()
		case "output":
			s.Once(&seen, 1<<1)
			u.Output = s.Int()
		case "cacheRead":
			s.Once(&seen, 1<<2)
			u.CacheRead = s.Int()
		case "cacheWrite":
			s.Once(&seen, 1<<3)
			u.CacheWrite = s.Int()
		case "totalTokens":
			s.Once(&seen, 1<<4)
			u.TotalTokens = s.Int()
		case "premiumRequests":
			s.Once(&seen, 1<<5)
			v := s.Int()
			u.PremiumRequests = &v
		case "cost":
			s.Once(&seen, 1<<6)
			s.cost(&u.Cost)
		default:
			s.Fail()
		}
	}
}

func (s *fastScan) cost(c *Cost) {
	if !s.Open('{') || s.Close('}') {
		return
	}
	var seen uint32
	for more := true; more && !s.Failed(); more = s.Next('}') {
		switch string(s.Key()) {
		case "input":
			s.Once(&seen, 1<<0)
			c.Input = s.Float()
		case "output":
			s.Once(&seen, 1<<1)
			c.Output = s.Float()
		case "cacheRead":
			s.Once(&seen, 1<<2)
			c.CacheRead = s.Float()
		case "cacheWrite":
			s.Once(&seen, 1<<3)
			c.CacheWrite = s.Float()
		case "total":
			s.Once(&seen, 1<<4)
			c.Total = s.Float()
		default:
			s.Fail()
		}
	}
}

// message reads a message object. The hot roles are read here when "role"
// is the first key, as every encoder writes it; any other message is
// validated, cut out and given to DecodeMessage. It returns nil on failure
// (s.Failed() set) or when DecodeMessage fails (the general path reports it).
func (s *fastScan) message() Message {
	s.WS()
	start := s.Pos()
	if m := s.hotMessage(); m != nil || s.Failed() {
		return m
	}
	s.SetPos(start)
	if s.Skip(); s.Failed() {
		return nil
	}
	m, err := decodeMessage(s.Since(start))
	if err != nil {
		s.Fail()
		return nil
	}
	return m
}

// hotMessage reads a user, assistant or toolResult message whose first
// key is "role". It returns nil without failing (and at an unspecified
// position) for any other message.
func (s *fastScan) hotMessage() Message {
	s.WS()
	if !s.HasPrefix(`{"role":"`) {
		return nil
	}
	s.Consume(`{"role":`)
	body, _, _ := s.StrBody()
	switch string(body) {
	case "user":
		return s.user()
	case "assistant":
		return s.assistant()
	case "toolResult":
		return s.toolResult()
	}
	return nil
}

// user reads the rest of a user message after its role.
func (s *fastScan) user() *UserMessage {
	m := &UserMessage{noAttribution: true}
	seen := uint32(1)
	for s.Next('}') && !s.Failed() {
		switch string(s.Key()) {
		case "role":
			s.Once(&seen, 1<<0)
		case "content":
			s.Once(&seen, 1<<1)
			m.Content, m.StringContent = s.contentValue()
		case "synthetic":
			s.Once(&seen, 1<<2)
			m.Synthetic = s.Bool()
		case "attribution":
			s.Once(&seen, 1<<3)
			m.Attribution, m.noAttribution = s.IStr(), false
		case "providerPayload":
			s.Once(&seen, 1<<4)
			m.ProviderPayload = s.Raw()
		case "timestamp":
			s.Once(&seen, 1<<5)
			m.Timestamp = s.Int()
		default:
			s.Fail()
		}
	}
	return m
}

// assistant reads the rest of an assistant message after its role.
func (s *fastScan) assistant() *AssistantMessage {
	m := new(AssistantMessage)
	seen := uint32(1)
	for s.Next('}') && !s.Failed() {
		switch string(s.Key()) {
		case "role":
			s.Once(&seen, 1<<0)
		case "content":
			s.Once(&seen, 1<<1)
			m.Content = s.blocks()
		case "api":
			s.Once(&seen, 1<<2)
			m.API = s.IStr()
		case "provider":
			s.Once(&seen, 1<<3)
			m.Provider = s.IStr()
		case "model":
			s.Once(&seen, 1<<4)
			m.Model = s.IStr()
		case "responseId":
			s.Once(&seen, 1<<5)
			m.ResponseID = s.Str()
		case "usage":
			s.Once(&seen, 1<<6)
			s.usage(&m.Usage)
		case "stopReason":
			s.Once(&seen, 1<<7)
			m.StopReason = StopReason(s.IStr())
		case "errorMessage":
			s.Once(&seen, 1<<8)
			m.ErrorMessage = s.Str()
		case "providerPayload":
			s.Once(&seen, 1<<9)
			m.ProviderPayload = s.Raw()
		case "timestamp":
			s.Once(&seen, 1<<10)
			m.Timestamp = s.Int()
		case "duration":
			s.Once(&seen, 1<<11)
			v := s.Float()
			m.Duration = &v
		case "ttft":
			s.Once(&seen, 1<<12)
			v := s.Float()
			m.TTFT = &v
		default:
			s.Fail()
		}
	}
	return m
}

// toolResult reads the rest of a tool result message after its role.
func (s *fastScan) toolResult() *ToolResultMessage {
	m := new(ToolResultMessage)
	seen := uint32(1)
	for s.Next('}') && !s.Failed() {
		switch string(s.Key()) {
		case "role":
			s.Once(&seen, 1<<0)
		case "toolCallId":
			s.Once(&seen, 1<<1)
			m.ToolCallID = s.Str()
		case "toolName":
			s.Once(&seen, 1<<2)
			m.ToolName = s.IStr()
		case "content":
			s.Once(&seen, 1<<3)
			m.Content = s.blocks()
		case "details":
			s.Once(&seen, 1<<4)
			m.Details = s.Raw()
		case "isError":
			s.Once(&seen, 1<<5)
			m.IsError = s.Bool()
		case "isWarning":
			s.Once(&seen, 1<<6)
			v := s.Bool()
			m.IsWarning = &v
		case "attribution":
			s.Once(&seen, 1<<7)
			m.Attribution = s.IStr()
		case "prunedAt":
			s.Once(&seen, 1<<8)
			m.PrunedAt = s.Int()
		case "timestamp":
			s.Once(&seen, 1<<9)
			m.Timestamp = s.Int()
		default:
			s.Fail()
		}
	}
	return m
}

// decodeMessageEntry is the fast path of the line a session file holds
// most of: a message entry in the original's layout,
// {"type":"message","id":"…","parentId":…,"timestamp":"…","message":{…}}
// (other key orders are read too, but "type" must come first). It reads
// the line once. Anything else gives nil and takes the general
// path.
func (d *EntryDecoder) decodeMessageEntry(line []byte) *Entry {
	s := fastScan{jsonscan.New(line, d.strs)}
	s.WS()
	if !s.Consume(`{"type":"message",`) {
		return nil
	}
	e := &Entry{Type: EntryMessage}
	var ts []byte
	seen := uint32(1)
	for more := true; more && !s.Failed(); more = s.Next('}') {
		switch string(s.Key()) {
		case "type":
			s.Once(&seen, 1<<0)
		case "id":
			s.Once(&seen, 1<<1)
			e.ID = s.Str()
		case "parentId":
			s.Once(&seen, 1<<2)
			s.WS()
			if s.Consume("null") {
				break
			}
			body, esc, hi := s.StrBody()
			if !esc && !hi && string(body) == d.lastID {
				e.ParentID = d.lastID
			} else {
				e.ParentID = s.Text(body, esc, hi)
			}
		case "timestamp":
			s.Once(&seen, 1<<3)
			var esc, hi bool
			if ts, esc, hi = s.StrBody(); esc || hi {
				s.Fail()
			}
		case "message":
			s.Once(&seen, 1<<4)
			e.Message = s.message()
		default:
			s.Fail()
		}
	}
	if !s.End() || seen&(1<<3|1<<4) != 1<<3|1<<4 {
		return nil
	}
	if ms, ok := parseISOMillis(ts); ok {
		e.Timestamp = ms
	} else {
		e.setTimestamp(string(ts))
	}
	return e
}

// parseISOMillis reads a timestamp in exactly the form Date.toISOString
// writes ("2006-01-02T15:04:05.000Z"), which is then known to print back
// the same; ok is false for anything else, which setTimestamp reads.
// time.Parse plus the format check costs more than the rest of a
// message entry.
func parseISOMillis(b []byte) (int64, bool) {
	if len(b) != 24 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' ||
		b[16] != ':' || b[19] != '.' || b[23] != 'Z' {
		return 0, false
	}
	ok := true
	num := func(from, to int) int {
		n := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				ok = false
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec, ms := num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if !ok || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, time.UTC)
	if t.Day() != day { // the 31st of a 30-day month, Feb 29 of a common year
		return 0, false
	}
	return t.UnixMilli(), true
}
