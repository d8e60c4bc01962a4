package durable

import (
	"bytes"
	"encoding/json"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

// DataConverter is the data converter of fronts and workers: Temporal's
// default, but its JSON leaves <, > and & as they are. The default's
// encoding/json escapes them, inside raw JSON too (a tool call's
// arguments, a result's details), and they would reach the host escaped
// where RPC's frames never are (the engine's one encoder does not
// escape). Payloads stay "json/plain": either converter reads what the
// other wrote.
func DataConverter() converter.DataConverter {
	return converter.NewCompositeDataConverter(
		converter.NewNilPayloadConverter(),
		converter.NewByteSlicePayloadConverter(),
		converter.NewProtoJSONPayloadConverter(),
		converter.NewProtoPayloadConverter(),
		plainJSON{converter.NewJSONPayloadConverter()},
	)
}

// plainJSON is the JSON payload converter with HTML escaping off.
type plainJSON struct {
	*converter.JSONPayloadConverter
}

// ToPayload implements converter.PayloadConverter.
func (c plainJSON) ToPayload(value any) (*commonpb.Payload, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, fmt.Errorf("%w: %v", converter.ErrUnableToEncode, err)
	}
	data := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(c.Encoding())}, Data: data}, nil
}
