//go:build temporal

package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/xcsh-go/xcsh/engine/durable"
	"github.com/xcsh-go/xcsh/engine/export"
)

// exportTimeout bounds reading a durable session's record: the queries
// wait for a worker of the task queue, and an export with none running
// should say so rather than hang.
const exportTimeout = time.Minute

// runTemporalExport is `xcsh export --temporal ADDRESS --session ID`: the
// durable session's record, from every run of its workflow, as a session
// file (the default), an HTML page or an ATIF trajectory
// (docs/durable.md, "Exporting a session").
func runTemporalExport(ctx context.Context, o *options, eo *exportOptions, session string, stdout, stderr io.Writer) error {
	if err := eo.checkFormat(true); err != nil {
		return err
	}
	c, err := temporalClient(&o.temporal, stderr)
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	defer c.Close()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, exportTimeout)
	defer cancel()
	x, err := durable.ExportSession(ctx, c, session)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return &exitError{1, "Error: no answer from session " + session + " in " + exportTimeout.String() + ": is a worker of task queue " + o.temporal.taskQueue + " running?"}
		}
		code := 1
		if errors.Is(err, durable.ErrNoSession) {
			code = 2
		}
		return &exitError{code, "Error: " + err.Error()}
	}
	return eo.write(stdout, func(w io.Writer) error {
		switch eo.format {
		case "html":
			return export.WriteHTML(w, durableExportData(x))
		case "atif":
			return export.WriteATIF(w, durableExportData(x), export.ATIFOptions{AgentVersion: version, AppendOnly: eo.appendOnly})
		}
		return x.WriteSessionFile(w)
	})
}

// durableExportData is what the page and the trajectory show of a durable
// session: it has no file.
func durableExportData(x *durable.Exported) export.Data {
	d := export.Data{SessionID: x.SessionID, Cwd: x.Cwd, Created: x.Created, Entries: x.Entries, Leaf: x.Leaf,
		SystemPrompt: x.SystemPrompt}
	for _, t := range x.Tools {
		d.Tools = append(d.Tools, export.Tool{Name: t.Name, Description: t.Description})
	}
	return d
}

// durableExportHTML answers a durable front's export_html: the page at
// path, by default xcsh-session-<session id>.html in the front's
// directory (in process: after the session file's name).
func durableExportHTML(_ context.Context, path string, x *durable.Exported) (string, error) {
	if path == "" {
		path = export.DefaultPath(x.SessionID)
	}
	return path, export.WriteFile(path, durableExportData(x))
}
