package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
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
	s := jscan{b: data}
	if m := s.hotMessage(); m != nil && !s.fail {
		if s.ws(); s.i == len(s.b) {
			return m, nil
		}
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
		Role            string          `json:"role"`
		Content         json.RawMessage `json:"content"`
		Synthetic       bool            `json:"synthetic"`
		Attribution     *string         `json:"attribution"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "user"); err != nil {
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
		Role            string          `json:"role"`
		Content         json.RawMessage `json:"content"`
		Attribution     string          `json:"attribution"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "developer"); err != nil {
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
		Role            string          `json:"role"`
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
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "assistant"); err != nil {
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
		Role        string          `json:"role"`
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
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "toolResult"); err != nil {
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

// UnmarshalJSON implements json.Unmarshaler.
func (m *BashExecutionMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Role               string          `json:"role"`
		Command            string          `json:"command"`
		Output             string          `json:"output"`
		ExitCode           *int            `json:"exitCode"`
		Cancelled          bool            `json:"cancelled"`
		Truncated          bool            `json:"truncated"`
		Meta               json.RawMessage `json:"meta"`
		Timestamp          int64           `json:"timestamp"`
		ExcludeFromContext bool            `json:"excludeFromContext"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "bashExecution"); err != nil {
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
		ExcludeFromContext: aux.ExcludeFromContext,
	}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *PythonExecutionMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Role               string          `json:"role"`
		Code               string          `json:"code"`
		Output             string          `json:"output"`
		ExitCode           *int            `json:"exitCode"`
		Cancelled          bool            `json:"cancelled"`
		Truncated          bool            `json:"truncated"`
		Meta               json.RawMessage `json:"meta"`
		Timestamp          int64           `json:"timestamp"`
		ExcludeFromContext *bool           `json:"excludeFromContext"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "pythonExecution"); err != nil {
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
		Role        string          `json:"role"`
		CustomType  string          `json:"customType"`
		Content     json.RawMessage `json:"content"`
		Display     bool            `json:"display"`
		Details     json.RawMessage `json:"details"`
		Attribution string          `json:"attribution"`
		Timestamp   int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "custom", "hookMessage"); err != nil {
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
		Role      string `json:"role"`
		Summary   string `json:"summary"`
		FromID    string `json:"fromId"`
		Timestamp int64  `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "branchSummary"); err != nil {
		return err
	}
	*m = BranchSummaryMessage{Summary: aux.Summary, FromID: aux.FromID, Timestamp: aux.Timestamp}
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (m *CompactionSummaryMessage) UnmarshalJSON(data []byte) error {
	var aux struct {
		Role            string          `json:"role"`
		Summary         string          `json:"summary"`
		ShortSummary    string          `json:"shortSummary"`
		TokensBefore    int64           `json:"tokensBefore"`
		ProviderPayload json.RawMessage `json:"providerPayload"`
		Timestamp       int64           `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "compactionSummary"); err != nil {
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
		Role  string `json:"role"`
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
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if err := checkRole(aux.Role, "fileMention"); err != nil {
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

// The fast decoder below reads the messages a session file is made of
// (user, assistant and toolResult, with their blocks and usage) in one
// pass over the line, straight into the final structs. The general
// decoders above call json.Unmarshal inside json.Unmarshal, so every
// nested value is validated and scanned again at each level and each
// level allocates its aux struct; on a 100k-entry session that was most of
// the load time and of the garbage.
//
// It is strict and conservative: it accepts only valid JSON (it validates
// as it reads) and only the keys and value types the general decoders
// read; anything else (an unknown or duplicated key, a null, a block type
// it does not know, an escaped key, deep nesting) makes it give up, and
// the caller takes the general path, which decodes the line or reports why
// it cannot. So whatever it accepts decodes to what the general path
// gives, which TestFastDecodeAgrees checks.

// jscan reads one JSON text. Failure is sticky: fail is set, the position
// jumps to the end, and every later read returns a zero value, so callers
// check once at the end.
type jscan struct {
	b     []byte
	i     int
	depth int
	fail  bool
	// strs interns short strings that repeat across a session (api,
	// provider, model, stop reason, tool name); nil interns nothing.
	strs map[string]string
}

// scanMaxDepth bounds the nesting of raw values the fast path skips; a
// deeper value takes the general path, which has its own limit.
const scanMaxDepth = 512

func (s *jscan) bad() {
	s.fail = true
	s.i = len(s.b)
}

// ws skips whitespace and reports whether there was any.
func (s *jscan) ws() bool {
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return s.i > start
		}
	}
	return s.i > start
}

func (s *jscan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// open consumes c (after whitespace) and reports whether it was there;
// close does the same without failing when it is not.
func (s *jscan) open(c byte) bool {
	s.ws()
	if s.peek() != c {
		s.bad()
		return false
	}
	s.i++
	return true
}

func (s *jscan) close(c byte) bool {
	s.ws()
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// next reads the separator after a member: true after a comma (another
// member follows), false after the closing c or on failure.
func (s *jscan) next(c byte) bool {
	s.ws()
	switch s.peek() {
	case ',':
		s.i++
		return true
	case c:
		s.i++
		return false
	}
	s.bad()
	return false
}

// key reads `"key":`. A key with escapes or non-ASCII bytes fails: the
// general path matches keys as encoding/json does.
func (s *jscan) key() []byte {
	body, esc, hi := s.strBody()
	if esc || hi {
		s.bad()
		return nil
	}
	if !s.open(':') {
		return nil
	}
	return body
}

// once fails when bit is already in seen: a duplicated key takes the
// general path (encoding/json merges some duplicates rather than replacing).
func (s *jscan) once(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		s.bad()
	}
	*seen |= bit
}

// strPlain marks the bytes a string body holds as they are: printable
// ASCII but the quote and the backslash. strBody skips runs of them in a
// tight loop; string bodies are most of a session's bytes.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strBody reads a string and returns the bytes between its quotes,
// validated; esc reports a backslash and hi a byte >= 0x80.
func (s *jscan) strBody() (body []byte, esc, hi bool) {
	s.ws()
	if s.peek() != '"' {
		s.bad()
		return nil, false, false
	}
	s.i++
	start := s.i
	b := s.b
	for i := s.i; ; {
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return b[start:i], esc, hi
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.bad()
				return nil, false, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					s.bad()
					return nil, false, false
				}
				i += 6
			default:
				s.bad()
				return nil, false, false
			}
		case c < 0x20:
			s.bad()
			return nil, false, false
		default: // >= 0x80; checked as UTF-8 when converted
			hi = true
			i++
		}
	}
	s.bad()
	return nil, false, false
}

