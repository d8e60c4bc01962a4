package export_test

import (
	"fmt"

	"github.com/xcsh-go/xcsh/engine/export"
)

func ExampleDefaultPath() {
	fmt.Println(export.DefaultPath("/home/u/.xcsh/agent/sessions/-p/2026-07-02T18-38-56-123Z_1b2c3d4e5f607182.jsonl"))
	// Output: xcsh-session-2026-07-02T18-38-56-123Z_1b2c3d4e5f607182.html
}
