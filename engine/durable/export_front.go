package durable

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/xcsh-go/xcsh/engine"
)

// exportHTML answers the front's export_html from the session's record
// (ExportSession), running or idle: the page is the in-process one
// (FrontOptions.ExportHTML), the answer and the failure's words RPC's
// (docs/rpc.md: {"path": ...}, "Cannot export session: ...").
func (f *front) exportHTML(ctx context.Context, c command, line []byte) {
	if f.o.ExportHTML == nil {
		f.respond(c, nil, fmt.Errorf("Unknown command: %s", c.Type))
		return
	}
	var a struct {
		OutputPath *string `json:"outputPath"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		f.respond(c, nil, err)
		return
	}
	path := ""
	if a.OutputPath != nil {
		path = *a.OutputPath
	}
	x, err := ExportSession(ctx, f.o.Client, f.o.Session)
	if err == nil {
		path, err = f.o.ExportHTML(ctx, path, x)
	}
	if err != nil {
		f.respond(c, nil, fmt.Errorf("Cannot export session: %w", err))
		return
	}
	data, err := engine.MarshalJSON(struct {
		Path string `json:"path"`
	}{path})
	f.respond(c, data, err)
}
