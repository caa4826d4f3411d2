package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func openRTBEndpoints(n int) []OpenRTBEndpoint {
	eps := make([]OpenRTBEndpoint, n)
	for i := range eps {
		eps[i] = OpenRTBEndpoint{Name: fmt.Sprintf("e%d", i), URL: fmt.Sprintf("https://bid%d.example.com/openrtb2/auction", i)}
	}
	return eps
}

func withOpenRTB(c *Config, n int) {
	c.Auction.Enabled = true
	c.Auction.Provider = AuctionProviderOpenRTB
	c.Auction.OpenRTB = openRTBEndpoints(n)
	c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/"}}}
}

// compute.limits fills the keys left unset, and keeps those set.
func TestComputePresets(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Compute)
		cpu     float64
		runtime time.Duration
		view    string
	}{
		{"none is off", func(*Compute) {}, 0, 0, RequestViewSSATD},
		{"fastly fills Fastly's limits", func(c *Compute) { c.Limits = ComputeLimitsFastly }, FastlyCPULimitMS, 2 * time.Minute, RequestViewFastly},
		{"fastly keeps explicit keys", func(c *Compute) {
			c.Limits, c.CPULimitMS, c.MaxRuntime.Duration, c.RequestView = ComputeLimitsFastly, 2.5, time.Second, RequestViewSSATD
		}, 2.5, time.Second, RequestViewSSATD},
		{"none with an explicit CPU limit", func(c *Compute) { c.CPULimitMS = 0.25 }, 0.25, 0, RequestViewSSATD},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(&c.Compute)
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := c.Compute; got.CPULimitMS != tt.cpu || got.MaxRuntime.Duration != tt.runtime || got.RequestView != tt.view {
			t.Errorf("%s: cpu_limit_ms %v, max_runtime %v, request_view %q; want %v, %v, %q",
				tt.name, got.CPULimitMS, got.MaxRuntime, got.RequestView, tt.cpu, tt.runtime, tt.view)
		}
	}
}

// Compute is ComputeConfig, named short for the table above.
type Compute = ComputeConfig

// Each bad [compute] or [geo] value is one problem naming its key.
func TestComputeAndGeoRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
		want   string
	}{
		{"unknown preset", func(c *Config) { c.Compute.Limits = "lambda" }, "compute.limits", `"lambda"`},
		{"unknown request view", func(c *Config) { c.Compute.RequestView = "cloudflare" }, "compute.request_view", `"cloudflare"`},
		{"negative cpu limit", func(c *Config) { c.Compute.CPULimitMS = -1 }, "compute.cpu_limit_ms", "got -1"},
		{"negative runtime", func(c *Config) { c.Compute.MaxRuntime.Duration = -time.Second }, "compute.max_runtime", "-1s"},
		{"budget above the explicit limit", func(c *Config) { c.Compute.CPULimitMS, c.Compute.CPUBudgetMS = 10, 20 }, "compute.cpu_budget_ms", "above compute.cpu_limit_ms (10)"},
		{"budget above Fastly's limit", func(c *Config) { c.Compute.Limits, c.Compute.CPUBudgetMS = ComputeLimitsFastly, 60 }, "compute.cpu_budget_ms", "above compute.cpu_limit_ms (50)"},
		{"33 backend requests under fastly", func(c *Config) {
			withOpenRTB(c, 32)
			c.Compute.Limits = ComputeLimitsFastly
		}, "auction.openrtb", "make 33 backend requests per page; Fastly Compute allows 32"},
		{"bad country", func(c *Config) { c.Geo.Country = "DEU" }, "geo.country", "alpha-2"},
		{"latitude out of range", func(c *Config) { c.Geo.Latitude = 91 }, "geo.latitude", "got 91"},
		{"longitude out of range", func(c *Config) { c.Geo.Longitude = -181 }, "geo.longitude", "got -181"},
		{"bad country header", func(c *Config) { c.Geo.CountryHeader = "CF IPCountry" }, "geo.country_header", "not a valid HTTP header name"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(c)
		err := c.Validate()
		var errs *Errors
		if !errors.As(err, &errs) || len(errs.List) != 1 {
			t.Errorf("%s: Validate() = %v, want exactly one problem", tt.name, err)
			continue
		}
		if msg := errs.List[0].Error(); !strings.HasPrefix(msg, tt.key+": ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: problem %q, want key %q and %q", tt.name, msg, tt.key, tt.want)
		}
	}
}

