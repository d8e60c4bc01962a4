//go:build !unix

package mcp

import "os/exec"

func setProcAttr(*exec.Cmd) {}

func killGroup(c *exec.Cmd) {
	if c.Process != nil {
		_ = c.Process.Kill()
	}
}
