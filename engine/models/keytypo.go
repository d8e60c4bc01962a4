package models

import (
	"slices"
	"strings"
)

// Keys are ignored when a file uses one this build does not know, so a
// file written for a newer original still loads; but a key that is a
// near miss of a known one (baseURL for baseUrl, contextwindow, maxToken)
// is a typo whose value would be silently dropped, and often surfaces only
// as a confusing "baseUrl: required" or a wrong default: it is a load
// error that names the key it meant.

// providerKeys and modelKeys are the keys a provider and a model entry
// know (parseProvider, parseModel).
var (
	providerKeys = []string{"baseUrl", "api", "apiKey", "auth", "authHeader", "headers", "compat", "models", "modelOverrides", "discovery"}
	modelKeys    = []string{"id", "name", "api", "reasoning", "input", "cost", "contextWindow", "maxTokens", "headers", "compat", "thinking"}
)

// checkKeys fails at the first key of the mapping n that is not in known
// but is a near miss of one.
func (p *configParser) checkKeys(n *node, at string, known []string) error {
	for i, key := range n.keys {
		if slices.Contains(known, key) {
			continue
		}
		if meant := typoOf(key, known); meant != "" {
			return p.fail(&node{line: n.klns[i]}, at+"."+key, "unknown key, did you mean %s?", meant)
		}
	}
	return nil
}

// typoOf returns the known key that key misspells, "" for none: the same
// key in another case, or, for keys longer than four letters, one at most
// two edits away (short keys like id or api have too many neighbours).
func typoOf(key string, known []string) string {
	low := strings.ToLower(key)
	best, bestD := "", 3
	for _, k := range known {
		kl := strings.ToLower(k)
		if kl == low {
			return k
		}
		if len(k) <= 4 {
			continue
		}
		if d := distance(low, kl); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
