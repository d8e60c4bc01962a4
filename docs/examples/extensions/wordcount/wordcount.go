// Package wordcount is an example xcsh extension in Go: a word_count tool
// the model can call to count the lines, words and bytes of a file in the
// session's directory, written with the helper library extkit. The
// program is ./cmd/wordcount; build it into .xcsh/extensions/:
//
//	go build -o .xcsh/extensions/wordcount ./docs/examples/extensions/wordcount/cmd/wordcount
package wordcount

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xcsh-go/xcsh/engine/extension/extkit"
)

// Extension returns the extension: one tool, and a status line while it
// counts.
func Extension() *extkit.Extension {
	return &extkit.Extension{
		Name: "wordcount",
		Tools: []extkit.Tool{{
			Name:        "word_count",
			Label:       "Word count",
			Description: "Count the lines, words and bytes of a text file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file, relative to the working directory"}},` +
				`"required":["path"],"additionalProperties":false}`),
			Execute: count,
		}},
	}
}

func count(c *extkit.Context, call extkit.ToolCall) (extkit.ToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return extkit.ToolResult{}, err
	}
	// The extension runs in the session's directory.
	f, err := os.Open(filepath.Clean(in.Path))
	if err != nil {
		// A failure the model should see is an error result, not an error.
		return extkit.ToolResult{Content: extkit.Text(err.Error()), IsError: true}, nil
	}
	defer f.Close()
	_ = c.SetStatus("wordcount", "counting "+in.Path)
	defer c.SetStatus("wordcount", "")
	var lines, words, bytes int
	r := bufio.NewReader(f)
	for {
		if err := c.Context().Err(); err != nil {
			return extkit.ToolResult{}, err // aborted
		}
		line, err := r.ReadString('\n')
		bytes += len(line)
		words += len(strings.Fields(line))
		if strings.HasSuffix(line, "\n") {
			lines++
		}
		if err != nil {
			break
		}
	}
	_ = c.Update(extkit.ToolResult{Content: extkit.Text(fmt.Sprintf("counted %d lines", lines))})
	return extkit.ToolResult{
		Content: extkit.Text(fmt.Sprintf("%s: %d lines, %d words, %d bytes", in.Path, lines, words, bytes)),
		Details: map[string]int{"lines": lines, "words": words, "bytes": bytes},
	}, nil
}
