package models

// Option configures Load.
type Option func(*loadConfig)

type loadConfig struct {
	apis []string // the APIs a models file may name; nil: every API the family knows
}

// WithAPIs makes Load accept in a models file only the APIs listed: those
// this build has an adapter for, which cmd passes from its adapter list
// (the registry knows no adapter). An api the family knows but this build
// cannot speak then fails the load, naming the file, the line, the field
// and the APIs that work, rather than every prompt to its models.
func WithAPIs(apis ...string) Option {
	return func(c *loadConfig) { c.apis = append([]string{}, apis...) }
}
