// Package rpctest is the end-to-end test harness of xcsh: testscript
// commands that drive a live JSONL-over-stdio process, assert over its
// frames and compare transcripts with golden files. docs/testing.md is the
// reference for script authors.
//
// The harness drives a process by name, found on the script's $PATH; it
// imports neither rpc, engine nor cmd/xcsh, so the tests of any package
// (cmd/xcsh's scenarios, a provider's integration tests) can use it against
// whatever binary their TestMain installs. This is the split the go command
// makes between its script engine and its commands.
//
// A package's tests use it like this:
//
//	func TestMain(m *testing.M) {
//		testscript.Main(m, map[string]func(){
//			"xcsh":       xcshMain, // whatever the scripts start
//			"jsonl-echo": rpctest.EchoMain,
//		})
//	}
//
//	func TestScripts(t *testing.T) {
//		testscript.Run(t, rpctest.Params("testdata/script", "testdata/golden"))
//	}
//
// Params gives each script a private $HOME, the deterministic switch
// (XCSH_DETERMINISTIC=1) and the commands of Commands: rpc, frames, golden,
// waitfile and pidgone. Extra per-script setup goes in Params' setup
// arguments, not in a wrapper around Params().Setup, because `rpc start`
// passes on only the variables known when the harness's Setup finishes.
//
// Goldens are refreshed with GOLDIE_UPDATE=1 and in-script cmp targets with
// UPDATE_SCRIPTS=1; goldie's own -update flag, global to the test binary,
// is not used.
package rpctest
