package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
)

// schemaOptions are the flags of xcsh schema.
type schemaOptions struct {
	format   string
	protocol string
}

var schemaFormats = []string{"json-schema", "typescript", "python"}

// newSchemaCmd is `xcsh schema`: the protocol's schema, generated from the
// Go types that encode it (rpc/schema), or the TypeScript or Python types
// written from that schema.
func newSchemaCmd(stdout io.Writer) *cobra.Command {
	o := &schemaOptions{}
	cmd := &cobra.Command{
		Use:   "schema [--format json-schema|typescript|python] [--protocol rpc|server|acp-ext|extensions]",
		Short: "print the protocol's JSON Schema, or its TypeScript or Python types",
		Long: `xcsh schema prints the schema of a protocol this binary speaks, generated from the Go
types that encode it: JSON Schema 2020-12 (the default), or TypeScript types or Python
TypedDicts written from that schema (the clients' protocol.ts and protocol.py).

Protocols: rpc (--mode rpc: commands, responses, events, host tool and extension UI
frames; the default), server (xcsh serve: the same frames in the server's envelope, and its
own), acp-ext (our _xcsh extensions of ACP), extensions (the extension protocol's methods).

The schema carries the protocol's "version"; the ready frame's schemaHash (--mode rpc and
xcsh serve) is the first 16 hex digits of the SHA-256 of the printed rpc schema, and ACP
initialize's _meta.xcsh.schemaHash that of acp-ext.

Documentation: docs/rpc.md ("Versioning").`,
		Example: `  xcsh schema > rpc.schema.json
  xcsh schema --format typescript > protocol.ts
  xcsh schema --format python --protocol rpc > protocol.py`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSchema(o, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "json-schema", "json-schema, typescript or python")
	f.StringVar(&o.protocol, "protocol", "rpc", strings.Join(rpcschema.Protocols, ", "))
	return cmd
}

func runSchema(o *schemaOptions, stdout io.Writer) error {
	if !slices.Contains(schemaFormats, o.format) {
		return &exitError{2, "Error: --format must be one of " + strings.Join(schemaFormats, ", ") + ", not " + o.format}
	}
	if !slices.Contains(rpcschema.Protocols, o.protocol) {
		return &exitError{2, "Error: --protocol must be one of " + strings.Join(rpcschema.Protocols, ", ") + ", not " + o.protocol}
	}
	var out []byte
	var err error
	if o.format == "json-schema" {
		out, err = rpcschema.JSON(o.protocol)
	} else {
		out, err = rpcschema.Types(o.protocol, o.format)
	}
	if err != nil {
		return &exitError{1, "Error: " + err.Error()}
	}
	_, err = stdout.Write(out)
	return err
}
