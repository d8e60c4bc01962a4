package extension

import "sort"

// Methods are the names of the extension protocol, for its schema
// (rpc/schema, `xcsh schema --protocol extensions`): the events and hooks
// the host sends (those an extension may subscribe to, from the table
// subscriptions are read by, plus the lifecycle's initialize and
// session_shutdown), and the calls an extension may make (the tables the
// host serves them from, plus its notifications).
func Methods() (toExtension, fromExtension []string) {
	for n := range names {
		toExtension = append(toExtension, n)
	}
	toExtension = append(toExtension, "initialize", "session_shutdown", "tool/execute", "command/run", "$/cancelRequest")
	for n := range quickCalls {
		fromExtension = append(fromExtension, n)
	}
	for n := range slowCalls {
		fromExtension = append(fromExtension, n)
	}
	fromExtension = append(fromExtension, "tool/update", "log", "$/cancelRequest")
	sort.Strings(toExtension)
	sort.Strings(fromExtension)
	return dedupe(toExtension), dedupe(fromExtension)
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
