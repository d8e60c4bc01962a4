package main

import (
	"io"
	"os/exec"
	"testing"

	rpcschema "github.com/xcsh-go/xcsh/rpc/schema"
)

// BenchmarkSchemaCommand: `xcsh schema` from exec to exit, the process
// included (issue 29: under 50 ms), for each format.
func BenchmarkSchemaCommand(b *testing.B) {
	bin := buildBenchBinary(b)
	for _, format := range []string{"json-schema", "typescript", "python"} {
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(bin, "schema", "--format", format)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSchemaGenerate: the rpc schema generated and printed in
// process, without the process's start.
func BenchmarkSchemaGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := rpcschema.JSON("rpc"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVersionCommand: `xcsh --version`, the floor any command's
// process pays on this machine (BenchmarkSchemaCommand's baseline).
func BenchmarkVersionCommand(b *testing.B) {
	bin := buildBenchBinary(b)
	for i := 0; i < b.N; i++ {
		if err := exec.Command(bin, "--version").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
