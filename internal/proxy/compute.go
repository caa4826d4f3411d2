package proxy

import (
	"runtime"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/cputime"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// computeOptions are the [compute] settings: the per-page CPU budget of an
// edge compute platform, in the platform's terms (docs/measuring.md,
// "Compute budget").
type computeOptions struct {
	cpuBudget time.Duration // platform CPU per page; 0 = off
	cpuScale  float64       // platform CPU = native CPU * cpuScale
}

// platformCPU turns native CPU into the platform's.
func (c computeOptions) platformCPU(native time.Duration) time.Duration {
	return time.Duration(float64(native) * c.cpuScale)
}

// timedProcess runs the pipeline on this goroutine's own OS thread and
// returns the thread's CPU time for it: the same measure as `ssatd
// measure`. Locking the thread is what makes the reading the page's
// alone; while the pipeline waits for the origin or the auction the
// thread sleeps and uses no CPU. ok is false where the clock is missing.
func (p *pipeline) timedProcess() (st rewrite.Stats, cpu time.Duration, ok bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok0 := cputime.Thread()
	st, err = p.process()
	c1, ok1 := cputime.Thread()
	return st, c1 - c0, ok0 && ok1, err
}

// spent records the guest CPU of a page served complete: the metric, the
// access line's figure, and a warning when it went over the budget.
func (p *pipeline) spent(cpu time.Duration) {
	g, x := p.g, p.x
	x.mu.Lock()
	x.guestCPU, x.cpuMeasured = cpu, true
	x.mu.Unlock()
	g.metrics.GuestCPU(string(x.mode), x.originCoding, cpu)
	platform := g.platformCPU(cpu)
	if g.cpuBudget <= 0 || platform <= g.cpuBudget {
		return
	}
	g.metrics.BudgetExceeded(string(x.mode), x.originCoding)
	g.log.Warn("compute budget exceeded",
		zap.String("path", p.req.URL.Path),
		zap.String("mode", string(x.mode)),
		zap.String("origin_coding", x.originCoding),
		zap.String("output_coding", string(p.coding)),
		zap.Float64("cpu_ms", millis(cpu)),
		zap.Float64("platform_cpu_ms", millis(platform)),
		zap.Float64("cpu_budget_ms", millis(g.cpuBudget)),
		zap.Float64("cpu_scale", g.cpuScale))
}
