package export

import (
	"context"

	"github.com/xcsh-go/xcsh/engine"
)

// Exporter is the engine's Exporter: the session's page written to a file.
type Exporter struct{}

var _ engine.Exporter = Exporter{}

// Export implements engine.Exporter: the page for snap at path, or at
// DefaultPath of the session file when path is "". It returns the path as
// given (relative paths stay relative, as the original answers them).
func (Exporter) Export(_ context.Context, path string, snap engine.ExportSnapshot) (string, error) {
	if path == "" {
		path = DefaultPath(snap.SessionFile)
	}
	d := Data{SessionID: snap.SessionID, SessionFile: snap.SessionFile, Title: snap.Name,
		Entries: snap.Entries, Leaf: snap.Leaf, SystemPrompt: snap.SystemPrompt}
	for _, t := range snap.Tools {
		d.Tools = append(d.Tools, Tool{Name: t.Name, Description: t.Description})
	}
	return path, WriteFile(path, d)
}
