package provider

import "testing"

func TestToolID(t *testing.T) {
	t.Parallel()
	long := "call_0123456789012345678901234567890123456789012345678901234567890123456789"
	for in, want := range map[string]string{
		"tooluse_AbC-1":  "tooluse_AbC-1",
		"call_1|fc_1":    "call_1_fc_1",
		"":               "_",
		long:             long[:64],
		"spaces and .:/": "spaces_and____",
	} {
		if got := ToolID(in); got != want {
			t.Errorf("ToolID(%q) = %q, want %q", in, got, want)
		}
	}
}
