package proxy

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/cputime"
)

func budget(ms, scale float64) func(*config.Config) {
	return func(c *config.Config) { c.Compute.CPUBudgetMS, c.Compute.CPUScale = ms, scale }
}

// bigPage is the test page with enough text that rewriting it takes
// measurable CPU.
func (e *env) bigPage() []byte {
	return []byte(strings.Replace(e.page(), "</body>", strings.Repeat("<p>lorem ipsum dolor sit amet</p>", 20000)+"</body>", 1))
}

// A page over compute.cpu_budget_ms logs one warning with the path, mode,
// coding and CPU, and counts it; a page within the budget, or with the
// budget off, does neither.
func TestComputeBudgetWarning(t *testing.T) {
	if cputime.Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	tests := []struct {
		name      string
		budgetMS  float64
		wantFires bool
	}{
		{"over a 1µs budget", 0.001, true},
		{"within a one-minute budget", 60000, false},
		{"budget off", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, serveCoded(func() []byte { return e.bigPage() }, compress.Gzip), budget(tt.budgetMS, 1))
			e.mustGet(t, "/article", navigate, header("Accept-Encoding", "gzip"))
			line := e.accessLine(t, 1)
			cpu, ok := line["guest_cpu_ms"].(float64)
			if !ok || cpu <= 0 {
				t.Fatalf("access line guest_cpu_ms = %v, want a positive CPU time", line["guest_cpu_ms"])
			}
			warnings := e.logs.FilterMessage("compute budget exceeded").All()
			exceeded := e.guest.Metrics().Sum("ssatd_compute_budget_exceeded_total", map[string]string{"mode": "mirror", "origin_coding": "gzip"})
			if !tt.wantFires {
				if len(warnings) != 0 || exceeded != 0 {
					t.Fatalf("%d warnings, metric %v; want none", len(warnings), exceeded)
				}
				return
			}
			if len(warnings) != 1 || exceeded != 1 {
				t.Fatalf("%d warnings, metric %v; want exactly one each", len(warnings), exceeded)
			}
			w := warnings[0].ContextMap()
			if w["path"] != "/article" || w["mode"] != "mirror" || w["origin_coding"] != "gzip" || w["cpu_ms"] != cpu {
				t.Errorf("warning fields %v; want path /article, mode mirror, origin_coding gzip, cpu_ms %v", w, cpu)
			}
			if n := e.guest.Metrics().Sum("ssatd_guest_cpu_seconds", map[string]string{"mode": "mirror", "origin_coding": "gzip"}); n != 1 {
				t.Errorf("guest CPU histogram has %v observations, want 1", n)
			}
		})
	}
}

// With diagnostics on, the trailer reports the guest CPU scaled by
// compute.cpu_scale, while the access line keeps the native figure.
func TestDiagnosticsReportScaledCPU(t *testing.T) {
	if cputime.Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	const scale = 40
	var e *env
	e = newEnv(t, serveCoded(func() []byte { return e.bigPage() }, compress.Gzip), budget(0, scale), diagnostics)
	resp, _ := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	scaled, err := strconv.ParseFloat(resp.Trailer.Get(DiagGuestCPUMillis), 64)
	if err != nil {
		t.Fatalf("%s trailer %q: %v", DiagGuestCPUMillis, resp.Trailer.Get(DiagGuestCPUMillis), err)
	}
	native, _ := e.accessLine(t, 1)["guest_cpu_ms"].(float64)
	if native <= 0 || math.Abs(scaled-native*scale) > 0.01 {
		t.Errorf("trailer %v ms, access line %v ms native: want trailer = native × %d", scaled, native, scale)
	}
}
