package engine

import (
	"encoding/json"
	"fmt"

	"github.com/xcsh-go/xcsh/engine/internal/jsonscan"
)

// Decoding is the inverse of the hand encoders in message.go and
// custom_messages.go: for any message those encoders wrote, decoding and
// encoding again gives the same bytes (golden_roundtrip_test.go pins this
// on every message of golden/). So the decoders keep what the encoders
// look at: whether an optional key was present, nil against empty raw
// JSON, content given as a string, and raw JSON values (arguments, details,
// meta, providerPayload) in compact form. Numbers go through float64 and
// appendFloat, which prints the shortest form that parses back to the same
// float, so a cost written by encoding/json or by JavaScript survives.

// DecodeMessage decodes one message of any role, dispatching on "role". A
// role this package does not know decodes to an *OpaqueMessage that
// encodes back to the same bytes.
func DecodeMessage(data []byte) (Message, error) {
	s := fastScan{jsonscan.New(data, nil)}
	if m := s.hotMessage(); m != nil && s.End() {
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
	var m interface {
		Message
		json.Unmarshaler
	}
	switch *head.Role {
	case "user":
		m = new(UserMessage)
	case "developer":
		m = new(DeveloperMessage)
	case "assistant":
		m = new(AssistantMessage)
	case "toolResult":
		m = new(ToolResultMessage)
	case "bashExecution":
		m = new(BashExecutionMessage)
	case "pythonExecution":
		m = new(PythonExecutionMessage)
	case "custom", "hookMessage":
		m = new(CustomMessage)
	case "branchSummary":
		m = new(BranchSummaryMessage)
	case "compactionSummary":
		m = new(CompactionSummaryMessage)
	case "fileMention":
		m = new(FileMentionMessage)
	default:
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

// auxRole is embedded first in each role's aux struct, so every decoder
// reads "role" the same way and unmarshalAux can check it.
type auxRole struct {
	Role string `json:"role"`
}

func (a *auxRole) role() string { return a.Role }

// unmarshalAux decodes data into aux, a pointer to an aux struct that
// embeds auxRole, and checks the role against want (see checkRole).
func unmarshalAux(data []byte, aux interface{ role() string }, want ...string) error {
	if err := json.Unmarshal(data, aux); err != nil {
		return err
	}
	return checkRole(aux.role(), want...)
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

// UnmarshalJSON implements json.Unmarshaler. A block of a type this package
// does not know keeps its bytes and encodes back to them.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var aux struct {
		Type              string          `json:"type"`
		Text              string          `json:"text"`
		TextSignature     string          `json:"textSignature"`
		Thinking          string          `json:"thinking"`
		ThinkingSignature string          `json:"thinkingSignature"`
		Data              string          `json:"data"`
		MimeType          string          `json:"mimeType"`
		ID                string          `json:"id"`
		Name              string          `json:"name"`
		Arguments         json.RawMessage `json:"arguments"`
		ThoughtSignature  string          `json:"thoughtSignature"`
		Intent            string          `json:"intent"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	switch aux.Type {
	case BlockText, BlockThinking, BlockRedactedThinking, BlockImage, BlockToolCall:
		*b = ContentBlock{
			Type:              aux.Type,
			Text:              aux.Text,
			TextSignature:     aux.TextSignature,
			Thinking:          aux.Thinking,
			ThinkingSignature: aux.ThinkingSignature,
			Data:              aux.Data,
			MimeType:          aux.MimeType,
			ID:                aux.ID,
			Name:              aux.Name,
			Arguments:         rawValue(aux.Arguments),
			ThoughtSignature:  aux.ThoughtSignature,
			Intent:            aux.Intent,
		}
	default:
		*b = ContentBlock{Type: aux.Type, raw: compactRaw(data)}
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (u *Usage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Input           int64  `json:"input"`
		Output          int64  `json:"output"`
		CacheRead       int64  `json:"cacheRead"`
		CacheWrite      int64  `json:"cacheWrite"`
		TotalTokens     int64  `json:"totalTokens"`
		PremiumRequests *int64 `json:"premiumRequests"`
		Cost            struct {
			Input      float64 `json:"input"`
			Output     float64 `json:"output"`
			CacheRead  float64 `json:"cacheRead"`
			CacheWrite float64 `json:"cacheWrite"`
			Total      float64 `json:"total"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	*u = Usage{
		Input:           aux.Input,
		Output:          aux.Output,
		CacheRead:       aux.CacheRead,
		CacheWrite:      aux.CacheWrite,
		TotalTokens:     aux.TotalTokens,
		PremiumRequests: aux.PremiumRequests,
		Cost:            Cost(aux.Cost),
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *UserMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Content         json.RawMessage `json:"content"`
		Synthetic       bool            `json:"synthetic"`
		Attribution     *string         `json:"attribution"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "user"); err != nil {
		return err
	}
	content, asString, err := decodeContent(aux.Content)
	if err != nil {
		return err
	}
	*m = UserMessage{
		Content:         content,
		StringContent:   asString,
		Synthetic:       aux.Synthetic,
		ProviderPayload: rawValue(aux.ProviderPayload),
		Timestamp:       aux.Timestamp,
		noAttribution:   aux.Attribution == nil,
	}
	if aux.Attribution != nil {
		m.Attribution = *aux.Attribution
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *DeveloperMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Content         json.RawMessage `json:"content"`
		Attribution     string          `json:"attribution"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "developer"); err != nil {
		return err
	}
	content, asString, err := decodeContent(aux.Content)
	if err != nil {
		return err
	}
	*m = DeveloperMessage{
		Content:         content,
		StringContent:   asString,
		Attribution:     aux.Attribution,
		ProviderPayload: rawValue(aux.ProviderPayload),
		Timestamp:       aux.Timestamp,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *AssistantMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Content         []ContentBlock  `json:"content"`
		API             string          `json:"api"`
		Provider        string          `json:"provider"`
		Model           string          `json:"model"`
		ResponseID      string          `json:"responseId"`
		Usage           Usage           `json:"usage"`
		StopReason      StopReason      `json:"stopReason"`
		ErrorMessage    string          `json:"errorMessage"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
		Duration        *float64        `json:"duration"`
		TTFT            *float64        `json:"ttft"`
	}
	if err := unmarshalAux(data, &aux, "assistant"); err != nil {
		return err
	}
	*m = AssistantMessage{
		Content:         aux.Content,
		API:             aux.API,
		Provider:        aux.Provider,
		Model:           aux.Model,
		ResponseID:      aux.ResponseID,
		Usage:           aux.Usage,
		StopReason:      aux.StopReason,
		ErrorMessage:    aux.ErrorMessage,
		ProviderPayload: rawValue(aux.ProviderPayload),
		Timestamp:       aux.Timestamp,
		Duration:        aux.Duration,
		TTFT:            aux.TTFT,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *ToolResultMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		ToolCallID  string          `json:"toolCallId"`
		ToolName    string          `json:"toolName"`
		Content     []ContentBlock  `json:"content"`
		Details     json.RawMessage `json:"details"`
		IsError     bool            `json:"isError"`
		IsWarning   *bool           `json:"isWarning"`
		Attribution string          `json:"attribution"`
		PrunedAt    int64           `json:"prunedAt"`
		Timestamp   int64           `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "toolResult"); err != nil {
		return err
	}
	*m = ToolResultMessage{
		ToolCallID:  aux.ToolCallID,
		ToolName:    aux.ToolName,
		Content:     aux.Content,
		Details:     rawValue(aux.Details),
		IsError:     aux.IsError,
		IsWarning:   aux.IsWarning,
		Attribution: aux.Attribution,
		PrunedAt:    aux.PrunedAt,
		Timestamp:   aux.Timestamp,
	}
	return nil
}

// execAux holds the keys the two execution roles share; bash keeps
// excludeFromContext as a bool, python as a pointer (see their types).
type execAux struct {
	auxRole
	Output             string          `json:"output"`
	ExitCode           *int            `json:"exitCode"`
	Cancelled          bool            `json:"cancelled"`
	Truncated          bool            `json:"truncated"`
	Meta               json.RawMessage `json:"meta"`
	Timestamp          int64           `json:"timestamp"`
	ExcludeFromContext *bool           `json:"excludeFromContext"`
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *BashExecutionMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		execAux
		Command string `json:"command"`
	}
	if err := unmarshalAux(data, &aux, "bashExecution"); err != nil {
		return err
	}
	*m = BashExecutionMessage{
		Command:            aux.Command,
		Output:             aux.Output,
		ExitCode:           aux.ExitCode,
		Cancelled:          aux.Cancelled,
		Truncated:          aux.Truncated,
		Meta:               rawValue(aux.Meta),
		Timestamp:          aux.Timestamp,
		ExcludeFromContext: aux.ExcludeFromContext != nil && *aux.ExcludeFromContext,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *PythonExecutionMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		execAux
		Code string `json:"code"`
	}
	if err := unmarshalAux(data, &aux, "pythonExecution"); err != nil {
		return err
	}
	*m = PythonExecutionMessage{
		Code:               aux.Code,
		Output:             aux.Output,
		ExitCode:           aux.ExitCode,
		Cancelled:          aux.Cancelled,
		Truncated:          aux.Truncated,
		Meta:               rawValue(aux.Meta),
		Timestamp:          aux.Timestamp,
		ExcludeFromContext: aux.ExcludeFromContext,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler. It accepts the legacy role
// "hookMessage" and remembers it in Legacy.
func (m *CustomMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		CustomType  string          `json:"customType"`
		Content     json.RawMessage `json:"content"`
		Display     bool            `json:"display"`
		Details     json.RawMessage `json:"details"`
		Attribution string          `json:"attribution"`
		Timestamp   int64           `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "custom", "hookMessage"); err != nil {
		return err
	}
	content, asString, err := decodeContent(aux.Content)
	if err != nil {
		return err
	}
	*m = CustomMessage{
		Legacy:        aux.Role == "hookMessage",
		CustomType:    aux.CustomType,
		Content:       content,
		StringContent: asString,
		Display:       aux.Display,
		Details:       rawValue(aux.Details),
		Attribution:   aux.Attribution,
		Timestamp:     aux.Timestamp,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *BranchSummaryMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Summary   string `json:"summary"`
		FromID    string `json:"fromId"`
		Timestamp int64  `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "branchSummary"); err != nil {
		return err
	}
	*m = BranchSummaryMessage{Summary: aux.Summary, FromID: aux.FromID, Timestamp: aux.Timestamp}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *CompactionSummaryMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Summary         string          `json:"summary"`
		ShortSummary    string          `json:"shortSummary"`
		TokensBefore    int64           `json:"tokensBefore"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "compactionSummary"); err != nil {
		return err
	}
	*m = CompactionSummaryMessage{
		Summary:         aux.Summary,
		ShortSummary:    aux.ShortSummary,
		TokensBefore:    aux.TokensBefore,
		ProviderPayload: rawValue(aux.ProviderPayload),
		Timestamp:       aux.Timestamp,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *FileMentionMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		auxRole
		Files []struct {
			Path          string        `json:"path"`
			Content       string        `json:"content"`
			LineCount     *int64        `json:"lineCount"`
			ByteSize      *int64        `json:"byteSize"`
			SkippedReason string        `json:"skippedReason"`
			Image         *ContentBlock `json:"image"`
		} `json:"files"`
		Timestamp int64 `json:"timestamp"`
	}
	if err := unmarshalAux(data, &aux, "fileMention"); err != nil {
		return err
	}
	*m = FileMentionMessage{Timestamp: aux.Timestamp}
	for _, f := range aux.Files {
		m.Files = append(m.Files, FileMention(f))
	}
	return nil
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
