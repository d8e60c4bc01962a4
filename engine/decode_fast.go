package engine

import (
	"bytes"
	"time"
)

// The fast path of decoding: the readers below take the messages a
// session file is made of (user, assistant and toolResult, with their
// blocks and usage) and the message entry around them in one pass over the
// line, with the lexer in jscan.go, straight into the final structs. The
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
func (s *jscan) contentValue() (blocks []ContentBlock, asString bool) {
	s.ws()
	if s.peek() == '"' {
		return []ContentBlock{TextBlock(s.str())}, true
	}
	return s.blocks(), false
}

// blocks reads an array of content blocks into a slice of its exact size
// (json.Unmarshal grows one by doubling).
func (s *jscan) blocks() []ContentBlock {
	if !s.open('[') {
		return nil
	}
	var buf [4]ContentBlock
	bs := buf[:0]
	if !s.close(']') {
		for more := true; more && !s.fail; more = s.next(']') {
			bs = append(bs, ContentBlock{})
			s.block(&bs[len(bs)-1])
		}
	}
	if s.fail {
		return nil
	}
	out := make([]ContentBlock, len(bs))
	copy(out, bs)
	return out
}

// block reads a content block of a type this package knows.
func (s *jscan) block(b *ContentBlock) {
	if !s.open('{') {
		return
	}
	if s.close('}') {
		s.bad() // no type: the general path keeps it raw
		return
	}
	var seen uint32
	for more := true; more && !s.fail; more = s.next('}') {
		switch string(s.key()) {
		case "type":
			s.once(&seen, 1<<0)
			body, _, _ := s.strBody()
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
				s.bad()
			}
		case "text":
			s.once(&seen, 1<<1)
			b.Text = s.str()
		case "textSignature":
			s.once(&seen, 1<<2)
			b.TextSignature = s.str()
		case "thinking":
			s.once(&seen, 1<<3)
			b.Thinking = s.str()
		case "thinkingSignature":
			s.once(&seen, 1<<4)
			b.ThinkingSignature = s.str()
		case "data":
			s.once(&seen, 1<<5)
			b.Data = s.str()
		case "mimeType":
			s.once(&seen, 1<<6)
			b.MimeType = s.istr()
		case "id":
			s.once(&seen, 1<<7)
			b.ID = s.str()
		case "name":
			s.once(&seen, 1<<8)
			b.Name = s.istr()
		case "arguments":
			s.once(&seen, 1<<9)
			b.Arguments = s.raw()
		case "thoughtSignature":
			s.once(&seen, 1<<10)
			b.ThoughtSignature = s.str()
		case "intent":
			s.once(&seen, 1<<11)
			b.Intent = s.str()
		default:
			s.bad()
		}
	}
	if seen&1 == 0 {
		s.bad()
	}
}

// usage reads a usage object.
func (s *jscan) usage(u *Usage) {
	if !s.open('{') || s.close('}') {
		return
	}
	var seen uint32
	for more := true; more && !s.fail; more = s.next('}') {
		switch string(s.key()) {
		case "input":
			s.once(&seen, 1<<0)
			u.Input = s.int()
		case "output":
			s.once(&seen, 1<<1)
			u.Output = s.int()
		case "cacheRead":
			s.once(&seen, 1<<2)
			u.CacheRead = s.int()
		case "cacheWrite":
			s.once(&seen, 1<<3)
			u.CacheWrite = s.int()
		case "totalTokens":
			s.once(&seen, 1<<4)
			u.TotalTokens = s.int()
		case "premiumRequests":
			s.once(&seen, 1<<5)
			v := s.int()
			u.PremiumRequests = &v
		case "cost":
			s.once(&seen, 1<<6)
			s.cost(&u.Cost)
		default:
			s.bad()
		}
	}
}

func (s *jscan) cost(c *Cost) {
	if !s.open('{') || s.close('}') {
		return
	}
	var seen uint32
	for more := true; more && !s.fail; more = s.next('}') {
		switch string(s.key()) {
		case "input":
			s.once(&seen, 1<<0)
			c.Input = s.float()
		case "output":
			s.once(&seen, 1<<1)
			c.Output = s.float()
		case "cacheRead":
			s.once(&seen, 1<<2)
			c.CacheRead = s.float()
		case "cacheWrite":
			s.once(&seen, 1<<3)
			c.CacheWrite = s.float()
		case "total":
			s.once(&seen, 1<<4)
			c.Total = s.float()
		default:
			s.bad()
		}
	}
}

// message reads a message object. The hot roles are read here when "role"
// is the first key, as every encoder writes it; any other message is
// validated, cut out and given to DecodeMessage. It returns nil on failure
// (s.fail set) or when DecodeMessage fails (the general path reports it).
func (s *jscan) message() Message {
	s.ws()
	start := s.i
	if m := s.hotMessage(); m != nil || s.fail {
		return m
	}
	s.i = start
	if s.skip(); s.fail {
		return nil
	}
	m, err := decodeMessage(s.b[start:s.i])
	if err != nil {
		s.bad()
		return nil
	}
	return m
}

