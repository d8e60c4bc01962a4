package otel

import (
	"fmt"
	"strings"
)

// Configure decides from the standard OpenTelemetry variables (read with
// getenv) and xcsh's --otel flag whether traces are exported. It reports
// a warning for a setting that asks for tracing this build cannot do
// (another exporter, OTLP over gRPC): tracing is then off and the agent
// works on. The rules, in order:
//
//   - OTEL_SDK_DISABLED=true: off, whatever else says.
//   - OTEL_TRACES_EXPORTER: "none" is off; a list with "otlp" is on; any
//     other exporter is not supported (a warning).
//   - otherwise on with --otel, or when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (the SDK's default
//     endpoint, http://localhost:4318, serves --otel alone).
//   - OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, when set, must be
//     http/protobuf.
func Configure(getenv func(string) string, flag bool) (on bool, warning string) {
	if truthy(getenv("OTEL_SDK_DISABLED")) {
		if flag {
			return false, "tracing off: OTEL_SDK_DISABLED is set, which wins over --otel"
		}
		return false, ""
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); {
	case exp == "none":
		return false, ""
	case exp != "":
		on = false
		var other []string
		for _, e := range strings.Split(exp, ",") {
			switch e = strings.TrimSpace(e); e {
			case "otlp":
				on = true
			case "none", "":
			default:
				other = append(other, e)
			}
		}
		if len(other) > 0 {
			warning = fmt.Sprintf("OTEL_TRACES_EXPORTER %s %s: this build exports traces over OTLP/HTTP only (OTEL_TRACES_EXPORTER=otlp)",
				strings.Join(other, ","), ErrUnsupported)
		}
		if !on {
			return false, "tracing off: " + warning
		}
	default:
		on = flag || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	if !on {
		return false, warning
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if proto == "" {
		proto, name = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Sprintf("tracing off: %s=%s %s: this build exports over HTTP (set it to http/protobuf, and the endpoint to the collector's HTTP port, 4318)",
			name, proto, ErrUnsupported)
	}
	return true, warning
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
