//go:build !unix

package main

import "os"

// watchOutput never reports where poll(2) is not at hand: a write's
// failure is the only word that the host has gone.
func watchOutput(*os.File) (<-chan struct{}, func()) { return make(chan struct{}), func() {} }
