package bedrock

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider/bedrock/bedrocktest"
)

const claudeID = "us.anthropic.claude-sonnet-4-20250514-v1:0"

func testModel(url string) engine.Model {
	return engine.Model{
		ID: claudeID, Name: "Claude Sonnet 4", API: "bedrock-converse-stream", Provider: "amazon-bedrock",
		BaseURL: url, Reasoning: true, Input: []string{"text", "image"}, ContextWindow: 200000, MaxTokens: 64000,
	}
}

// staticConfig is the configuration of a machine with static keys in its
// environment, without reading it.
func staticConfig(context.Context) (aws.Config, error) {
	return aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret-test-key", "")}, nil
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func newTestProvider(vars map[string]string) *Provider {
	if vars == nil {
		vars = map[string]string{"AWS_REGION": "us-east-1"}
	}
	return New(Options{Getenv: env(vars), LoadConfig: staticConfig})
}

// collect runs one call and returns its events and error.
func collect(t *testing.T, p *Provider, req *engine.Request) ([]engine.StreamEvent, error) {
	t.Helper()
	var evs []engine.StreamEvent
	err := p.Stream(context.Background(), req, func(e engine.StreamEvent) error {
		evs = append(evs, e)
		return nil
	})
	return evs, err
}

func TestStreamReasoningTextAndTwoToolCalls(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{{Events: []bedrocktest.Event{
		bedrocktest.MessageStart(),
		bedrocktest.ReasoningDelta(0, "Two files "),
		bedrocktest.ReasoningDelta(0, "to read."),
		bedrocktest.SignatureDelta(0, "sig-abc"),
		bedrocktest.BlockStop(0),
		bedrocktest.TextDelta(1, "Reading "),
		bedrocktest.TextDelta(1, "both."),
		bedrocktest.BlockStop(1),
		bedrocktest.ToolUseStart(2, "tooluse_1", "read"),
		bedrocktest.ToolUseDelta(2, `{"path":`),
		bedrocktest.ToolUseDelta(2, ` "a.txt"}`),
		bedrocktest.BlockStop(2),
		bedrocktest.ToolUseStart(3, "tooluse_2", "ls"),
		bedrocktest.BlockStop(3),
		bedrocktest.MessageStop("tool_use"),
		bedrocktest.Metadata(bedrocktest.Usage{Input: 100, Output: 40, CacheRead: 30, CacheWrite: 20}),
	}}}})
	defer srv.Close()

	req := &engine.Request{Model: testModel(srv.URL), SystemPrompt: "be brief", ThinkingLevel: engine.ThinkingMedium,
		Messages: []engine.Message{&engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "read a.txt and list"}}}},
		Tools: []engine.ToolSpec{
			{Name: "read", Description: "Read a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","maximum":2000}},"required":["path"]}`)},
			{Name: "ls", Parameters: nil},
		}}
	evs, err := collect(t, newTestProvider(nil), req)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Kind        engine.StreamEventKind
		Delta, Sig  string
		ID, Name    string
		Args        string
		Stop        engine.StopReason
		Usage       engine.Usage
		HasUsageSet bool
	}
	var got []ev
	for _, e := range evs {
		got = append(got, ev{Kind: e.Kind, Delta: e.Delta, Sig: e.Signature, ID: e.ToolCallID, Name: e.ToolName, Args: string(e.Arguments), Stop: e.StopReason, Usage: e.Usage, HasUsageSet: e.Kind == engine.StreamUsage})
	}
	want := []ev{
		{Kind: engine.StreamThinkingStart},
		{Kind: engine.StreamThinkingDelta, Delta: "Two files "},
		{Kind: engine.StreamThinkingDelta, Delta: "to read."},
		{Kind: engine.StreamThinkingEnd, Sig: "sig-abc"},
		{Kind: engine.StreamTextStart},
		{Kind: engine.StreamTextDelta, Delta: "Reading "},
		{Kind: engine.StreamTextDelta, Delta: "both."},
		{Kind: engine.StreamTextEnd},
		{Kind: engine.StreamToolCallStart, ID: "tooluse_1", Name: "read"},
		{Kind: engine.StreamToolCallDelta, Delta: `{"path":`, ID: "tooluse_1", Name: "read"},
		{Kind: engine.StreamToolCallDelta, Delta: ` "a.txt"}`, ID: "tooluse_1", Name: "read"},
		{Kind: engine.StreamToolCallEnd, Args: `{"path":"a.txt"}`, ID: "tooluse_1", Name: "read"},
		{Kind: engine.StreamToolCallStart, ID: "tooluse_2", Name: "ls"},
		{Kind: engine.StreamToolCallEnd, Args: `{}`, ID: "tooluse_2", Name: "ls"},
		{Kind: engine.StreamUsage, HasUsageSet: true, Usage: engine.Usage{Input: 100, Output: 40, CacheRead: 30, CacheWrite: 20, TotalTokens: 190}},
		{Kind: engine.StreamDone, Stop: engine.StopToolUse},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n%+v\nwant:\n%+v", got, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/model/"+claudeID+"/converse-stream" {
		t.Errorf("path %q", r.Path)
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("Authorization %q is not a SigV4 signature for us-east-1", auth)
	}
	if strings.Contains(string(r.Body), "secret-test-key") || strings.Contains(auth, "secret-test-key") {
		t.Errorf("the secret key went on the wire")
	}
	wantBody := `{
	 "additionalModelRequestFields":{"anthropic_beta":["interleaved-thinking-2025-05-14"],"thinking":{"budget_tokens":8192,"display":"summarized","type":"enabled"}},
	 "inferenceConfig":{"maxTokens":40192},
	 "messages":[{"content":[{"text":"read a.txt and list"},{"cachePoint":{"type":"default"}}],"role":"user"}],
	 "system":[{"text":"be brief"},{"cachePoint":{"type":"default"}}],
	 "toolConfig":{"tools":[
	   {"toolSpec":{"description":"Read a file","inputSchema":{"json":{"properties":{"limit":{"maximum":2000,"type":"integer"},"path":{"type":"string"}},"required":["path"],"type":"object"}},"name":"read"}},
	   {"toolSpec":{"inputSchema":{"json":{"properties":{},"type":"object"}},"name":"ls"}}]}}`
	sameJSON(t, r.Body, wantBody)
	if !strings.Contains(string(r.Body), `"maximum":2000`) {
		t.Errorf("an integer of the schema was not sent as written: %s", r.Body)
	}
}

// sameJSON compares JSON values, whatever their key order.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Errorf("body:\n%s\nwant:\n%s", gb, wb)
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]engine.StopReason{
		"end_turn":                      engine.StopStop,
		"stop_sequence":                 engine.StopStop,
		"tool_use":                      engine.StopToolUse,
		"max_tokens":                    engine.StopLength,
		"model_context_window_exceeded": engine.StopLength,
	} {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{{Events: []bedrocktest.Event{
				bedrocktest.MessageStart(), bedrocktest.TextDelta(0, "x"), bedrocktest.BlockStop(0), bedrocktest.MessageStop(reason),
			}}}})
			defer srv.Close()
			evs, err := collect(t, newTestProvider(nil), &engine.Request{Model: testModel(srv.URL)})
			if err != nil {
				t.Fatal(err)
			}
			if last := evs[len(evs)-1]; last.Kind != engine.StreamDone || last.StopReason != want {
				t.Errorf("last event %+v, want done %s", last, want)
			}
		})
	}
}

func TestRedactedReasoningComesBackAsIs(t *testing.T) {
	t.Parallel()
	data := []byte{0x01, 0xfe, 'e', 'n', 'c'}
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{
		{Events: []bedrocktest.Event{
			bedrocktest.MessageStart(), bedrocktest.RedactedDelta(0, data), bedrocktest.BlockStop(0),
			bedrocktest.TextDelta(1, "ok"), bedrocktest.BlockStop(1), bedrocktest.MessageStop("end_turn"),
		}},
		bedrocktest.TextResponse("again"),
	}})
	defer srv.Close()
	p := newTestProvider(nil)
	m := testModel(srv.URL)
	evs, err := collect(t, p, &engine.Request{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Kind != engine.StreamRedactedThinking || evs[0].Delta != "Af5lbmM=" {
		t.Fatalf("first event %+v, want the redacted block", evs[0])
	}
	prior := &engine.AssistantMessage{API: m.API, Provider: m.Provider, Model: m.ID, StopReason: engine.StopStop,
		Content: []engine.ContentBlock{{Type: engine.BlockRedactedThinking, Data: evs[0].Delta}, {Type: engine.BlockText, Text: "ok"}}}
	_, err = collect(t, p, &engine.Request{Model: m, Messages: []engine.Message{
		&engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "q"}}}, prior,
		&engine.UserMessage{Content: []engine.ContentBlock{{Type: engine.BlockText, Text: "more"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := string(srv.Requests()[1].Body)
	if !strings.Contains(body, `{"reasoningContent":{"redactedContent":"Af5lbmM="}}`) {
		t.Errorf("the redacted reasoning did not go back: %s", body)
	}
}

func TestBearerKey(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewTLS(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("hi")}})
	defer srv.Close()
	// The configuration cannot load (a missing profile, say): a bearer key
	// needs none of it.
	p := New(Options{
		HTTPClient: srv.Client(),
		Getenv:     env(map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "bedrock-api-key-123", "AWS_REGION": "eu-west-1"}),
		LoadConfig: func(context.Context) (aws.Config, error) { return aws.Config{}, errors.New("profile dev not found") },
	})
	if _, err := collect(t, p, &engine.Request{Model: testModel(srv.URL)}); err != nil {
		t.Fatal(err)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "Bearer bedrock-api-key-123" {
		t.Errorf("Authorization %q, want the bearer key", auth)
	}
}

func TestConfigLoadedOnFirstCallOnly(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("a"), bedrocktest.TextResponse("b")}})
	defer srv.Close()
	var loads atomic.Int32
	p := New(Options{Getenv: env(map[string]string{"AWS_REGION": "us-east-1"}), LoadConfig: func(ctx context.Context) (aws.Config, error) {
		loads.Add(1)
		return staticConfig(ctx)
	}})
	if n := loads.Load(); n != 0 {
		t.Fatalf("New loaded the configuration %d times", n)
	}
	for range 2 {
		if _, err := collect(t, p, &engine.Request{Model: testModel(srv.URL)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("configuration loaded %d times for two calls, want 1", n)
	}
}

func TestConfigFailureIsAuth(t *testing.T) {
	t.Parallel()
	p := New(Options{Getenv: env(nil), LoadConfig: func(context.Context) (aws.Config, error) {
		return aws.Config{}, errors.New("failed to get shared config profile, dev")
	}})
	_, err := collect(t, p, &engine.Request{Model: testModel("http://127.0.0.1:1")})
	var pe *engine.ProviderError
	if !errors.As(err, &pe) || pe.Kind != engine.ErrorAuth || !strings.Contains(pe.Message, "profile, dev") {
		t.Fatalf("error %v, want an auth failure naming the profile", err)
	}
}

func TestAbortStopsAStalledStream(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{{Events: []bedrocktest.Event{
		bedrocktest.MessageStart(), bedrocktest.TextDelta(0, "partial"),
	}, End: bedrocktest.EndStall}}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- newTestProvider(nil).Stream(ctx, &engine.Request{Model: testModel(srv.URL)}, func(e engine.StreamEvent) error {
			if e.Kind == engine.StreamTextDelta {
				cancel() // the host aborts once the answer has begun
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after the cancel")
	}
}

func TestCallbackErrorStops(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("hello")}})
	defer srv.Close()
	stop := errors.New("host gone")
	err := newTestProvider(nil).Stream(context.Background(), &engine.Request{Model: testModel(srv.URL)}, func(engine.StreamEvent) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("error %v, want the callback's", err)
	}
}

func TestHeadersFromTheModel(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.New(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("hi")}})
	defer srv.Close()
	m := testModel(srv.URL)
	m.Headers = map[string]string{"X-Team": "lab"}
	if _, err := collect(t, newTestProvider(nil), &engine.Request{Model: m}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("X-Team"); got != "lab" {
		t.Errorf("X-Team %q", got)
	}
}

func TestRegionAndEndpoint(t *testing.T) {
	t.Parallel()
	std := "https://bedrock-runtime.eu-central-1.amazonaws.com"
	tests := []struct {
		name, baseURL, envRegion, profile string
		region, endpoint                  string
	}{
		{"nothing set", "", "", "", "us-east-1", ""},
		{"profile", "", "", "ap-south-1", "ap-south-1", ""},
		{"environment wins over profile", "", "us-west-2", "ap-south-1", "us-west-2", ""},
		{"standard URL gives its region", std, "", "ap-south-1", "eu-central-1", std},
		{"environment wins over a standard URL", std, "us-west-2", "", "us-west-2", ""},
		{"same region keeps the URL", std, "eu-central-1", "", "eu-central-1", std},
		{"a proxy is always the endpoint", "http://127.0.0.1:9999", "us-west-2", "", "us-west-2", "http://127.0.0.1:9999"},
		{"FIPS endpoint", "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com", "", "", "us-gov-west-1", "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{Getenv: env(map[string]string{"AWS_REGION": tc.envRegion})})
			r := p.region(engine.Model{BaseURL: tc.baseURL}, tc.profile)
			if r != tc.region {
				t.Errorf("region %q, want %q", r, tc.region)
			}
			if e := endpointFor(tc.baseURL, r); e != tc.endpoint {
				t.Errorf("endpoint %q, want %q", e, tc.endpoint)
			}
		})
	}
}

// The helper process gets the key the agent's registry has (a models.json
// apiKey) with each call: StreamKey sends it as the bearer key, ahead of
// the environment's.
func TestStreamKeyIsTheBearerKey(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewTLS(bedrocktest.Script{Responses: []bedrocktest.Response{bedrocktest.TextResponse("hi")}})
	defer srv.Close()
	p := New(Options{HTTPClient: srv.Client(), LoadConfig: staticConfig,
		Getenv: env(map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "from-env", "AWS_REGION": "us-east-1"})})
	err := p.StreamKey(context.Background(), &engine.Request{Model: testModel(srv.URL)}, "from-models-json", func(engine.StreamEvent) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if auth := srv.Requests()[0].Header.Get("Authorization"); auth != "Bearer from-models-json" {
		t.Errorf("Authorization %q, want the key given", auth)
	}
}
