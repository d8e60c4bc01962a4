//go:build !temporal

package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Durable sessions on Temporal (docs/durable.md) are in the binary built
// with -tags temporal: the SDK's gRPC and protobuf would otherwise run
// their package init on every start (measured: +9 ms of init, the cold
// start's first answer from 30 to 40 ms under load). This build keeps the
// flags and the command, and says how to get them.

const noTemporal = "Error: this xcsh was built without Temporal: build it with `go build -tags temporal ./cmd/xcsh` (docs/durable.md)"

func newWorkerCmd(root *cobra.Command, o *options, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:           "worker [flags]",
		Short:         "run durable sessions as Temporal workflows (a binary built with -tags temporal)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error {
			return &exitError{2, noTemporal}
		},
	}
	cmd.Flags().AddFlagSet(root.Flags())
	return cmd
}

func runTemporalFront(context.Context, *options, io.Reader, io.Writer, io.Writer) error {
	return &exitError{2, noTemporal}
}

// temporalBuilt says whether this binary has durable sessions (the
// scenarios' [temporal] condition).
const temporalBuilt = false
