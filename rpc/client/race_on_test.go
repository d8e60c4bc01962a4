//go:build race

package client

// raceBuild: this test binary has the race detector. The TypeScript and
// Python clients' suites drive a separately built xcsh from Node and
// Python: the detector sees none of it, so they run once, without it.
const raceBuild = true