// What passes: the limit itself, the budget at the limit, and endpoints
// past 32 where Fastly's limits are off.
func TestComputeAccepts(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"31 endpoints and the origin under fastly", func(c *Config) { withOpenRTB(c, 31); c.Compute.Limits = ComputeLimitsFastly }},
		{"40 endpoints without limits", func(c *Config) { withOpenRTB(c, 40) }},
		{"budget at the limit", func(c *Config) { c.Compute.Limits, c.Compute.CPUBudgetMS = ComputeLimitsFastly, 50 }},
		{"fractional limit", func(c *Config) { c.Compute.CPULimitMS = 0.001 }},
		{"static geo", func(c *Config) {
			c.Geo = GeoConfig{Country: "de", Region: "BE", City: "Berlin", Latitude: 52.52, Longitude: 13.405}
		}},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// config check warns when a page can hold more than Fastly's 128 MB heap,
// and only under compute.limits = "fastly".
func TestHeapBoundWarning(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		warn   bool
	}{
		{"defaults under fastly", func(*Config) {}, false},
		{"brotli 11 with a 16 MiB window", func(c *Config) { c.Compression.BrotliQuality, c.Compression.BrotliWindow = 11, 24 }, true},
		{"31 endpoints", func(c *Config) { withOpenRTB(c, 31) }, false},
		{"brotli 10 with a 4 MiB window", func(c *Config) { c.Compression.BrotliQuality, c.Compression.BrotliWindow = 10, 22 }, false},
		{"31 endpoints and brotli 10 with a 4 MiB window", func(c *Config) {
			withOpenRTB(c, 31)
			c.Compression.BrotliQuality, c.Compression.BrotliWindow = 10, 22
		}, true},
	}
	for _, tt := range tests {
		for _, limits := range []string{ComputeLimitsFastly, ComputeLimitsNone} {
			c := valid()
			c.Auction.Enabled = true
			c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/"}}}
			c.Compute.Limits = limits
			tt.mutate(c)
			if err := c.Validate(); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			var heap []string
			for _, w := range c.Warnings() {
				if strings.Contains(w, "128 MB heap") {
					heap = append(heap, w)
				}
			}
			want := tt.warn && limits == ComputeLimitsFastly
			if (len(heap) == 1) != want || len(heap) > 1 {
				t.Errorf("%s, limits %s: heap warnings %q, want one: %v (bound %v)", tt.name, limits, heap, want, c.PageHeapBound())
			}
		}
	}
}

// The bound adds up its parts, each counted where the configuration
// says it exists.
func TestPageHeapBoundParts(t *testing.T) {
	c := valid()
	withOpenRTB(c, 3)
	b := c.PageHeapBound()
	if b.Auction != 3*2<<20 {
		t.Errorf("auction part %d, want three answers of 1 MiB, counted twice", b.Auction)
	}
	if b.Total() != b.Codecs+b.TagBuffer+b.Buffers+b.Auction || b.Codecs < brotliDecoderBytes {
		t.Errorf("bound %+v: total %d", b, b.Total())
	}
	c.Auction.Enabled = false
	if c.PageHeapBound().Auction != 0 {
		t.Error("no auction, yet the bound counts bid answers")
	}
}

// A config file names the keys; the env sets them too.
func TestComputeKeysLoad(t *testing.T) {
	p := writeFile(t, minimalTOML+`
[compute]
limits = "fastly"
cpu_limit_ms = 12.5
max_runtime = "30s"
request_view = "ssatd"

[geo]
country = "FR"
country_header = "CF-IPCountry"
`)
	c, err := Load(p, []string{"SSATD_GEO_CITY=Paris", "SSATD_COMPUTE_CPU_SCALE=2"})
	if err != nil {
		t.Fatal(err)
	}
	cc := c.Compute
	if cc.Limits != "fastly" || cc.CPULimitMS != 12.5 || cc.MaxRuntime.Duration != 30*time.Second || cc.RequestView != "ssatd" || cc.CPUScale != 2 {
		t.Errorf("compute %+v", cc)
	}
	if c.Geo.Country != "FR" || c.Geo.City != "Paris" || c.Geo.CountryHeader != "CF-IPCountry" {
		t.Errorf("geo %+v", c.Geo)
	}
}
