package lineio

import (
	"bytes"
	"testing"
)

// After close no byte reaches the output, so a frame produced while the
// process exits cannot be cut in half.
func TestWriterCloseDropsLaterFrames(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := New(&out, nil)
	bp := w.Buf()
	*bp = append(*bp, "{}\n"...)
	w.Send(bp)
	w.Close()
	bp = w.Buf()
	*bp = append(*bp, "{\"late\":true}\n"...)
	w.Send(bp)
	if out.String() != "{}\n" {
		t.Fatalf("output %q", out.String())
	}
}
