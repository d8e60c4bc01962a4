package mcp

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/xcsh-go/xcsh/engine"
)

func TestProgressUpdates(t *testing.T) {
	t.Parallel()
	var p progressCalls
	var got []string
	token, forget := p.track(func(r engine.ToolResult) { got = append(got, r.Content[0].Text+" "+string(r.Details)) })
	red := newRedactor([]string{"s3cret-value"})
	p.notify(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1, Total: 4, Message: "copying s3cret-value"}, red)
	p.notify(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 2.5}, red)
	p.notify(&mcp.ProgressNotificationParams{ProgressToken: "other", Progress: 3}, red) // not this call's
	p.notify(&mcp.ProgressNotificationParams{ProgressToken: 7, Progress: 3}, red)       // not one of ours
	p.notify(nil, red)
	forget()
	p.notify(&mcp.ProgressNotificationParams{ProgressToken: token, Progress: 4, Total: 4}, red) // after the end: dropped
	want := []string{
		`copying *** (1/4) {"progress":1,"total":4,"message":"copying ***"}`,
		`progress 2.5 {"progress":2.5}`,
	}
	if len(got) != len(want) {
		t.Fatalf("updates %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("update %d: %s, want %s", i, got[i], want[i])
		}
	}
	if t2, _ := p.track(func(engine.ToolResult) {}); t2 == token {
		t.Error("tokens repeat")
	}
}
