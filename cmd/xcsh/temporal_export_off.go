//go:build !temporal

package main

import (
	"context"
	"io"
)

// runTemporalExport is `xcsh export --temporal`: in the binary built with
// -tags temporal (temporal_export.go); this one says how to get it.
func runTemporalExport(context.Context, *options, *exportOptions, string, io.Writer, io.Writer) error {
	return &exitError{2, noTemporal}
}
