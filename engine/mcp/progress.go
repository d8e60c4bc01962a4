package mcp

import (
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/xcsh-go/xcsh/engine"
)

// Progress: every tools/call carries a progress token (MCP's _meta
// progressToken), and the server's notifications/progress for it become
// the call's tool_execution_update frames: the text "<message> (3/10)"
// and details {"progress","total","message"}. A notification handled
// after the call ended is dropped: an update never follows the call's
// end.

// progressCalls are the calls of a server that may still get progress,
// by token.
type progressCalls struct {
	mu   sync.Mutex // held while an update is sent, so none follows forget
	next int64
	byID map[string]func(engine.ToolResult)
}

// track registers a call's update function and returns its token and the
// function that forgets it (after which no update is sent).
func (p *progressCalls) track(update func(engine.ToolResult)) (string, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	token := "xcsh-" + strconv.FormatInt(p.next, 10)
	if p.byID == nil {
		p.byID = map[string]func(engine.ToolResult){}
	}
	p.byID[token] = update
	return token, func() {
		p.mu.Lock()
		delete(p.byID, token)
		p.mu.Unlock()
	}
}

// notify passes a progress notification to its call, if it is still
// running. Secrets are redacted from the message.
func (p *progressCalls) notify(params *mcp.ProgressNotificationParams, red redactor) {
	if params == nil {
		return
	}
	token, ok := params.ProgressToken.(string)
	if !ok {
		return // not one of ours
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	update := p.byID[token]
	if update == nil {
		return
	}
	msg := red.text(params.Message)
	update(progressResult(msg, params.Progress, params.Total))
}

// progressResult is the partial result of a progress notification.
func progressResult(msg string, progress, total float64) engine.ToolResult {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	count := num(progress)
	if total > 0 {
		count += "/" + num(total)
	}
	text := "progress " + count
	if msg != "" {
		text = msg + " (" + count + ")"
	}
	details, _ := engine.MarshalJSON(struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total,omitempty"`
		Message  string  `json:"message,omitempty"`
	}{progress, total, msg})
	return engine.ToolResult{Content: []engine.ContentBlock{engine.TextBlock(text)}, Details: details}
}
