package engine

import "context"

// Validator checks tool schemas and a tool call's arguments against them.
// Implementations must be safe for concurrent use.
type Validator interface {
	// Check says why schema cannot be a tool's parameters (nil when it can):
	// it is not a JSON Schema, or it refers to a document outside itself,
	// which a validator must never load (a tool's schema comes from a host,
	// an extension or an MCP server, and loading what it names would open
	// files or URLs of their choosing). Every path that registers tools
	// from outside the binary calls it (SetHostTools, SetToolGroup, the
	// extension host), so such a tool is refused when it is registered,
	// not when the model calls it. The built-in tools' schemas need none.
	Check(schema []byte) error
	// Validate returns one line per problem of args, formatted "<path>:
	// <message>" (nil when the arguments are valid). A schema that cannot
	// be compiled is a problem too.
	Validate(schema, args []byte) []string
}

// Shell runs a user shell command for the RPC bash command: combined
// stdout and stderr, the last 50 KB kept, the whole process group killed
// when ctx is cancelled or the timeout passes. It returns an error only for
// infrastructure failures (the shell could not start).
type Shell interface {
	Exec(ctx context.Context, command string) (BashResult, error)
}

// BashResult is the data of the RPC bash command, in wire key order.
// ExitCode is nil when the command was cancelled or timed out.
type BashResult struct {
	ExitCode    *int   `json:"exitCode,omitempty"`
	Cancelled   bool   `json:"cancelled"`
	Output      string `json:"output"`
	Truncated   bool   `json:"truncated"`
	TotalLines  int    `json:"totalLines"`
	TotalBytes  int    `json:"totalBytes"`
	OutputLines int    `json:"outputLines"`
	OutputBytes int    `json:"outputBytes"`
	// WorkingDir is the directory the command ran in (omp's field).
	WorkingDir string `json:"workingDir,omitempty"`
}
