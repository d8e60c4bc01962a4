package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"github.com/xcsh-go/xcsh/engine/childenv"
	"github.com/xcsh-go/xcsh/engine/models"
)

// keyFlags are the flags about provider keys (issue 15, S10): where
// --api-key may come from, and whether the key variables stay in the
// environment of the processes the agent starts.
type keyFlags struct {
	apiKeyFile string
	keepKeyEnv bool
	// envName is the variable --api-key env:NAME named, once resolved.
	envName string
}

func addKeyFlags(f *pflag.FlagSet, k *keyFlags) {
	f.StringVar(&k.apiKeyFile, "api-key-file", "", "read the API key from this file (keeps it out of the process table)")
	f.BoolVar(&k.keepKeyEnv, "keep-key-env", false, "leave provider key variables (and those MCP configurations name) in the environment of commands and other child processes")
}

// maxKeyFile bounds --api-key-file: a key is a line, not a file.
const maxKeyFile = 64 << 10

// resolveAPIKey turns --api-key env:NAME and --api-key-file PATH into the
// key itself, so it need not sit in the process table. A literal
// --api-key is used as given.
func resolveAPIKey(o *options, k *keyFlags, env func(string) string) error {
	if k.apiKeyFile != "" {
		if o.apiKey != "" {
			return &exitError{2, "Error: give --api-key or --api-key-file, not both"}
		}
		key, err := readKeyFile(k.apiKeyFile)
		if err != nil {
			return &exitError{2, "Error: --api-key-file: " + err.Error()}
		}
		o.apiKey = key
		return nil
	}
	if name, ok := strings.CutPrefix(o.apiKey, "env:"); ok {
		if name == "" {
			return &exitError{2, "Error: --api-key env:NAME needs a variable name"}
		}
		v := strings.TrimSpace(env(name))
		if v == "" {
			return &exitError{2, fmt.Sprintf("Error: --api-key env:%s: the variable is not set", name)}
		}
		o.apiKey, k.envName = v, name
	}
	return nil
}

// readKeyFile reads a key from a regular file (never a FIFO or a device:
// the open cannot block), trimmed of surrounding white space.
func readKeyFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxKeyFile {
		return "", fmt.Errorf("%s is over %d bytes", path, maxKeyFile)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return key, nil
}

// scrubKeyEnv removes the provider key variables the registry reads (and
// the one --api-key env:NAME named) from the environment of every process
// the agent starts, unless --keep-key-env, which also keeps the variables
// MCP configurations name (engine/mcp drops them through the same rule).
func scrubKeyEnv(k *keyFlags, reg *models.Registry) {
	if k.keepKeyEnv {
		childenv.Keep()
		return
	}
	childenv.Drop(reg.KeyEnvNames()...)
	childenv.Drop(k.envName)
}
