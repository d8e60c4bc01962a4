package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Summary generation (agent-core.md §6.4): the conversation is serialised
// as plain text (so the model reads it instead of continuing it) and the
// current model, through its real adapter, writes a structured summary,
// merged with the previous one when there is one. A conversation too long
// for the window beside the summary budget is summarised in chunks, each
// merged into the summary so far with the same iterative prompt. A split
// turn's first part gets its own short summary, and the kept part a 2–3
// sentence description (shortSummary). The file lists close the summary.

const summarySystemPrompt = "You are a context summarization assistant. You read a conversation between a user and an AI coding assistant, " +
	"and you write a structured summary that another model will use to continue the work. " +
	"Do not continue the conversation and do not answer any question in it. Output only the structured summary."

const summaryFormat = `Use this format:

## Goal
[What the user is trying to accomplish]

## Constraints & Preferences
- [Requirements and preferences the user stated]

## Progress
### Done
- [x] [Completed work]

### In Progress
- [ ] [Current work]

### Blocked
- [Open problems, if any]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What should happen next]

## Critical Context
- [Data, examples or references needed to continue]

## Additional Notes
[Anything else worth keeping]

Keep every section short. Preserve exact file paths, function and variable names, commands and error messages, and any question to the user that is still open.`

const summaryPrompt = "The conversation above is to be summarised. Write a structured checkpoint summary that another model will use to continue the work.\n\n" + summaryFormat

const summaryUpdatePrompt = "The conversation above continues the work described in <previous-summary>. Merge it into that summary: keep everything that still holds, " +
	"add the new progress, decisions and context, move finished items from In Progress to Done, and update Next Steps.\n\n" + summaryFormat

const turnPrefixPrompt = `The conversation above is the first part of a turn whose end is kept verbatim. Summarise it so that the kept end makes sense.

Use this format:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [What was done so far in this turn]

## Context for Suffix
- [What the rest of the turn needs to know: files, results, decisions]

Preserve exact file paths, names, commands and error messages.`

const shortSummaryPrompt = "Write a 2-3 sentence summary, in the first person, of the work in the conversation above, " +
	"in the style of a pull request description (\"I fixed …\"). Output only the summary."

// summaryToolResultCap bounds a tool result in the serialised
// conversation.
const summaryToolResultCap = 2000

// serializeConversation writes messages as the plain text a summary
// prompt quotes.
func serializeConversation(msgs []Message) string {
	var b strings.Builder
	for _, m := range ConvertToLLM(msgs) {
		part := serializeMessage(m)
		if part == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(part)
	}
	return b.String()
}

