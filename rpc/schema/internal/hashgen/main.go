// Command hashgen writes rpc/schema/hash_gen.go, the hash of the rpc
// schema as a constant (go generate in rpc/schema, after docgen): the
// ready frame carries it without generating the schema at every start.
package main

import (
	"fmt"
	"os"

	"github.com/xcsh-go/xcsh/rpc/schema"
)

func main() {
	src, err := schema.HashFile()
	if err == nil {
		err = os.WriteFile("hash_gen.go", src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hashgen:", err)
		os.Exit(1)
	}
}