// hotMessage reads a user, assistant or toolResult message whose first
// key is "role". It returns nil without failing (and at an unspecified
// position) for any other message.
func (s *jscan) hotMessage() Message {
	s.ws()
	if !bytes.HasPrefix(s.b[s.i:], []byte(`{"role":"`)) {
		return nil
	}
	s.i += len(`{"role":`)
	body, _, _ := s.strBody()
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
func (s *jscan) user() *UserMessage {
	m := &UserMessage{noAttribution: true}
	seen := uint32(1)
	for s.next('}') && !s.fail {
		switch string(s.key()) {
		case "role":
			s.once(&seen, 1<<0)
		case "content":
			s.once(&seen, 1<<1)
			m.Content, m.StringContent = s.contentValue()
		case "synthetic":
			s.once(&seen, 1<<2)
			m.Synthetic = s.bool()
		case "attribution":
			s.once(&seen, 1<<3)
			m.Attribution, m.noAttribution = s.istr(), false
		case "providerPayload":
			s.once(&seen, 1<<4)
			m.ProviderPayload = s.raw()
		case "timestamp":
			s.once(&seen, 1<<5)
			m.Timestamp = s.int()
		default:
			s.bad()
		}
	}
	return m
}

// assistant reads the rest of an assistant message after its role.
func (s *jscan) assistant() *AssistantMessage {
	m := new(AssistantMessage)
	seen := uint32(1)
	for s.next('}') && !s.fail {
		switch string(s.key()) {
		case "role":
			s.once(&seen, 1<<0)
		case "content":
			s.once(&seen, 1<<1)
			m.Content = s.blocks()
		case "api":
			s.once(&seen, 1<<2)
			m.API = s.istr()
		case "provider":
			s.once(&seen, 1<<3)
			m.Provider = s.istr()
		case "model":
			s.once(&seen, 1<<4)
			m.Model = s.istr()
		case "responseId":
			s.once(&seen, 1<<5)
			m.ResponseID = s.str()
		case "usage":
			s.once(&seen, 1<<6)
			s.usage(&m.Usage)
		case "stopReason":
			s.once(&seen, 1<<7)
			m.StopReason = StopReason(s.istr())
		case "errorMessage":
			s.once(&seen, 1<<8)
			m.ErrorMessage = s.str()
		case "providerPayload":
			s.once(&seen, 1<<9)
			m.ProviderPayload = s.raw()
		case "timestamp":
			s.once(&seen, 1<<10)
			m.Timestamp = s.int()
		case "duration":
			s.once(&seen, 1<<11)
			v := s.float()
			m.Duration = &v
		case "ttft":
			s.once(&seen, 1<<12)
			v := s.float()
			m.TTFT = &v
		default:
			s.bad()
		}
	}
	return m
}

// toolResult reads the rest of a tool result message after its role.
func (s *jscan) toolResult() *ToolResultMessage {
	m := new(ToolResultMessage)
	seen := uint32(1)
	for s.next('}') && !s.fail {
		switch string(s.key()) {
		case "role":
			s.once(&seen, 1<<0)
		case "toolCallId":
			s.once(&seen, 1<<1)
			m.ToolCallID = s.str()
		case "toolName":
			s.once(&seen, 1<<2)
			m.ToolName = s.istr()
		case "content":
			s.once(&seen, 1<<3)
			m.Content = s.blocks()
		case "details":
			s.once(&seen, 1<<4)
			m.Details = s.raw()
		case "isError":
			s.once(&seen, 1<<5)
			m.IsError = s.bool()
		case "isWarning":
			s.once(&seen, 1<<6)
			v := s.bool()
			m.IsWarning = &v
		case "attribution":
			s.once(&seen, 1<<7)
			m.Attribution = s.istr()
		case "prunedAt":
			s.once(&seen, 1<<8)
			m.PrunedAt = s.int()
		case "timestamp":
			s.once(&seen, 1<<9)
			m.Timestamp = s.int()
		default:
			s.bad()
		}
	}
	return m
}

// decodeMessageEntry is the fast path of the line a session file holds
// most of: a message entry in the original's layout,
// {"type":"message","id":"…","parentId":…,"timestamp":"…","message":{…}}
// (other key orders are read too, but "type" must come first). It reads
// the line once with jscan. Anything else gives nil and takes the general
// path.
func (d *EntryDecoder) decodeMessageEntry(line []byte) *Entry {
	s := jscan{b: line, strs: d.strs}
	s.ws()
	if !bytes.HasPrefix(s.b[s.i:], []byte(`{"type":"message",`)) {
		return nil
	}
	s.i += len(`{"type":"message",`)
	e := &Entry{Type: EntryMessage}
	var ts []byte
	seen := uint32(1)
	for more := true; more && !s.fail; more = s.next('}') {
		switch string(s.key()) {
		case "type":
			s.once(&seen, 1<<0)
		case "id":
			s.once(&seen, 1<<1)
			e.ID = s.str()
		case "parentId":
			s.once(&seen, 1<<2)
			s.ws()
			if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
				s.i += 4
				break
			}
			body, esc, hi := s.strBody()
			if !esc && !hi && string(body) == d.lastID {
				e.ParentID = d.lastID
			} else {
				e.ParentID = s.text(body, esc, hi)
			}
		case "timestamp":
			s.once(&seen, 1<<3)
			var esc, hi bool
			if ts, esc, hi = s.strBody(); esc || hi {
				s.bad()
			}
		case "message":
			s.once(&seen, 1<<4)
			e.Message = s.message()
		default:
			s.bad()
		}
	}
	if s.ws(); s.fail || s.i != len(s.b) || seen&(1<<3|1<<4) != 1<<3|1<<4 {
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
