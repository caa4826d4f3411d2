package proxy

import (
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// computeOptions are the [compute] settings: the limits of the compute
// platform the guest imitates (computelimits.go), and the per-page CPU
// budget, in the platform's terms (docs/measuring.md, "Compute budget").
type computeOptions struct {
	enforced   bool          // compute.limits = "fastly": Fastly's request limits apply
	cpuLimit   time.Duration // platform CPU that ends a page; 0 = off
	maxRuntime time.Duration // wall clock that ends a request; 0 = off
	fastlyView bool          // compute.request_view = "fastly" (origin.go)
	cpuBudget  time.Duration // platform CPU per page; 0 = off
	cpuScale   float64       // platform CPU = native CPU * cpuScale
}

// platformCPU turns native CPU into the platform's.
func (c computeOptions) platformCPU(native time.Duration) time.Duration {
	return time.Duration(float64(native) * c.cpuScale)
}

// timedProcess runs the pipeline and returns its guest CPU (pageCPU): the
// same measure as `ssatd measure`, taken only while the page computes, so
// that the page holds an OS thread only then. ok is false where the clock
// is missing.
func (p *pipeline) timedProcess() (st rewrite.Stats, cpu time.Duration, ok bool, err error) {
	clock := p.cpu
	clock.auction = p.x.auction
	clock.begin()
	defer clock.end() // a panic in process leaves no thread locked
	limit := p.g.nativeCPULimit()
	if limit > 0 && clock.ok && !p.offline {
		p.dec = meteredBody{cpuMeter: &cpuMeter{r: p.dec, clock: clock, limit: limit}, Closer: p.dec}
	}
	st, err = p.process()
	cpu, ok = clock.end()
	if err == nil && limit > 0 && ok && !p.offline && cpu > limit {
		// The last read was under the limit, the end of the page (the
		// encoder's final block) went over it.
		err = errCPULimit
	}
	return st, cpu, ok, err
}

// meteredBody is the decoded origin body read through a cpuMeter.
type meteredBody struct {
	*cpuMeter
	io.Closer
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
		pathField(p.req.URL),
		zap.String("mode", string(x.mode)),
		zap.String("origin_coding", x.originCoding),
		zap.String("output_coding", string(p.coding)),
		zap.Float64("cpu_ms", millis(cpu)),
		zap.Float64("platform_cpu_ms", millis(platform)),
		zap.Float64("cpu_budget_ms", millis(g.cpuBudget)),
		zap.Float64("cpu_scale", g.cpuScale))
}

func computeOptionsOf(cc *config.ComputeConfig) computeOptions {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return computeOptions{
		enforced:   cc.Enforced(),
		cpuLimit:   ms(cc.CPULimitMS),
		maxRuntime: cc.MaxRuntime.Duration,
		fastlyView: cc.RequestView == config.RequestViewFastly,
		cpuBudget:  ms(cc.CPUBudgetMS),
		cpuScale:   cc.CPUScale,
	}
}
