package engine

import (
	"encoding/json"
	"fmt"

	"github.com/xcsh-go/xcsh/engine/internal/jsonscan"
)

// Decoding is the inverse of encoding, both generated from one table per
// object (internal/codecgen/spec.go; the codec_*_gen.go files): for any
// message the encoder wrote, decoding and encoding again gives the same
// bytes (TestGoldenMessagesRoundTrip pins this on every message of
// golden/). So the decoders keep what the encoders look at: whether an
// optional key was present, nil against empty raw JSON, content given as a
// string, and raw JSON values (arguments, details, meta, providerPayload)
// in compact form. Numbers go through float64 and
// appendFloat, which prints the shortest form that parses back to the same
// float, so a cost written by encoding/json or by JavaScript survives.

// DecodeMessage decodes one message of any role, dispatching on "role". A
// role this package does not know decodes to an *OpaqueMessage that
// encodes back to the same bytes.
func DecodeMessage(data []byte) (Message, error) {
	s := fastScan{jsonscan.New(data, nil)}
	if m := s.roleMessage(); m != nil && s.End() {
		return m, nil
	}
	return decodeMessage(data)
}

// decodeMessage is the general path of DecodeMessage.
func decodeMessage(data []byte) (Message, error) {
	var head struct {
		Role *string `json:"role"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode message: %w", err)
	}
	if head.Role == nil {
		return nil, fmt.Errorf("decode message: %w: no role", ErrMessageRole)
	}
	m := messageOfRole(*head.Role)
	if m == nil {
		m = new(OpaqueMessage)
	}
	if err := m.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decode %s message: %w", *head.Role, err)
	}
	return m, nil
}

// checkRole fails unless got is one of want. An empty role is accepted so a
// message built by hand in a test can leave it out.
func checkRole(got string, want ...string) error {
	if got == "" {
		return nil
	}
	for _, w := range want {
		if got == w {
			return nil
		}
	}
	return fmt.Errorf("%w: %q, want %q", ErrMessageRole, got, want[0])
}

// rawValue returns a present raw JSON value in compact form, nil when the
// key was absent. A JSON null stays "null": it was written, so it is
// written again.
func rawValue(r json.RawMessage) []byte {
	if r == nil {
		return nil
	}
	return compactRaw(r)
}

// decodeContent decodes a content value: a JSON string (one text block,
// asString true) or an array of blocks. Absent or null gives nil.
func decodeContent(r json.RawMessage) (blocks []ContentBlock, asString bool, err error) {
	if len(r) == 0 || string(r) == "null" {
		return nil, false, nil
	}
	if r[0] == '"' {
		var s string
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, false, err
		}
		return []ContentBlock{TextBlock(s)}, true, nil
	}
	if err := json.Unmarshal(r, &blocks); err != nil {
		return nil, false, err
	}
	return blocks, false, nil
}

// fileMentionValues are the files of a fileMention message as decoded:
// none (nil) for an empty array, as the original's loader keeps them.
func fileMentionValues(fs []fileMentionJSON) []FileMention {
	var out []FileMention
	for i := range fs {
		out = append(out, fs[i].value())
	}
	return out
}

// UnmarshalJSON implements json.Unmarshaler. It keeps the message whole.
func (m *OpaqueMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.Role == "" {
		return fmt.Errorf("%w: no role", ErrMessageRole)
	}
	*m = OpaqueMessage{role: aux.Role, raw: compactRaw(data)}
	return nil
}
