//go:build !race

package client

// raceBuild: see race_on_test.go.
const raceBuild = false
