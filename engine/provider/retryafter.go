package provider

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// ParseRetryAfter reads the wait a server asks for in its response headers:
// Retry-After-Ms (milliseconds, as OpenAI and Anthropic send it), else
// Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3). Both
// numbers may be fractional. A number comes back as delay; a date as at,
// for the engine to resolve against its own clock (retryAfter), so no
// adapter reads the wall clock for it. Both are zero when the headers ask
// for nothing usable: absent, zero, negative, or not a number or a date.
// A date in the past is returned as is: it means "now".
func ParseRetryAfter(h http.Header) (delay time.Duration, at time.Time) {
	if d, ok := parseDelay(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d, time.Time{}
	}
	v := h.Get("Retry-After")
	if d, ok := parseDelay(v, time.Second); ok {
		return d, time.Time{}
	}
	if t, err := http.ParseTime(v); err == nil {
		return 0, t.UTC()
	}
	return 0, time.Time{}
}

// parseDelay reads a positive decimal count of units: digits with at most
// one decimal point, nothing else (no sign, exponent, hex, Inf or NaN, all
// of which strconv.ParseFloat would take), that fits a Duration.
func parseDelay(v string, unit time.Duration) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	point := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.' && !point:
			point = true
		case c < '0' || c > '9':
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		return 0, false
	}
	ns := f * float64(unit)
	if ns >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(ns), true
}