func serializeMessage(m Message) string {
	text := func(bs []ContentBlock) string {
		var parts []string
		for _, b := range bs {
			if b.Type == BlockText {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	switch v := m.(type) {
	case *UserMessage:
		if t := text(v.Content); t != "" {
			return "[User]: " + t
		}
	case *DeveloperMessage:
		if t := text(v.Content); t != "" {
			return "[User]: " + t
		}
	case *AssistantMessage:
		var parts, calls []string
		for _, b := range v.Content {
			switch b.Type {
			case BlockThinking:
				if b.Thinking != "" {
					parts = append(parts, "[Assistant thinking]: "+b.Thinking)
				}
			case BlockText:
				if b.Text != "" {
					parts = append(parts, "[Assistant]: "+b.Text)
				}
			case BlockToolCall:
				calls = append(calls, b.Name+"("+callArgs(b.Arguments)+")")
			}
		}
		if len(calls) > 0 {
			parts = append(parts, "[Assistant tool calls]: "+strings.Join(calls, "; "))
		}
		return strings.Join(parts, "\n\n")
	case *ToolResultMessage:
		t := text(v.Content)
		if len(t) > summaryToolResultCap {
			cut := validPrefix(t, summaryToolResultCap)
			t = cut + fmt.Sprintf("\n\n[... %d more characters truncated]", len(t)-len(cut))
		}
		if t != "" {
			return "[Tool result]: " + t
		}
	}
	return ""
}

// validPrefix cuts s to at most n bytes without splitting a character.
func validPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// callArgs writes a tool call's arguments as k=<json>, in their order.
func callArgs(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return string(raw)
	}
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		var c bytes.Buffer
		if json.Compact(&c, v) != nil {
			c.Reset()
			c.Write(v)
		}
		parts = append(parts, fmt.Sprintf("%v=%s", k, c.Bytes()))
	}
	return strings.Join(parts, ", ")
}

// summaryJob is one compaction's summary work: the model and budgets it
// runs with, and what the hooks added.
type summaryJob struct {
	// provider, clock and retryBase make the calls and time their
	// retries: the session's, or those a durable session's activity has.
	provider  Provider
	clock     Clock
	retryBase time.Duration
	model     Model
	level     ThinkingLevel
	reserve   int64
	custom    string   // the host's customInstructions
	extra     []string // additional context from hooks
}

// summarize writes the summary of prep: the history (in chunks when it
// does not fit), the split turn's prefix, the short summary and the file
// lists.
func (j *summaryJob) summarize(ctx context.Context, prep *CompactionPreparation) (summary, short string, err error) {
	history := prep.PreviousSummary
	if len(prep.ToSummarize) > 0 {
		for _, chunk := range j.chunks(prep) {
			history, err = j.call(ctx, j.historyPrompt(chunk, history), j.reserve*8/10)
			if err != nil {
				return "", "", err
			}
		}
	} else if history == "" {
		history = "No prior history."
	}
	summary = history
	if len(prep.TurnPrefix) > 0 {
		prefix, err := j.call(ctx, conversationPrompt(serializeConversation(prep.TurnPrefix), "", nil, turnPrefixPrompt, ""), j.reserve/2)
		if err != nil {
			return "", "", err
		}
		summary = history + "\n\n---\n\n**Turn Context (split turn):**\n\n" + prefix
	}
	if len(prep.Recent) > 0 {
		budget := min(512, j.reserve/5)
		recent := j.fitTail(serializeConversation(prep.Recent), budget, len(shortSummaryPrompt), prep.Ratio)
		short, err = j.call(ctx, conversationPrompt(recent, "", nil, shortSummaryPrompt, ""), budget)
		if err != nil {
			return "", "", err
		}
	}
	return withFileLists(summary, prep.ReadFiles, prep.ModifiedFiles), short, nil
}

func (j *summaryJob) historyPrompt(conversation, previous string) string {
	instr := summaryPrompt
	if previous != "" {
		instr = summaryUpdatePrompt
	}
	return conversationPrompt(conversation, previous, j.extra, instr, j.custom)
}

// conversationPrompt assembles a summary prompt (§6.4).
func conversationPrompt(conversation, previous string, extra []string, instructions, custom string) string {
	var b strings.Builder
	b.WriteString("<conversation>\n")
	b.WriteString(conversation)
	b.WriteString("\n</conversation>\n\n")
	if previous != "" {
		b.WriteString("<previous-summary>\n")
		b.WriteString(previous)
		b.WriteString("\n</previous-summary>\n\n")
	}
	if len(extra) > 0 {
		b.WriteString("<additional-context>\n")
		for _, e := range extra {
			b.WriteString("- ")
			b.WriteString(e)
			b.WriteByte('\n')
		}
		b.WriteString("</additional-context>\n\n")
	}
	b.WriteString(instructions)
	if custom != "" {
		b.WriteString("\n\nAdditional focus: ")
		b.WriteString(custom)
	}
	return b.String()
}

// chunks cuts the conversation to summarise into parts that each fit the
// window beside the summary budget and the prompt: one part when it fits
// with the previous summary as it is (or the window is unknown), else
// parts that also leave room for the summary so far (which grows to at
// most the output budget). A part is never smaller than
// minChunkTokens; a message larger than a part is cut.
//
// At most maxSummaryChunks parts are made: the conversation is walked
// from its newest message back, and what would need more parts is left
// out, with a note at the head of the first part saying how much. So the
// work of one compaction is bounded (a 1 GiB session took ~2,500
// sequential calls), and so is its memory: the messages left out are
// never serialised, and the whole is never built when it does not fit.
func (j *summaryJob) chunks(prep *CompactionPreparation) []string {
	window := int64(j.model.ContextWindow)
	if window <= 0 {
		return []string{serializeConversation(prep.ToSummarize)}
	}
	// Estimates (chars/4) become real tokens through the ratio.
	ratio := max(prep.Ratio, 1)
	real := func(chars int) int64 { return int64(float64(chars) / 4 * ratio) }
	out := j.reserve * 8 / 10
	overhead := len(summarySystemPrompt) + len(summaryUpdatePrompt) + len(j.custom) + 256
	for _, e := range j.extra {
		overhead += len(e) + 4
	}
	roomTokens := window - out - max(out, real(len(prep.PreviousSummary))) - real(overhead)
	limit := int(float64(roomTokens) * 4 / ratio)
	limit = max(limit, minChunkTokens*4)

	// From the newest message back: the parts, and how many chunks they
	// need packed greedily from this end (greedy packing gives the fewest
	// chunks from either end, so packing the same parts forward below
	// needs no more).
	msgs := ConvertToLLM(prep.ToSummarize)
	var parts []string // newest first
	total, start := 0, 0
	n, fill := 0, 0 // chunks so far, and the size of the newest-first one being filled
	fitsWhole := true
	for i := len(msgs) - 1; i >= 0; i-- {
		part := serializeMessage(msgs[i])
		if part == "" {
			continue
		}
		if len(parts) > 0 {
			total += 2
		}
		total += len(part)
		if fitsWhole && real(total+overhead+len(prep.PreviousSummary)) > window-out {
			fitsWhole = false
		}
		if len(part) > limit {
			part = validPrefix(part, limit-64) + "\n[... message cut to fit the context window]"
		}
		switch {
		case n == 0:
			n, fill = 1, len(part)
		case fill+2+len(part) > limit:
			n, fill = n+1, len(part)
		default:
			fill += 2 + len(part)
		}
		if n > maxSummaryChunks {
			start = i + 1
			break
		}
		parts = append(parts, part)
	}
	if fitsWhole && start == 0 {
		return []string{serializeConversation(prep.ToSummarize)}
	}
	var chunks []string
	var cur strings.Builder
	for k := len(parts) - 1; k >= 0; k-- {
		part := parts[k]
		if cur.Len() > 0 && cur.Len()+2+len(part) > limit {
			chunks = append(chunks, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(part)
	}
	if cur.Len() > 0 {
		chunks = append(chunks, cur.String())
	}
	if start > 0 && len(chunks) > 0 {
		// A line over the part's size at most: the overhead has room.
		chunks[0] = fmt.Sprintf("[... the %d earliest messages (about %d tokens) are left out: one compaction summarises at most %d parts of a conversation, the newest]\n\n",
			start, estimateAll(msgs[:start]), maxSummaryChunks) + chunks[0]
	}
	return chunks
}

// maxSummaryChunks bounds the history requests of one compaction (see
// chunks): eight parts of the window, the newest of the conversation.
const maxSummaryChunks = 8

// estimateAll is the estimated tokens of msgs.
func estimateAll(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		n += estimateTokens(m)
	}
	return n
}

// fitTail keeps the end of a serialised conversation that fits the window
// beside an answer of out tokens and instructions of instr characters (the
// short summary describes what was kept, the latest part matters most).
func (j *summaryJob) fitTail(text string, out int64, instr int, ratio float64) string {
	window := int64(j.model.ContextWindow)
	if window <= 0 {
		return text
	}
	ratio = max(ratio, 1)
	room := window - out - int64(float64(len(summarySystemPrompt)+instr+256)/4*ratio)
	limit := max(int(float64(room)*4/ratio), minChunkTokens*4)
	if len(text) <= limit {
		return text
	}
	cut := len(text) - limit + 64
	for cut < len(text) && text[cut]&0xC0 == 0x80 {
		cut++
	}
	return "[... earlier messages omitted to fit the context window]\n" + text[cut:]
}

// minChunkTokens is the smallest part a conversation is cut into for
// summarising: below it a window is too small to summarise anything, and
// a part that overflows fails like any request.
const minChunkTokens = 256

// call sends one summary request and returns the text of the answer,
// retrying a transient failure (on the session's clock) up to
// DefaultMaxRetries times.
func (j *summaryJob) call(ctx context.Context, prompt string, maxTokens int64) (string, error) {
	m := j.model
	if maxTokens > 0 && (m.MaxTokens <= 0 || int64(m.MaxTokens) > maxTokens) {
		m.MaxTokens = int(maxTokens)
	}
	req := &Request{
		Model:         m,
		SystemPrompt:  summarySystemPrompt,
		Messages:      []Message{&UserMessage{Content: []ContentBlock{TextBlock(prompt)}, Attribution: "user", Timestamp: j.clock.NowMillis()}},
		ThinkingLevel: j.level,
	}
	for attempt := 1; ; attempt++ {
		var text strings.Builder
		err := j.provider.Stream(ctx, req, func(ev StreamEvent) error {
			if ev.Kind == StreamTextDelta {
				text.WriteString(ev.Delta)
			}
			return nil
		})
		if err == nil {
			return strings.TrimSpace(text.String()), nil
		}
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		msg := &AssistantMessage{StopReason: StopError, ErrorMessage: err.Error()}
		if attempt > DefaultMaxRetries || !retryable(msg, err) {
			return "", err
		}
		delay := j.retryBase << (attempt - 1)
		if ra := retryAfter(j.clock, msg, err); ra > delay {
			delay = ra
		}
		if delay > 30*time.Second {
			return "", err
		}
		if err := Sleep(ctx, j.clock, delay); err != nil {
			return "", err
		}
	}
}

// maxListedFiles bounds each file list at the end of a summary.
const maxListedFiles = 20

// withFileLists replaces the <read-files> and <modified-files> blocks at
// the end of summary with the lists given (none for an empty list).
func withFileLists(summary string, read, modified []string) string {
	summary = strings.TrimRight(stripBlock(stripBlock(summary, "modified-files"), "read-files"), "\n")
	block := func(tag string, paths []string) string {
		if len(paths) == 0 {
			return ""
		}
		shown := paths
		if len(shown) > maxListedFiles {
			shown = shown[:maxListedFiles]
		}
		s := "\n\n<" + tag + ">\n" + strings.Join(shown, "\n")
		if n := len(paths) - len(shown); n > 0 {
			s += fmt.Sprintf("\n… (%d more files omitted)", n)
		}
		return s + "\n</" + tag + ">"
	}
	return summary + block("read-files", read) + block("modified-files", modified)
}

// stripBlock removes a trailing <tag>…</tag> block (and what follows it
// that is only white space).
func stripBlock(s, tag string) string {
	t := strings.TrimRight(s, " \n")
	if !strings.HasSuffix(t, "</"+tag+">") {
		return s
	}
	i := strings.LastIndex(t, "<"+tag+">")
	if i < 0 {
		return s
	}
	return strings.TrimRight(t[:i], " \n")
}
