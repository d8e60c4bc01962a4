package bedrock

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/auth/bearer"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/xcsh-go/xcsh/engine"
	"github.com/xcsh-go/xcsh/engine/provider"
)

// defaultRegion is the region of a call that names none anywhere, as the
// original falls back to.
const defaultRegion = "us-east-1"

// loadDefaultConfig is the SDK's configuration chain: the environment, the
// shared config and credentials files (AWS_PROFILE), and the credential
// providers after them.
func loadDefaultConfig(ctx context.Context) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx)
}

// config returns AWS's configuration, loading it on the first call. A
// failed load is not kept: the user may fix the profile and try again.
func (p *Provider) config(ctx context.Context) (aws.Config, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cfg != nil {
		return *p.cfg, nil
	}
	cfg, err := p.opts.LoadConfig(ctx)
	if err != nil {
		return aws.Config{}, err
	}
	p.cfg = &cfg
	return cfg, nil
}

// client builds the SDK client of one call and says which region it
// speaks to: the credentials (or the bearer key), the region, the endpoint
// and the model's headers vary per model, and a client is cheap beside a
// model call.
func (p *Provider) client(ctx context.Context, m engine.Model, key string, secrets []string) (*bedrockruntime.Client, string, error) {
	cfg, err := p.config(ctx)
	if err != nil && key == "" {
		// Without the configuration there are no credentials to sign
		// with; with a bearer key none are needed.
		return nil, "", configError(err, secrets)
	}
	region := p.region(m, cfg.Region)
	endpoint := endpointFor(m.BaseURL, region)
	inner := p.httpClient(cfg)
	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		o.Region = region
		// Retry belongs to the engine: one attempt, whatever
		// AWS_MAX_ATTEMPTS or the profile say.
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 0
		o.HTTPClient = streamCheck{inner: inner, secrets: secrets}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		if key != "" {
			// A Bedrock API key: bearer auth instead of SigV4. The SDK
			// reads AWS_BEARER_TOKEN_BEDROCK from the process itself;
			// this also covers a models.json apiKey and Options.Getenv.
			o.BearerAuthTokenProvider = bearer.StaticTokenProvider{Token: bearer.Token{Value: key}}
			o.AuthSchemePreference = []string{"httpBearerAuth"}
		}
		names := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			names = append(names, k)
		}
		sort.Strings(names) // a stable header order for a given model
		for _, k := range names {
			o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue(k, m.Headers[k]))
		}
	})
	return client, region, nil
}

// httpClient is the client the SDK sends through: Options.HTTPClient, else
// the configuration's, else one the provider keeps, so that calls reuse
// its connections (a client per call would shake hands with TLS each
// time).
func (p *Provider) httpClient(cfg aws.Config) smithyhttp.ClientDo {
	if p.opts.HTTPClient != nil {
		return p.opts.HTTPClient
	}
	if cfg.HTTPClient != nil {
		return cfg.HTTPClient
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.http == nil {
		p.http = awshttp.NewBuildableClient()
	}
	return p.http
}

// region chooses the region of a call: the environment's, else a standard
// endpoint's, else the profile's (profile), else us-east-1.
func (p *Provider) region(m engine.Model, profile string) string {
	for _, k := range [...]string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if r := strings.TrimSpace(p.opts.Getenv(k)); r != "" {
			return r
		}
	}
	if r := standardRegion(m.BaseURL); r != "" {
		return r
	}
	if profile != "" {
		return profile
	}
	return defaultRegion
}

// endpointFor is the endpoint to send to: the model's baseUrl, unless it
// is a standard Bedrock endpoint of another region than the one chosen
// (AWS_REGION wins over a catalog's default URL), in which case the SDK
// resolves the region's own.
func endpointFor(baseURL, region string) string {
	if baseURL == "" {
		return ""
	}
	if r := standardRegion(baseURL); r != "" && r != region {
		return ""
	}
	return baseURL
}

var standardHost = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$`)
})

// standardRegion is the region of a bedrock-runtime.<region>.amazonaws.com
// URL, "" for any other.
func standardRegion(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	m := standardHost().FindStringSubmatch(strings.ToLower(u.Hostname()))
	if m == nil {
		return ""
	}
	return m[1]
}

// streamCheck is the SDK's HTTP client with the adapters' check of a
// successful answer: a proxy's page with status 200 fails the call at once
// (provider.NotAStream) instead of as an undecodable event stream.
type streamCheck struct {
	inner   smithyhttp.ClientDo
	secrets []string
}

func (c streamCheck) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		// The SDK closes the request's body as soon as Do returns, which
		// for a stream is when its headers arrive; net/http may still be
		// reading that body for its end, and a read that fails then makes
		// the transport close the connection under the stream being read
		// ("use of closed network connection", aws-sdk-go-v2#2737). The
		// body (the request's JSON) goes as a copy that no one else
		// closes.
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	res, err := c.inner.Do(req)
	if err != nil || res.StatusCode < 200 || res.StatusCode > 299 {
		return res, err
	}
	if err := provider.NotAStream(res, "an event stream", c.secrets); err != nil {
		res.Body.Close()
		return nil, err
	}
	return res, nil
}
