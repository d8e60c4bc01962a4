package engine

import (
	"time"

	"github.com/xcsh-go/xcsh/engine/internal/jsonscan"
)

// The fast path of decoding: the readers take a message of any role this
// package knows, with its blocks, usage and file mentions, and the
// message entry around it in one pass over the line, with the lexer of
// internal/jsonscan, straight into the final structs. The general
// decoders (the UnmarshalJSON methods) call json.Unmarshal inside
// json.Unmarshal, so every nested value is validated and scanned again at
// each level and each level allocates its aux struct; on a 100k-entry
// session that was most of the load time and of the garbage. The readers
// of each object are generated with its encoder and general decoder from
// one table (codec_fast_gen.go, internal/codecgen); the ones below are
// the hand-written rest.
//
// The path is strict and conservative: it accepts only valid JSON (it
// validates as it reads) and only the keys and value types the general
// decoders read; anything else (an unknown or duplicated key, a null, a
// block type it does not know, an escaped key, deep nesting) makes it give
// up, and the caller takes the general path, which decodes the line or
// reports why it cannot. So whatever it accepts decodes to what the
// general path gives, which TestFastDecodeAgrees checks.

// fastScan is the fast path's reader: the lexer, and the readers of this
// package's types on it.
type fastScan struct{ jsonscan.Scanner }

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
			s.readContentBlock(&bs[len(bs)-1])
		}
	}
	if s.Failed() {
		return nil
	}
	out := make([]ContentBlock, len(bs))
	copy(out, bs)
	return out
}

// fileMentions reads the files of a fileMention message; an empty array
// gives nil, as the general path does.
func (s *fastScan) fileMentions() []FileMention {
	if !s.Open('[') || s.Close(']') {
		return nil
	}
	var fs []FileMention
	for more := true; more && !s.Failed(); more = s.Next(']') {
		fs = append(fs, FileMention{})
		s.readFileMention(&fs[len(fs)-1])
	}
	return fs
}

// message reads a message object. A role this package knows is read here
// when "role" is the first key, as every encoder writes it; any other
// message is validated, cut out and given to DecodeMessage. It returns nil
// on failure (s.Failed()) or when DecodeMessage fails (the general path
// reports it).
func (s *fastScan) message() Message {
	s.WS()
	start := s.Pos()
	if m := s.roleMessage(); m != nil || s.Failed() {
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
