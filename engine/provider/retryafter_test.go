package provider

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 1, 1, 0, 1, 30, 0, time.UTC)
	tests := []struct {
		name      string
		headers   map[string]string
		wantDelay time.Duration
		wantAt    time.Time
	}{
		{name: "none"},
		{name: "seconds", headers: map[string]string{"Retry-After": "7"}, wantDelay: 7 * time.Second},
		{name: "fractional seconds", headers: map[string]string{"retry-after": "1.5"}, wantDelay: 1500 * time.Millisecond},
		{name: "milliseconds", headers: map[string]string{"retry-after-ms": "250"}, wantDelay: 250 * time.Millisecond},
		{name: "fractional milliseconds", headers: map[string]string{"Retry-After-Ms": "0.5"}, wantDelay: 500 * time.Microsecond},
		{name: "milliseconds win", headers: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, wantDelay: 1500 * time.Millisecond},
		{name: "bad milliseconds fall back to seconds", headers: map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, wantDelay: 2 * time.Second},
		{name: "zero milliseconds fall back to seconds", headers: map[string]string{"Retry-After-Ms": "0", "Retry-After": "2"}, wantDelay: 2 * time.Second},
		{name: "IMF-fixdate", headers: map[string]string{"Retry-After": "Thu, 01 Jan 2026 00:01:30 GMT"}, wantAt: date},
		{name: "RFC 850 date", headers: map[string]string{"Retry-After": "Thursday, 01-Jan-26 00:01:30 GMT"}, wantAt: date},
		{name: "asctime date", headers: map[string]string{"Retry-After": "Thu Jan  1 00:01:30 2026"}, wantAt: date},
		{name: "past date is returned as is", headers: map[string]string{"Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"}, wantAt: time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)},
		{name: "milliseconds win over a date", headers: map[string]string{"Retry-After-Ms": "10", "Retry-After": "Thu, 01 Jan 2026 00:01:30 GMT"}, wantDelay: 10 * time.Millisecond},
		{name: "zero", headers: map[string]string{"Retry-After": "0"}},
		{name: "negative", headers: map[string]string{"Retry-After": "-5", "Retry-After-Ms": "-100"}},
		{name: "garbage", headers: map[string]string{"Retry-After": "soon"}},
		{name: "two points", headers: map[string]string{"Retry-After": "1.2.3"}},
		{name: "spaces", headers: map[string]string{"Retry-After": " 5"}},
		{name: "exponent", headers: map[string]string{"Retry-After": "1e3"}},
		{name: "hex", headers: map[string]string{"Retry-After": "0x10p0"}},
		{name: "infinity", headers: map[string]string{"Retry-After": "Inf"}},
		{name: "NaN", headers: map[string]string{"Retry-After-Ms": "NaN"}},
		{name: "too large for a Duration", headers: map[string]string{"Retry-After": "99999999999999999999"}},
		{name: "a lone point", headers: map[string]string{"Retry-After": "."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			delay, at := ParseRetryAfter(h)
			if delay != tt.wantDelay || !at.Equal(tt.wantAt) {
				t.Errorf("ParseRetryAfter = %v, %v; want %v, %v", delay, at, tt.wantDelay, tt.wantAt)
			}
		})
	}
}
