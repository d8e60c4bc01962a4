package openai

import "encoding/json"

// The types below are what the Responses adapter decodes each SSE event
// into, in place of the SDK's ResponseStreamEventUnion, for the reason
// wire.go gives for chat chunks: the SDK's union carries every field of
// every event type and decodes through its reflective layer, several
// times the CPU of these per delta (BenchmarkResponsesStream5000Deltas
// and its SDK variant). The SDK still builds and sends the request,
// reports HTTP errors and frames the SSE stream.

// respEvent is one event of a Responses stream: the union of the fields
// of the event types the adapter reads (the "type" field says which).
type respEvent struct {
	Type         string `json:"type"`
	OutputIndex  int64  `json:"output_index"`
	SummaryIndex int64  `json:"summary_index"` // reasoning_summary_*
	ContentIndex int64  `json:"content_index"` // reasoning_text.delta, output_text.delta
	Delta        string `json:"delta"`
	// Arguments is function_call_arguments.done's whole arguments string.
	Arguments *string `json:"arguments"`
	// Item is output_item.added's and output_item.done's item, kept raw:
	// a reasoning item goes back verbatim on the next turn.
	Item json.RawMessage `json:"item"`
	// Response is the response object of response.created, .completed,
	// .incomplete, .failed (and Codex's response.done).
	Response *respResponse `json:"response"`
	// The error event's fields ({"type":"error","code":...,"message":...}).
	Code    lenientString `json:"code"`
	Message string        `json:"message"`
}

// respItem is what the adapter reads of an output item.
type respItem struct {
	Type      string `json:"type"` // reasoning, message, function_call, or another the adapter ignores
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Phase     string `json:"phase"` // message: commentary or final_answer (GPT-5 Codex models)
}

// respResponse is what the adapter reads of a response object.
type respResponse struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Error  *struct {
		Code    lenientString `json:"code"`
		Message string        `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *respUsage `json:"usage"`
}

type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int64 `json:"total_tokens"`
}

// textSignature is a text block's signature, pi's TextSignatureV1: the
// message item's id (and phase), which the next request sends back.
type textSignature struct {
	V     int    `json:"v"`
	ID    string `json:"id"`
	Phase string `json:"phase,omitempty"`
}

func encodeTextSignature(id, phase string) string {
	if id == "" {
		return ""
	}
	b, _ := json.Marshal(textSignature{V: 1, ID: id, Phase: phase})
	return string(b)
}

// parseTextSignature reads a text block's signature: pi's v1 object, or a
// bare item id (pi's older sessions).
func parseTextSignature(sig string) (id, phase string) {
	if sig == "" {
		return "", ""
	}
	if sig[0] == '{' {
		var s textSignature
		if json.Unmarshal([]byte(sig), &s) == nil && s.V == 1 && s.ID != "" {
			if s.Phase != "commentary" && s.Phase != "final_answer" {
				s.Phase = ""
			}
			return s.ID, s.Phase
		}
	}
	return sig, ""
}
