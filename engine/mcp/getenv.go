package mcp

import "os"

func osGetenv(k string) string { return os.Getenv(k) }

// osEnviron is the environment childenv filters: a secret's value is
// looked for in it under any name.
func osEnviron() []string { return os.Environ() }
