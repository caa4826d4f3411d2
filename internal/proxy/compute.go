package proxy

import (
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
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

// spent records the guest CPU of a page served complete (the Result's
// CPU, the same measure as `ssatd measure`): the metric, the access line's
// figure, and a warning when it went over the budget.
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
		zap.String("output_coding", string(p.out)),
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
