package config

import (
	"fmt"
	"math"
	"time"
)

// Values of ComputeConfig.Limits.
const (
	ComputeLimitsNone   = "none"
	ComputeLimitsFastly = "fastly"
)

// Values of ComputeConfig.RequestView.
const (
	RequestViewSSATD  = "ssatd"
	RequestViewFastly = "fastly"
)

// Fastly Compute's documented limits per execution, which
// compute.limits = "fastly" applies
// (https://docs.fastly.com/products/compute-resource-limits).
const (
	FastlyCPULimitMS      = 50
	FastlyMaxRuntime      = 2 * time.Minute
	FastlyBackendRequests = 32
	FastlyHeapBytes       = 128 << 20
)

// maxCPUScale bounds compute.cpu_scale: a platform a hundred times slower
// than the machine that measured is a typo, not a calibration.
const maxCPUScale = 100

// Enforced reports whether the Fastly request and backend limits apply.
func (cc *ComputeConfig) Enforced() bool { return cc.Limits == ComputeLimitsFastly }

func (c *Config) validateCompute(p *problems) {
	cc := &c.Compute
	checkOneOf(p, "compute.limits", cc.Limits, ComputeLimitsNone, ComputeLimitsFastly)
	if cc.RequestView != "" {
		checkOneOf(p, "compute.request_view", cc.RequestView, RequestViewSSATD, RequestViewFastly)
	}
	c.resolveComputePreset()
	if !finiteNonNegative(cc.CPUBudgetMS) {
		p.addf("compute.cpu_budget_ms", "must be 0 (off) or a positive number of milliseconds, got %v", cc.CPUBudgetMS)
	}
	if !finiteNonNegative(cc.CPULimitMS) {
		p.addf("compute.cpu_limit_ms", "must be 0 (the compute.limits preset's) or a positive number of milliseconds, got %v", cc.CPULimitMS)
	}
	if math.IsNaN(cc.CPUScale) || cc.CPUScale <= 0 || cc.CPUScale > maxCPUScale {
		p.addf("compute.cpu_scale", "must be a factor above 0 and at most %d (1.0 = the platform runs as fast as this machine), got %v", maxCPUScale, cc.CPUScale)
	}
	if cc.MaxRuntime.Duration < 0 {
		p.addf("compute.max_runtime", "must be 0 (the compute.limits preset's) or a positive duration, got %s", cc.MaxRuntime)
	}
	if cc.CPULimitMS > 0 && cc.CPUBudgetMS > cc.CPULimitMS {
		// The budget warns before the limit ends the page; one above the
		// limit could never fire.
		p.addf("compute.cpu_budget_ms", "%v is above compute.cpu_limit_ms (%v): a page is ended at the limit before the budget could warn", cc.CPUBudgetMS, cc.CPULimitMS)
	}
	if cc.Enforced() {
		if n := c.BackendRequestsPerPage(); n > FastlyBackendRequests {
			p.addf("auction.openrtb", "%d endpoints and the origin make %d backend requests per page; Fastly Compute allows %d per execution (compute.limits = \"fastly\", https://docs.fastly.com/products/compute-resource-limits)",
				len(c.Auction.OpenRTB), n, FastlyBackendRequests)
		}
	}
}

// resolveComputePreset fills the keys left at 0 or "" from compute.limits,
// so that the effective configuration shows what runs.
func (c *Config) resolveComputePreset() {
	cc := &c.Compute
	if !cc.Enforced() {
		if cc.RequestView == "" {
			cc.RequestView = RequestViewSSATD
		}
		return
	}
	if cc.CPULimitMS == 0 {
		cc.CPULimitMS = FastlyCPULimitMS
	}
	if cc.MaxRuntime.Duration == 0 {
		cc.MaxRuntime.Duration = FastlyMaxRuntime
	}
	if cc.RequestView == "" {
		cc.RequestView = RequestViewFastly
	}
}

// BackendRequestsPerPage is the most backend requests one page can make:
// the origin fetch, and one bid request per OpenRTB endpoint when the
// auction runs that provider (internal/auction sends each endpoint one
// request per page, with no retries).
func (c *Config) BackendRequestsPerPage() int {
	n := 1
	if c.Auction.Enabled && c.Auction.Provider == AuctionProviderOpenRTB {
		n += len(c.Auction.OpenRTB)
	}
	return n
}

func finiteNonNegative(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
}

// computeWarnings are the [compute] warnings of config check.
func (c *Config) computeWarnings() []string {
	if !c.Compute.Enforced() {
		return nil
	}
	b := c.PageHeapBound()
	if b.Total() <= FastlyHeapBytes {
		return nil
	}
	return []string{fmt.Sprintf("a page can hold up to %.1f MiB (%s), past Fastly Compute's 128 MB heap per execution (https://docs.fastly.com/products/compute-resource-limits): such a page would run out of memory on Fastly; lower compression.brotli_window or compression.brotli_quality, or the number of auction.openrtb endpoints",
		float64(b.Total())/(1<<20), b)}
}
