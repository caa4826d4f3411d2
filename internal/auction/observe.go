package auction

import (
	"context"
	"time"
)

// EndpointResult is how one endpoint call of an auction ended, as the
// endpoint metrics count it: Outcome is one of the Endpoint* values,
// Reason one of the Reason* values or "".
type EndpointResult struct {
	Endpoint string
	Outcome  string
	Reason   string
	Status   int // the HTTP status, 0 when none came
	Duration time.Duration
}

type observerKey struct{}

// WithObserver returns a context under which every endpoint call of an
// auction started with it reports its result to f, from the call's own
// goroutine: the guest's per-page diagnostics (docs/behaviour.md,
// "Diagnostics"). f must be safe for concurrent use.
func WithObserver(ctx context.Context, f func(EndpointResult)) context.Context {
	return context.WithValue(ctx, observerKey{}, f)
}

func observe(ctx context.Context, r EndpointResult) {
	if f, ok := ctx.Value(observerKey{}).(func(EndpointResult)); ok {
		f(r)
	}
}
