package identity

import (
	"sync"
	"time"
)

// minuteLimiter allows n requests a calendar minute, as upstream's
// exceeded_per_minute over Fastly's rate counter (ec/rate_limiter.rs). It
// counts on this instance only: several instances each allow n.
type minuteLimiter struct {
	n   int
	now func() time.Time
	mu  sync.Mutex
	min int64
	cnt int
}

func newMinuteLimiter(n int, now func() time.Time) *minuteLimiter {
	return &minuteLimiter{n: n, now: now}
}

// allow counts a request and reports whether it is within the limit.
func (l *minuteLimiter) allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.now().Unix() / 60; m != l.min {
		l.min, l.cnt = m, 0
	}
	l.cnt++
	return l.cnt <= l.n
}
