package openai

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3/responses"
)

// deltaEvent is a text delta as the API sends it.
var deltaEvent = []byte(`{"type":"response.output_text.delta","sequence_number":42,"item_id":"msg_0123456789abcdef0123456789abcdef","output_index":1,"content_index":0,"delta":"tok ","logprobs":[],"obfuscation":"aB3dE"}`)

// BenchmarkResponsesDeltaDecode compares decoding one text delta into the
// adapter's respEvent with the SDK's ResponseStreamEventUnion (the reason
// for responses_wire.go).
func BenchmarkResponsesDeltaDecode(b *testing.B) {
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		var ev respEvent
		for b.Loop() {
			ev = respEvent{}
			if err := json.Unmarshal(deltaEvent, &ev); err != nil || ev.Delta != "tok " {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ev responses.ResponseStreamEventUnion
			if err := json.Unmarshal(deltaEvent, &ev); err != nil || ev.Delta != "tok " {
				b.Fatal(err)
			}
		}
	})
}
