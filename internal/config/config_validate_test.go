package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidateIsRepeatable(t *testing.T) {
	c := valid()
	c.Server.TrustedProxies = []string{"10.0.0.0/8"}
	c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/x"}}}
	for i := range 2 {
		if err := c.Validate(); err != nil {
			t.Fatalf("Validate #%d: %v", i+1, err)
		}
	}
	if n := len(c.Server.TrustedPrefixes); n != 1 {
		t.Errorf("TrustedPrefixes has %d entries after two Validate calls, want 1", n)
	}
	if n := len(c.CreativeOpportunities.Slots[0].Patterns); n != 1 {
		t.Errorf("Patterns has %d entries after two Validate calls, want 1", n)
	}
}

func TestValidateRules(t *testing.T) {
	slot := func(id string, patterns ...string) Slot { return Slot{ID: id, PagePatterns: patterns} }
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
		want   string
	}{
		{"listen without port", func(c *Config) { c.Server.Listen = "localhost" }, "server.listen", `"localhost"`},
		{"listen bad port", func(c *Config) { c.Server.Listen = ":99999" }, "server.listen", "65535"},
		{"listen service name", func(c *Config) { c.Server.Listen = ":http" }, "server.listen", "port"},
		{"admin listen empty", func(c *Config) { c.Server.AdminListen = "" }, "server.admin_listen", "host:port"},
		{"negative shutdown", func(c *Config) { c.Server.ShutdownTimeout.Duration = -time.Second }, "server.shutdown_timeout", "-1s"},
		{"negative drain period", func(c *Config) { c.Server.DrainPeriod.Duration = -2 * time.Second }, "server.drain_period", "-2s"},
		{"zero read header timeout", func(c *Config) { c.Server.ReadHeaderTimeout.Duration = 0 }, "server.read_header_timeout", "positive"},
		{"zero read timeout", func(c *Config) { c.Server.ReadTimeout.Duration = 0 }, "server.read_timeout", "positive"},
		{"negative idle timeout", func(c *Config) { c.Server.IdleTimeout.Duration = -1 }, "server.idle_timeout", "positive"},
		{"zero max header bytes", func(c *Config) { c.Server.MaxHeaderBytes = 0 }, "server.max_header_bytes", "positive"},
		{"zero max concurrent pages", func(c *Config) { c.Server.MaxConcurrentPages = 0 }, "server.max_concurrent_pages", "at least 1, got 0"},
		{"negative page queue timeout", func(c *Config) { c.Server.PageQueueTimeout.Duration = -time.Second }, "server.page_queue_timeout", "-1s"},
		{"bad cidr", func(c *Config) { c.Server.TrustedProxies = []string{"10.0.0.0/8", "10.0.0.0/33"} }, "server.trusted_proxies[1]", `"10.0.0.0/33"`},
		{"hostname proxy", func(c *Config) { c.Server.TrustedProxies = []string{"proxy.local"} }, "server.trusted_proxies[0]", "CIDR"},
		{"zoned proxy", func(c *Config) { c.Server.TrustedProxies = []string{"fe80::1%eth0"} }, "server.trusted_proxies[0]", "zone"},
		{"missing domain", func(c *Config) { c.Publisher.Domain = "" }, "publisher.domain", "required"},
		{"domain with scheme", func(c *Config) { c.Publisher.Domain = "https://www.example.com" }, "publisher.domain", "scheme"},
		{"domain with path", func(c *Config) { c.Publisher.Domain = "www.example.com/news" }, "publisher.domain", "path"},
		{"domain bad port", func(c *Config) { c.Publisher.Domain = "www.example.com:0" }, "publisher.domain", "port"},
		{"domain bad label", func(c *Config) { c.Publisher.Domain = "-bad.example.com" }, "publisher.domain", "invalid host name"},
		{"domain empty label", func(c *Config) { c.Publisher.Domain = "www..example.com" }, "publisher.domain", "invalid host name"},
		{"missing origin", func(c *Config) { c.Publisher.OriginURL = "" }, "publisher.origin_url", "required"},
		{"origin with path", func(c *Config) { c.Publisher.OriginURL = "https://o.example/x" }, "publisher.origin_url", `must be scheme://host[:port] with no path, got "https://o.example/x"`},
		{"origin without scheme", func(c *Config) { c.Publisher.OriginURL = "o.example" }, "publisher.origin_url", "scheme"},
		{"origin ftp", func(c *Config) { c.Publisher.OriginURL = "ftp://o.example" }, "publisher.origin_url", "http or https"},
		{"origin without host", func(c *Config) { c.Publisher.OriginURL = "https:///" }, "publisher.origin_url", "host"},
		{"origin opaque", func(c *Config) { c.Publisher.OriginURL = "https:o.example" }, "publisher.origin_url", "host"},
		{"origin with query", func(c *Config) { c.Publisher.OriginURL = "https://o.example/?a=1" }, "publisher.origin_url", "query"},
		{"origin with fragment", func(c *Config) { c.Publisher.OriginURL = "https://o.example#top" }, "publisher.origin_url", "fragment"},
		{"origin unparsable", func(c *Config) { c.Publisher.OriginURL = "https://o.example:port" }, "publisher.origin_url", "http(s)://host[:port]"},
		{"origin bad host", func(c *Config) { c.Publisher.OriginURL = "https://bad_host-.example" }, "publisher.origin_url", "invalid host name"},
		{"host override with scheme", func(c *Config) { c.Publisher.OriginHostHeaderOverride = "http://x.example" }, "publisher.origin_host_header_override", "scheme"},
		{"allowed host with path", func(c *Config) { c.Publisher.AllowedHosts = []string{"ok.example", "bad.example/x"} }, "publisher.allowed_hosts[1]", `"bad.example/x"`},
		{"allowed host empty", func(c *Config) { c.Publisher.AllowedHosts = []string{""} }, "publisher.allowed_hosts[0]", "empty"},
		{"zero max origin response", func(c *Config) { c.Publisher.MaxOriginResponseBytes = 0 }, "publisher.max_origin_response_bytes", "positive"},
		{"negative max decoded body", func(c *Config) { c.Publisher.MaxDecodedBodyBytes = -5 }, "publisher.max_decoded_body_bytes", "positive"},
		{"zero connect timeout", func(c *Config) { c.Publisher.OriginConnectTimeout.Duration = 0 }, "publisher.origin_connect_timeout", "positive"},
		{"zero header timeout", func(c *Config) { c.Publisher.OriginHeaderTimeout.Duration = 0 }, "publisher.origin_header_timeout", "positive"},
		{"zero idle timeout", func(c *Config) { c.Publisher.OriginIdleTimeout.Duration = 0 }, "publisher.origin_idle_timeout", "positive"},
		{"bad offload encoding", func(c *Config) { c.Publisher.OffloadOriginAcceptEncoding = "gzip" }, "publisher.offload_origin_accept_encoding", `"identity" "negotiate"`},
		{"rewrite type with parameter", func(c *Config) { c.Publisher.RewriteContentTypes = []string{"text/css", "text/css; charset=utf-8"} }, "publisher.rewrite_content_types[1]", "without parameters"},
		{"rewrite type not a media type", func(c *Config) { c.Publisher.RewriteContentTypes = []string{"css"} }, "publisher.rewrite_content_types[0]", "media type"},
		{"rewrite type wildcard major", func(c *Config) { c.Publisher.RewriteContentTypes = []string{"*/*"} }, "publisher.rewrite_content_types[0]", "subtype"},
		{"gzip level 0", func(c *Config) { c.Compression.GzipLevel = 0 }, "compression.gzip_level", "between 1 and 9"},
		{"gzip level 10", func(c *Config) { c.Compression.GzipLevel = 10 }, "compression.gzip_level", "between 1 and 9"},
		{"brotli quality 12", func(c *Config) { c.Compression.BrotliQuality = 12 }, "compression.brotli_quality", "between 0 and 11"},
		{"brotli quality -1", func(c *Config) { c.Compression.BrotliQuality = -1 }, "compression.brotli_quality", "between 0 and 11"},
		{"brotli window 9", func(c *Config) { c.Compression.BrotliWindow = 9 }, "compression.brotli_window", "between 10 and 24"},
		{"brotli window 25", func(c *Config) { c.Compression.BrotliWindow = 25 }, "compression.brotli_window", "between 10 and 24"},
		{"unknown platform", func(c *Config) { c.Platform.DeliveryCompression = "cloud" }, "platform.delivery_compression", `"cloud"`},
		{"delivery gzip 0", func(c *Config) { c.Delivery.GzipLevel = 0 }, "delivery.gzip_level", "between 1 and 9"},
		{"delivery brotli 12", func(c *Config) { c.Delivery.BrotliQuality = 12 }, "delivery.brotli_quality", "between 0 and 11"},
		{"negative min size", func(c *Config) { c.Delivery.MinSize = -1 }, "delivery.min_size", "zero or positive"},
		{"zero auction timeout", func(c *Config) { c.Auction.TimeoutMS = 0 }, "auction.timeout_ms", "positive"},
		{"unknown provider", func(c *Config) { c.Auction.Provider = "prebid" }, "auction.provider", `"prebid"`},
		{"slot without id", func(c *Config) { c.CreativeOpportunities.Slots = []Slot{slot("", "/")} }, "creative_opportunities.slot[0].id", "required"},
		{"slot without patterns", func(c *Config) { c.CreativeOpportunities.Slots = []Slot{slot("a")} }, "creative_opportunities.slot[0].page_patterns", "at least one"},
		{"duplicate slot id", func(c *Config) {
			c.CreativeOpportunities.Slots = []Slot{slot("a", "/"), slot("b", "/"), slot("a", "/x")}
		}, "creative_opportunities.slot[2].id", "slot[0]"},
		{"malformed glob", func(c *Config) { c.CreativeOpportunities.Slots = []Slot{slot("a", "/ok", "/a**b")} }, "creative_opportunities.slot[0].page_patterns[1]", `"/a**b"`},
		{"relative glob", func(c *Config) { c.CreativeOpportunities.Slots = []Slot{slot("a", "news/**")} }, "creative_opportunities.slot[0].page_patterns[0]", `start with "/"`},
		{"bad glob class", func(c *Config) {
			c.CreativeOpportunities.Slots = []Slot{slot("a", "/"), slot("b", "/", "/x", "/[")}
		}, "creative_opportunities.slot[1].page_patterns[2]", "syntax error"},
		{"format of three", func(c *Config) {
			s := slot("a", "/")
			s.Formats = [][]int{{300, 250}, {1, 2, 3}}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, "creative_opportunities.slot[0].formats[1]", "[width, height]"},
		{"format zero width", func(c *Config) {
			s := slot("a", "/")
			s.Formats = [][]int{{0, 250}}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, "creative_opportunities.slot[0].formats[0]", "positive"},
		{"format negative height", func(c *Config) {
			s := slot("a", "/")
			s.Formats = [][]int{{300, -1}}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, "creative_opportunities.slot[0].formats[0]", "positive"},
		{"targeting int", func(c *Config) {
			s := slot("a", "/")
			s.Targeting = map[string]any{"ok": "x", "n": int64(3)}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, "creative_opportunities.slot[0].targeting.n", "string or an array of strings"},
		{"targeting mixed array", func(c *Config) {
			s := slot("a", "/")
			s.Targeting = map[string]any{"kw": []any{"a", int64(1)}}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, "creative_opportunities.slot[0].targeting.kw", "array of strings"},
		{"targeting table", func(c *Config) {
			s := slot("a", "/")
			s.Targeting = map[string]any{"odd key": map[string]any{"x": "y"}}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, `creative_opportunities.slot[0].targeting."odd key"`, "string"},
		{"targeting empty key", func(c *Config) {
			s := slot("a", "/")
			s.Targeting = map[string]any{"": "x"}
			c.CreativeOpportunities.Slots = []Slot{s}
		}, `creative_opportunities.slot[0].targeting.""`, "empty"},
		{"static bid unknown slot", func(c *Config) {
			c.CreativeOpportunities.Slots = []Slot{slot("top", "/")}
			c.Auction.StaticBids = []StaticBid{{SlotID: "top"}, {SlotID: "bottom"}}
		}, "auction.static_bids[1].slot_id", `"bottom"`},
		{"static bid without slot", func(c *Config) { c.Auction.StaticBids = []StaticBid{{HbPb: "1.00"}} }, "auction.static_bids[0].slot_id", "required"},
		{"empty bot user agent", func(c *Config) { c.Bots.UserAgents = []string{"Googlebot", " "} }, "bots.user_agents[1]", "empty"},
		{"negative cpu budget", func(c *Config) { c.Compute.CPUBudgetMS = -1 }, "compute.cpu_budget_ms", "got -1"},
		{"infinite cpu budget", func(c *Config) { c.Compute.CPUBudgetMS = math.Inf(1) }, "compute.cpu_budget_ms", "positive"},
		{"zero cpu scale", func(c *Config) { c.Compute.CPUScale = 0 }, "compute.cpu_scale", "got 0"},
		{"huge cpu scale", func(c *Config) { c.Compute.CPUScale = 1000 }, "compute.cpu_scale", "at most 100"},
		{"NaN cpu scale", func(c *Config) { c.Compute.CPUScale = math.NaN() }, "compute.cpu_scale", "NaN"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s: Validate succeeded, want an error for %s", tt.name, tt.key)
			continue
		}
		var errs *Errors
		if !errors.As(err, &errs) {
			t.Errorf("%s: error is %T, want *Errors", tt.name, err)
			continue
		}
		if len(errs.List) != 1 {
			t.Errorf("%s: got %d problems, want exactly 1:\n%v", tt.name, len(errs.List), err)
			continue
		}
		msg := errs.List[0].Error()
		if !strings.HasPrefix(msg, tt.key+": ") {
			t.Errorf("%s: problem %q does not start with key %q", tt.name, msg, tt.key)
		}
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s: problem %q does not mention %q", tt.name, msg, tt.want)
		}
	}
}

func TestValidateAccepts(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"zero shutdown timeout", func(c *Config) { c.Server.ShutdownTimeout.Duration = 0 }},
		{"zero drain period", func(c *Config) { c.Server.DrainPeriod.Duration = 0 }},
		{"listen ipv6", func(c *Config) { c.Server.Listen = "[::]:80" }},
		{"domain with port", func(c *Config) { c.Publisher.Domain = "localhost:8080" }},
		{"domain ipv4", func(c *Config) { c.Publisher.Domain = "203.0.113.9" }},
		{"domain bracketed ipv6", func(c *Config) { c.Publisher.Domain = "[2001:db8::1]" }},
		{"domain ipv6 with port", func(c *Config) { c.Publisher.Domain = "[2001:db8::1]:8443" }},
		{"origin http with port and slash", func(c *Config) { c.Publisher.OriginURL = "http://10.0.0.5:8080/" }},
		{"min size zero", func(c *Config) { c.Delivery.MinSize = 0 }},
		{"brotli quality 0", func(c *Config) { c.Compression.BrotliQuality = 0 }},
		{"static provider with bid", func(c *Config) {
			c.Auction.Provider = "static"
			c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/**"}}}
			c.Auction.StaticBids = []StaticBid{{SlotID: "a"}}
		}},
		{"string slice targeting", func(c *Config) {
			c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/"}, Targeting: map[string]any{"k": []string{"v"}}}}
		}},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", tt.name, err)
		}
	}
}

func TestAllProblemsReportedTogether(t *testing.T) {
	doc := `
typo = 1

[server]
listen = "nope"
trusted_proxies = ["10.0.0.0/99"]

[publisher]
origin_url = "https://o.example/x"

[compression]
gzip_level = 0

[[creative_opportunities.slot]]
page_patterns = []
`
	_, err := Load(writeFile(t, doc), []string{"SSATD_DELIVERY_MIN_SIZE=lots"})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error = %v (%T), want *Errors", err, err)
	}
	want := []string{
		`line 2: typo: unknown key`,
		"SSATD_DELIVERY_MIN_SIZE",
		"server.listen:",
		"server.trusted_proxies[0]:",
		"publisher.domain:",
		"publisher.origin_url:",
		"compression.gzip_level:",
		"creative_opportunities.slot[0].id:",
		"creative_opportunities.slot[0].page_patterns:",
	}
	if len(errs.List) != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", len(errs.List), len(want), err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(errs.List) {
		t.Errorf("Error() has %d lines for %d problems", len(lines), len(errs.List))
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("combined error does not mention %q:\n%v", w, err)
		}
	}
	if got := len(errs.Unwrap()); got != len(errs.List) {
		t.Errorf("Unwrap returned %d errors, want %d", got, len(errs.List))
	}
}

func TestWarnings(t *testing.T) {
	const (
		diag    = "debug.diagnostics_headers is on: responses expose internal processing details"
		mode    = "debug.allow_mode_override is on"
		inert   = `publisher.ssat_compression_offload_enabled is on but platform.delivery_compression is "unavailable": offload is inert`
		noSlots = "auction.enabled is on but no creative_opportunities.slot is configured: no page is ever SSAT-eligible"
		off     = "auction.enabled is off: no page is ever SSAT-eligible"
		nothing = "auction.enabled is off and no creative_opportunities.slot is configured: no page is ever SSAT-eligible"
	)
	// Every case starts from a configuration in which some page is
	// SSAT-eligible, so that only the mutation can cause a warning.
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{"defaults", func(*Config) {}, nil},
		{"diagnostics", func(c *Config) { c.Debug.DiagnosticsHeaders = true }, []string{diag}},
		{"mode override", func(c *Config) { c.Debug.AllowModeOverride = true }, []string{mode}},
		{"offload inert", func(c *Config) {
			c.Publisher.SSATCompressionOffloadEnabled = true
			c.Platform.DeliveryCompression = "unavailable"
		}, []string{inert}},
		{"offload negotiate is fine", func(c *Config) {
			c.Publisher.SSATCompressionOffloadEnabled = true
			c.Publisher.OffloadOriginAcceptEncoding = "negotiate"
		}, nil},
		{"unavailable without offload is fine", func(c *Config) { c.Platform.DeliveryCompression = "unavailable" }, nil},
		{"auction without slots", func(c *Config) { c.CreativeOpportunities.Slots = nil }, []string{noSlots}},
		{"slots without auction", func(c *Config) { c.Auction.Enabled = false }, []string{off}},
		{"neither, as in configs/minimal.toml", func(c *Config) {
			c.Auction.Enabled = false
			c.CreativeOpportunities.Slots = nil
		}, []string{nothing}},
		{"everything", func(c *Config) {
			c.Debug.DiagnosticsHeaders = true
			c.Debug.AllowModeOverride = true
			c.Publisher.SSATCompressionOffloadEnabled = true
			c.Platform.DeliveryCompression = "unavailable"
			c.CreativeOpportunities.Slots = nil
		}, []string{diag, mode, inert, noSlots}},
	}
	for _, tt := range tests {
		c := valid()
		c.Auction.Enabled = true
		c.CreativeOpportunities.Slots = []Slot{{ID: "a", PagePatterns: []string{"/"}}}
		tt.mutate(c)
		got := c.Warnings()
		if len(got) != len(tt.want) {
			t.Errorf("%s: Warnings() = %q, want %d warnings", tt.name, got, len(tt.want))
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tt.want[i]) {
				t.Errorf("%s: warning %d = %q, want prefix %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}
