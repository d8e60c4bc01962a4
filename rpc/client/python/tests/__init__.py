"""Tests of xcsh_rpc against the real binary ($XCSH_BIN, else xcsh on PATH)."""