// str reads a string value.
func (s *jscan) str() string { return s.text(s.strBody()) }

// text returns the value of a string body strBody read.
func (s *jscan) text(body []byte, esc, hi bool) string {
	if s.fail {
		return ""
	}
	if !esc && (!hi || utf8.Valid(body)) {
		return string(body)
	}
	return unquote(body)
}

// istr reads a string value that is likely to repeat, interned.
func (s *jscan) istr() string {
	body, esc, hi := s.strBody()
	if s.fail {
		return ""
	}
	if esc || hi || s.strs == nil || len(body) > 64 {
		return s.text(body, esc, hi)
	}
	if v, ok := s.strs[string(body)]; ok {
		return v
	}
	v := string(body)
	if len(s.strs) < 256 {
		s.strs[v] = v
	}
	return v
}

// hex4 returns the value of four hex digits, -1 if they are not.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquote decodes a validated string body as encoding/json does: escapes
// resolved, a lone or broken surrogate and invalid UTF-8 become U+FFFD.
func unquote(b []byte) string {
	out := make([]byte, 0, len(b)+utf8.UTFMax)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			switch b[i+1] {
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if d := utf16.DecodeRune(r, hex4(b[i+2:])); d != unicode.ReplacementChar {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
				continue
			default: // '"', '\\', '/'
				out = append(out, b[i+1])
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[i:i+size]...)
			}
			i += size
		}
	}
	return string(out)
}

// num reads a number and returns its text.
func (s *jscan) num() []byte {
	s.ws()
	b, i := s.b, s.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		s.bad()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.bad()
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.bad()
			return nil
		}
	}
	s.i = i
	return b[start:i]
}

// int reads an integer as encoding/json does into an int64 (a fraction or
// exponent is an error there, so a failure here).
func (s *jscan) int() int64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseInt(string(t), 10, 64)
	if err != nil {
		s.bad()
	}
	return v
}

func (s *jscan) float() float64 {
	t := s.num()
	if s.fail {
		return 0
	}
	v, err := strconv.ParseFloat(string(t), 64)
	if err != nil {
		s.bad()
	}
	return v
}

func (s *jscan) bool() bool {
	s.ws()
	switch {
	case bytes.HasPrefix(s.b[s.i:], []byte("true")):
		s.i += 4
		return true
	case bytes.HasPrefix(s.b[s.i:], []byte("false")):
		s.i += 5
		return false
	}
	s.bad()
	return false
}

// raw reads any value and returns it compact, in its own memory (the line
// is not retained), as rawValue(compactRaw(...)) would.
func (s *jscan) raw() []byte {
	s.ws()
	start := s.i
	if s.skip() {
		if s.fail {
			return nil
		}
		v := compactRaw(s.b[start:s.i])
		if v == nil {
			s.bad()
		}
		return v
	}
	if s.fail {
		return nil
	}
	return bytes.Clone(s.b[start:s.i])
}

// skip validates the value at s.i (no leading whitespace) and moves past
// it; spaced reports whitespace inside it, which compacting removes.
func (s *jscan) skip() (spaced bool) {
	switch c := s.peek(); c {
	case '"':
		s.strBody()
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if s.depth++; s.depth > scanMaxDepth {
			s.bad()
			return false
		}
		s.i++
		spaced = s.ws()
		if s.peek() == end {
			s.i++
		} else {
			for !s.fail {
				if c == '{' {
					if s.peek() != '"' {
						s.bad()
						break
					}
					s.strBody()
					spaced = s.ws() || spaced
					if s.peek() != ':' {
						s.bad()
						break
					}
					s.i++
					spaced = s.ws() || spaced
				}
				spaced = s.skip() || spaced
				spaced = s.ws() || spaced
				if s.peek() == ',' {
					s.i++
					spaced = s.ws() || spaced
					continue
				}
				if s.peek() == end {
					s.i++
					break
				}
				s.bad()
			}
		}
		s.depth--
	case 't', 'f', 'n':
		lit := "null"
		switch c {
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		}
		if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.bad()
			return false
		}
		s.i += len(lit)
	default:
		s.num()
	}
	return spaced
}

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
