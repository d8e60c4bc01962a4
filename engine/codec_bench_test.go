package engine

import (
	"testing"
)

// The message codec's own costs, on every distinct message of the golden
// transcripts (about 700, every role): what a session file load, a save
// and get_messages pay per message, without the file around them.

// BenchmarkEncodeMessages appends every golden message to one buffer.
func BenchmarkEncodeMessages(b *testing.B) {
	msgs := decodedGoldens(b)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for _, m := range msgs {
			buf = appendMessage(buf, m)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkMarshalMessages is MarshalJSON (sized by the hints) per message.
func BenchmarkMarshalMessages(b *testing.B) {
	msgs := decodedGoldens(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			if _, err := m.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDecodeMessages decodes every golden message (the fast path
// where it applies, as a session load does).
func BenchmarkDecodeMessages(b *testing.B) {
	raws := goldenRaws(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range raws {
			if _, err := DecodeMessage(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDecodeMessagesGeneral decodes every golden message on the
// general path (what a message the fast path declines costs).
func BenchmarkDecodeMessagesGeneral(b *testing.B) {
	raws := goldenRaws(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range raws {
			if _, err := decodeMessage(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEncodeToolCallDeltas streams a tool call's arguments in 200
// fragments: each fragment re-encodes the open block (the streaming hot
// path of tool calls), and each delta's message_update encodes the partial.
func BenchmarkEncodeToolCallDeltas(b *testing.B) {
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		p := newPartial(AssistantMessage{API: "openai-completions", Provider: "openai", Model: "gpt", StopReason: StopStop})
		i := p.startBlock(ContentBlock{Type: BlockToolCall, ID: "call_1", Name: "write"})
		p.appendDelta(i, `{"path":"a.txt","content":"`)
		for range 200 {
			p.appendDelta(i, `some more text `)
			buf = p.AppendJSON(buf[:0])
		}
		p.appendDelta(i, `"}`)
		p.endBlock(i, "", nil)
		buf = p.AppendJSON(buf[:0])
	}
}

func goldenRaws(b *testing.B) [][]byte {
	var raws [][]byte
	for _, g := range goldenSet(b) {
		raws = append(raws, []byte(g.raw))
	}
	return raws
}

func decodedGoldens(b *testing.B) []Message {
	var msgs []Message
	for _, r := range goldenRaws(b) {
		m, err := DecodeMessage(r)
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}
