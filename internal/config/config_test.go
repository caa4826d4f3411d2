package config

import (
	"bytes"
	"errors"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ssatd.toml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// valid returns Defaults plus the required keys, the smallest config that
// passes Validate.
func valid() *Config {
	c := Defaults()
	c.Publisher.Domain = "www.example.com"
	c.Publisher.OriginURL = "https://origin.example.com"
	return c
}

const minimalTOML = `
[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"
`

func TestDefaults(t *testing.T) {
	c := Defaults()
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"server.listen", c.Server.Listen, ":8080"},
		{"server.admin_listen", c.Server.AdminListen, "127.0.0.1:9090"},
		{"server.drain_period", c.Server.DrainPeriod.Duration, 5 * time.Second},
		{"server.shutdown_timeout", c.Server.ShutdownTimeout.Duration, 15 * time.Second},
		{"server.trusted_proxies", len(c.Server.TrustedProxies), 0},
		{"server.read_header_timeout", c.Server.ReadHeaderTimeout.Duration, 10 * time.Second},
		{"server.read_timeout", c.Server.ReadTimeout.Duration, 30 * time.Second},
		{"server.idle_timeout", c.Server.IdleTimeout.Duration, 120 * time.Second},
		{"server.max_header_bytes", c.Server.MaxHeaderBytes, 65536},
		{"server.max_concurrent_pages", c.Server.MaxConcurrentPages, PagesPerCore * runtime.GOMAXPROCS(0)},
		{"server.page_queue_timeout", c.Server.PageQueueTimeout.Duration, 500 * time.Millisecond},
		{"server.ready_requires_origin", c.Server.ReadyRequiresOrigin, false},
		{"publisher.domain", c.Publisher.Domain, ""},
		{"publisher.origin_url", c.Publisher.OriginURL, ""},
		{"publisher.origin_host_header_override", c.Publisher.OriginHostHeaderOverride, ""},
		{"publisher.allowed_hosts", len(c.Publisher.AllowedHosts), 0},
		{"publisher.max_origin_response_bytes", c.Publisher.MaxOriginResponseBytes, int64(10485760)},
		{"publisher.max_decoded_body_bytes", c.Publisher.MaxDecodedBodyBytes, int64(67108864)},
		{"publisher.origin_connect_timeout", c.Publisher.OriginConnectTimeout.Duration, 5 * time.Second},
		{"publisher.origin_header_timeout", c.Publisher.OriginHeaderTimeout.Duration, 15 * time.Second},
		{"publisher.origin_idle_timeout", c.Publisher.OriginIdleTimeout.Duration, 15 * time.Second},
		{"publisher.ssat_compression_offload_enabled", c.Publisher.SSATCompressionOffloadEnabled, false},
		{"publisher.offload_origin_accept_encoding", c.Publisher.OffloadOriginAcceptEncoding, "identity"},
		{"compression.gzip_level", c.Compression.GzipLevel, 6},
		{"compression.brotli_quality", c.Compression.BrotliQuality, 4},
		{"compression.brotli_window", c.Compression.BrotliWindow, 20},
		{"platform.delivery_compression", c.Platform.DeliveryCompression, "builtin"},
		{"delivery.gzip_level", c.Delivery.GzipLevel, 1},
		{"delivery.brotli_quality", c.Delivery.BrotliQuality, 1},
		{"delivery.min_size", c.Delivery.MinSize, 0},
		{"delivery.zstd", c.Delivery.Zstd, false},
		{"auction.enabled", c.Auction.Enabled, false},
		{"auction.timeout_ms", c.Auction.TimeoutMS, 500},
		{"auction.provider", c.Auction.Provider, "none"},
		{"auction.static_bids", len(c.Auction.StaticBids), 0},
		{"creative_opportunities.slot", len(c.CreativeOpportunities.Slots), 0},
		{"bots.user_agents", c.Bots.UserAgents, []string{"Googlebot", "Bingbot", "AhrefsBot", "SemrushBot", "DotBot"}},
		{"debug.diagnostics_headers", c.Debug.DiagnosticsHeaders, false},
		{"debug.allow_mode_override", c.Debug.AllowModeOverride, false},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}

func TestDefaultsNeedOnlyTheRequiredKeys(t *testing.T) {
	err := Defaults().Validate()
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Validate() on bare defaults = %v, want *Errors", err)
	}
	var keys []string
	for _, e := range errs.List {
		keys = append(keys, strings.SplitN(e.Error(), ":", 2)[0])
	}
	if want := []string{"publisher.domain", "publisher.origin_url"}; !slices.Equal(keys, want) {
		t.Errorf("problems on bare defaults name %v, want exactly %v; full error:\n%v", keys, want, err)
	}
	if err := valid().Validate(); err != nil {
		t.Errorf("Validate() with required keys set: %v", err)
	}
}

const fullTOML = `
[server]
listen = "0.0.0.0:8443"
admin_listen = "[::1]:9191"
drain_period = "0s"
shutdown_timeout = "0s"
trusted_proxies = ["10.0.0.0/8", "192.168.1.7", "2001:db8::/32"]
read_header_timeout = "2s"
read_timeout = "1m"
idle_timeout = "90s"
max_header_bytes = 32768

[publisher]
domain = "WWW.Example.COM"
origin_url = "https://Origin.Example.com:8443/"
origin_host_header_override = "www.example.com"
allowed_hosts = ["example.com", "Static.Example.com:8080"]
max_origin_response_bytes = 2048
max_decoded_body_bytes = 4096
origin_connect_timeout = "1s"
origin_header_timeout = "3s"
origin_idle_timeout = "4s"
ssat_compression_offload_enabled = true
offload_origin_accept_encoding = "negotiate"

[compression]
gzip_level = 9
brotli_quality = 11
brotli_window = 24

[platform]
delivery_compression = "external"

[delivery]
gzip_level = 2
brotli_quality = 3
min_size = 1024
zstd = true

[auction]
enabled = true
timeout_ms = 250
provider = "static"

[[auction.static_bids]]
slot_id = "top"
hb_pb = "1.20"
hb_bidder = "appnexus"
w = 728
h = 90
hb_adid = "abc123"
adm = "<div>ad</div>"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/", "/news/**"]
formats = [[728, 90], [970, 250]]
gam_unit_path = "/1234/top"
targeting = { pos = "atf", sections = ["news", "home"] }

[[creative_opportunities.slot]]
id = "side"
page_patterns = ["/**/*.html"]
formats = [[300, 250]]
div_id = "ad-side"

[bots]
user_agents = ["Googlebot"]

[debug]
diagnostics_headers = true
allow_mode_override = true
`

func TestLoadFullExample(t *testing.T) {
	c, err := Load(writeFile(t, fullTOML), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	top := c.CreativeOpportunities.Slots[0]
	side := c.CreativeOpportunities.Slots[1]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"server.listen", c.Server.Listen, "0.0.0.0:8443"},
		{"server.admin_listen", c.Server.AdminListen, "[::1]:9191"},
		{"server.drain_period", c.Server.DrainPeriod.Duration, time.Duration(0)},
		{"server.shutdown_timeout", c.Server.ShutdownTimeout.Duration, time.Duration(0)},
		{"server.trusted_proxies", c.Server.TrustedProxies, []string{"10.0.0.0/8", "192.168.1.7", "2001:db8::/32"}},
		{"server.read_header_timeout", c.Server.ReadHeaderTimeout.Duration, 2 * time.Second},
		{"server.read_timeout", c.Server.ReadTimeout.Duration, time.Minute},
		{"server.idle_timeout", c.Server.IdleTimeout.Duration, 90 * time.Second},
		{"server.max_header_bytes", c.Server.MaxHeaderBytes, 32768},
		{"publisher.domain", c.Publisher.Domain, "www.example.com"},
		{"publisher.origin_url", c.Publisher.OriginURL, "https://Origin.Example.com:8443/"},
		{"publisher.origin_host_header_override", c.Publisher.OriginHostHeaderOverride, "www.example.com"},
		{"publisher.allowed_hosts", c.Publisher.AllowedHosts, []string{"example.com", "static.example.com:8080"}},
		{"publisher.max_origin_response_bytes", c.Publisher.MaxOriginResponseBytes, int64(2048)},
		{"publisher.max_decoded_body_bytes", c.Publisher.MaxDecodedBodyBytes, int64(4096)},
		{"publisher.origin_connect_timeout", c.Publisher.OriginConnectTimeout.Duration, time.Second},
		{"publisher.origin_header_timeout", c.Publisher.OriginHeaderTimeout.Duration, 3 * time.Second},
		{"publisher.origin_idle_timeout", c.Publisher.OriginIdleTimeout.Duration, 4 * time.Second},
		{"publisher.ssat_compression_offload_enabled", c.Publisher.SSATCompressionOffloadEnabled, true},
		{"publisher.offload_origin_accept_encoding", c.Publisher.OffloadOriginAcceptEncoding, "negotiate"},
		{"compression.gzip_level", c.Compression.GzipLevel, 9},
		{"compression.brotli_quality", c.Compression.BrotliQuality, 11},
		{"compression.brotli_window", c.Compression.BrotliWindow, 24},
		{"platform.delivery_compression", c.Platform.DeliveryCompression, "external"},
		{"delivery.gzip_level", c.Delivery.GzipLevel, 2},
		{"delivery.brotli_quality", c.Delivery.BrotliQuality, 3},
		{"delivery.min_size", c.Delivery.MinSize, 1024},
		{"delivery.zstd", c.Delivery.Zstd, true},
		{"auction.enabled", c.Auction.Enabled, true},
		{"auction.timeout_ms", c.Auction.TimeoutMS, 250},
		{"auction.provider", c.Auction.Provider, "static"},
		{"auction.static_bids", c.Auction.StaticBids, []StaticBid{{
			SlotID: "top", HbPb: "1.20", HbBidder: "appnexus", W: 728, H: 90, HbAdid: "abc123", Adm: "<div>ad</div>",
		}}},
		{"slot[0].id", top.ID, "top"},
		{"slot[0].page_patterns", top.PagePatterns, []string{"/", "/news/**"}},
		{"slot[0].formats", top.Formats, [][]int{{728, 90}, {970, 250}}},
		{"slot[0].gam_unit_path", top.GAMUnitPath, "/1234/top"},
		{"slot[0].div_id", top.DivID, "top"},
		{"slot[0].targeting", top.Targeting, map[string]any{"pos": "atf", "sections": []string{"news", "home"}}},
		{"slot[1].div_id", side.DivID, "ad-side"},
		{"slot[1].targeting", len(side.Targeting), 0},
		{"bots.user_agents", c.Bots.UserAgents, []string{"Googlebot"}},
		{"debug.diagnostics_headers", c.Debug.DiagnosticsHeaders, true},
		{"debug.allow_mode_override", c.Debug.AllowModeOverride, true},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}

func TestDerivedFields(t *testing.T) {
	c, err := Load(writeFile(t, fullTOML), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	wantPrefixes := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.168.1.7/32"),
		netip.MustParsePrefix("2001:db8::/32"),
	}
	if !slices.Equal(c.Server.TrustedPrefixes, wantPrefixes) {
		t.Errorf("TrustedPrefixes = %v, want %v", c.Server.TrustedPrefixes, wantPrefixes)
	}
	if c.Publisher.Origin == nil {
		t.Fatal("Origin is nil after Load")
	}
	if got, want := c.Publisher.Origin.String(), "https://Origin.Example.com:8443"; got != want {
		t.Errorf("Origin = %q, want %q (path cleared)", got, want)
	}
	if got, want := c.Publisher.OriginHost, "origin.example.com:8443"; got != want {
		t.Errorf("OriginHost = %q, want %q", got, want)
	}
	for i, s := range c.CreativeOpportunities.Slots {
		if len(s.Patterns) != len(s.PagePatterns) {
			t.Errorf("slot[%d]: %d compiled patterns for %d page_patterns", i, len(s.Patterns), len(s.PagePatterns))
		}
	}

	tests := []struct {
		name      string
		proxy     string
		want      netip.Prefix
		originURL string
		wantHost  string
	}{
		{"ipv6 bare address", "2001:db8::1", netip.MustParsePrefix("2001:db8::1/128"), "http://[2001:DB8::1]:8080", "[2001:db8::1]:8080"},
		{"non-canonical cidr is masked", "10.1.2.3/8", netip.MustParsePrefix("10.0.0.0/8"), "http://origin.example.com", "origin.example.com"},
		{"ipv4 bare address", "127.0.0.1", netip.MustParsePrefix("127.0.0.1/32"), "HTTPS://ORIGIN.example.com/", "origin.example.com"},
	}
	for _, tt := range tests {
		c := valid()
		c.Server.TrustedProxies = []string{tt.proxy}
		c.Publisher.OriginURL = tt.originURL
		if err := c.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", tt.name, err)
			continue
		}
		if !slices.Equal(c.Server.TrustedPrefixes, []netip.Prefix{tt.want}) {
			t.Errorf("%s: TrustedPrefixes = %v, want [%v]", tt.name, c.Server.TrustedPrefixes, tt.want)
		}
		if c.Publisher.OriginHost != tt.wantHost {
			t.Errorf("%s: OriginHost = %q, want %q", tt.name, c.Publisher.OriginHost, tt.wantHost)
		}
		if c.Publisher.Origin.Path != "" {
			t.Errorf("%s: Origin.Path = %q, want empty", tt.name, c.Publisher.Origin.Path)
		}
	}
}

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

func TestEnvOverrides(t *testing.T) {
	tests := []struct {
		env   string
		value string
		got   func(*Config) any
		want  any
	}{
		{"SSATD_SERVER_LISTEN", ":9999", func(c *Config) any { return c.Server.Listen }, ":9999"},
		{"SSATD_SERVER_TRUSTED_PROXIES", "10.0.0.0/8,192.168.0.0/16", func(c *Config) any { return c.Server.TrustedProxies }, []string{"10.0.0.0/8", "192.168.0.0/16"}},
		{"SSATD_SERVER_SHUTDOWN_TIMEOUT", "3s", func(c *Config) any { return c.Server.ShutdownTimeout.Duration }, 3 * time.Second},
		{"SSATD_SERVER_DRAIN_PERIOD", "750ms", func(c *Config) any { return c.Server.DrainPeriod.Duration }, 750 * time.Millisecond},
		{"SSATD_SERVER_MAX_HEADER_BYTES", "1000", func(c *Config) any { return c.Server.MaxHeaderBytes }, 1000},
		{"SSATD_SERVER_MAX_CONCURRENT_PAGES", "3", func(c *Config) any { return c.Server.MaxConcurrentPages }, 3},
		{"SSATD_SERVER_PAGE_QUEUE_TIMEOUT", "0s", func(c *Config) any { return c.Server.PageQueueTimeout.Duration }, time.Duration(0)},
		{"SSATD_PUBLISHER_ORIGIN_URL", "http://other.example:81", func(c *Config) any { return c.Publisher.OriginHost }, "other.example:81"},
		{"SSATD_PUBLISHER_DOMAIN", "news.example.com", func(c *Config) any { return c.Publisher.Domain }, "news.example.com"},
		{"SSATD_PUBLISHER_ALLOWED_HOSTS", "a.example,b.example", func(c *Config) any { return c.Publisher.AllowedHosts }, []string{"a.example", "b.example"}},
		{"SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES", "99", func(c *Config) any { return c.Publisher.MaxOriginResponseBytes }, int64(99)},
		{"SSATD_PUBLISHER_ORIGIN_HEADER_TIMEOUT", "1m30s", func(c *Config) any { return c.Publisher.OriginHeaderTimeout.Duration }, 90 * time.Second},
		{"SSATD_PUBLISHER_SSAT_COMPRESSION_OFFLOAD_ENABLED", "true", func(c *Config) any { return c.Publisher.SSATCompressionOffloadEnabled }, true},
		{"SSATD_PUBLISHER_OFFLOAD_ORIGIN_ACCEPT_ENCODING", "negotiate", func(c *Config) any { return c.Publisher.OffloadOriginAcceptEncoding }, "negotiate"},
		{"SSATD_COMPRESSION_GZIP_LEVEL", "9", func(c *Config) any { return [2]int{c.Compression.GzipLevel, c.Delivery.GzipLevel} }, [2]int{9, 1}},
		{"SSATD_DELIVERY_GZIP_LEVEL", "8", func(c *Config) any { return [2]int{c.Compression.GzipLevel, c.Delivery.GzipLevel} }, [2]int{6, 8}},
		{"SSATD_COMPRESSION_BROTLI_WINDOW", "10", func(c *Config) any { return c.Compression.BrotliWindow }, 10},
		{"SSATD_PLATFORM_DELIVERY_COMPRESSION", "unavailable", func(c *Config) any { return c.Platform.DeliveryCompression }, "unavailable"},
		{"SSATD_DELIVERY_ZSTD", "1", func(c *Config) any { return c.Delivery.Zstd }, true},
		{"SSATD_DELIVERY_MIN_SIZE", "512", func(c *Config) any { return c.Delivery.MinSize }, 512},
		{"SSATD_AUCTION_ENABLED", "true", func(c *Config) any { return c.Auction.Enabled }, true},
		{"SSATD_AUCTION_PROVIDER", "static", func(c *Config) any { return c.Auction.Provider }, "static"},
		{"SSATD_BOTS_USER_AGENTS", "FooBot,BarBot", func(c *Config) any { return c.Bots.UserAgents }, []string{"FooBot", "BarBot"}},
		{"SSATD_DEBUG_ALLOW_MODE_OVERRIDE", "true", func(c *Config) any { return c.Debug.AllowModeOverride }, true},
	}
	path := writeFile(t, minimalTOML)
	for _, tt := range tests {
		c, err := Load(path, []string{"UNRELATED=1", tt.env + "=" + tt.value})
		if err != nil {
			t.Errorf("%s=%s: Load: %v", tt.env, tt.value, err)
			continue
		}
		if got := tt.got(c); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s=%s: got %#v, want %#v", tt.env, tt.value, got, tt.want)
		}
	}
}

func TestEnvOverridesFileAndWorksWithoutFile(t *testing.T) {
	path := writeFile(t, minimalTOML+"\n[server]\nlisten = \":7000\"\n")
	c, err := Load(path, []string{"SSATD_SERVER_LISTEN=:7001"})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Server.Listen != ":7001" {
		t.Errorf("listen = %q, want the environment to win with \":7001\"", c.Server.Listen)
	}

	c, err = Load("", []string{
		"SSATD_PUBLISHER_DOMAIN=www.example.com",
		"SSATD_PUBLISHER_ORIGIN_URL=https://origin.example.com",
	})
	if err != nil {
		t.Fatalf("Load without a file: %v", err)
	}
	if c.Publisher.OriginHost != "origin.example.com" || c.Server.Listen != ":8080" {
		t.Errorf("Load without a file gave origin host %q and listen %q", c.Publisher.OriginHost, c.Server.Listen)
	}
}

func TestEnvNames(t *testing.T) {
	params, err := env.GetFieldParamsWithOptions(&Config{}, env.Options{Prefix: EnvPrefix})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range params {
		names = append(names, p.Key)
	}
	want := []string{
		"SSATD_SERVER_LISTEN", "SSATD_SERVER_ADMIN_LISTEN", "SSATD_SERVER_DRAIN_PERIOD", "SSATD_SERVER_SHUTDOWN_TIMEOUT",
		"SSATD_SERVER_TRUSTED_PROXIES", "SSATD_SERVER_READ_HEADER_TIMEOUT", "SSATD_SERVER_READ_TIMEOUT",
		"SSATD_SERVER_IDLE_TIMEOUT", "SSATD_SERVER_WRITE_TIMEOUT", "SSATD_SERVER_MAX_HEADER_BYTES",
		"SSATD_SERVER_MAX_CONCURRENT_PAGES", "SSATD_SERVER_PAGE_QUEUE_TIMEOUT", "SSATD_SERVER_MAX_REQUESTS_IN_PROGRESS",
		"SSATD_SERVER_TLS_CERT_FILE", "SSATD_SERVER_TLS_KEY_FILE", "SSATD_SERVER_HTTP_REDIRECT_LISTEN", "SSATD_SERVER_TLS_REDIRECT_PORT", "SSATD_SERVER_READY_REQUIRES_ORIGIN",
		"SSATD_PUBLISHER_DOMAIN", "SSATD_PUBLISHER_ORIGIN_URL", "SSATD_PUBLISHER_ORIGIN_HOST_HEADER_OVERRIDE",
		"SSATD_PUBLISHER_ALLOWED_HOSTS", "SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES", "SSATD_PUBLISHER_MAX_DECODED_BODY_BYTES",
		"SSATD_PUBLISHER_ORIGIN_CONNECT_TIMEOUT", "SSATD_PUBLISHER_ORIGIN_HEADER_TIMEOUT", "SSATD_PUBLISHER_ORIGIN_IDLE_TIMEOUT",
		"SSATD_PUBLISHER_SSAT_COMPRESSION_OFFLOAD_ENABLED", "SSATD_PUBLISHER_OFFLOAD_ORIGIN_ACCEPT_ENCODING", "SSATD_PUBLISHER_SSAT_CACHE_CONTROL",
		"SSATD_PUBLISHER_REWRITE_CONTENT_TYPES", "SSATD_PUBLISHER_REWRITE_INLINE",
		"SSATD_COMPRESSION_GZIP_LEVEL", "SSATD_COMPRESSION_BROTLI_QUALITY", "SSATD_COMPRESSION_BROTLI_WINDOW",
		"SSATD_PLATFORM_DELIVERY_COMPRESSION",
		"SSATD_DELIVERY_GZIP_LEVEL", "SSATD_DELIVERY_BROTLI_QUALITY", "SSATD_DELIVERY_MIN_SIZE", "SSATD_DELIVERY_ZSTD",
		"SSATD_AUCTION_ENABLED", "SSATD_AUCTION_TIMEOUT_MS", "SSATD_AUCTION_PROVIDER",
		"SSATD_AUCTION_PRICE_GRANULARITY", "SSATD_AUCTION_CURRENCY",
		"SSATD_CONSENT_GDPR_APPLIES", "SSATD_CONSENT_REQUIRE_TCF_PURPOSE1", "SSATD_CONSENT_POLICY", "SSATD_CONSENT_JURISDICTION",
		"SSATD_BOTS_USER_AGENTS",
		"SSATD_DEBUG_DIAGNOSTICS_HEADERS", "SSATD_DEBUG_ALLOW_MODE_OVERRIDE",
		"SSATD_COMPUTE_LIMITS", "SSATD_COMPUTE_CPU_LIMIT_MS", "SSATD_COMPUTE_MAX_RUNTIME", "SSATD_COMPUTE_REQUEST_VIEW",
		"SSATD_COMPUTE_CPU_BUDGET_MS", "SSATD_COMPUTE_CPU_SCALE",
		"SSATD_GEO_COUNTRY", "SSATD_GEO_REGION", "SSATD_GEO_CITY", "SSATD_GEO_LATITUDE", "SSATD_GEO_LONGITUDE", "SSATD_GEO_COUNTRY_HEADER",
		"SSATD_BUNDLE_FILE",
		"SSATD_TRACING_ENDPOINT", "SSATD_TRACING_SAMPLE_RATIO", "SSATD_TRACING_SERVICE_NAME",
	}
	if !slices.Equal(names, want) {
		t.Errorf("environment variable names:\n got %v\nwant %v", names, want)
	}
}

func TestEnvCannotTouchArraysOfTablesOrTargeting(t *testing.T) {
	path := writeFile(t, minimalTOML+`
[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/"]
targeting = { pos = "atf" }
`)
	environ := []string{
		"SSATD_CREATIVE_OPPORTUNITIES_SLOT_0_ID=evil",
		"SSATD_CREATIVE_OPPORTUNITIES_SLOT_1_ID=extra",
		"SSATD_CREATIVE_OPPORTUNITIES_SLOT_0_TARGETING=pos:btf",
		"SSATD_AUCTION_STATIC_BIDS_0_SLOT_ID=nope",
		"SSATD_AUCTION_STATIC_BIDS=x",
		"SSATD_SERVER_TRUSTED_PREFIXES=0.0.0.0/0",
		"SSATD_SERVER_=1h",
	}
	// None of them names a key, so Load refuses them all rather than
	// running with a configuration the operator did not write.
	_, err := Load(path, environ)
	if err == nil {
		t.Fatal("Load accepted variables that name no key")
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

func TestEnvErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		env  string
		want []string
	}{
		{"SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES=abc", []string{"SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES", "publisher.max_origin_response_bytes", `"abc"`}},
		{"SSATD_DELIVERY_GZIP_LEVEL=high", []string{"SSATD_DELIVERY_GZIP_LEVEL", "delivery.gzip_level"}},
		{"SSATD_COMPRESSION_GZIP_LEVEL=high", []string{"SSATD_COMPRESSION_GZIP_LEVEL", "compression.gzip_level"}},
		{"SSATD_DELIVERY_ZSTD=maybe", []string{"SSATD_DELIVERY_ZSTD", `found "maybe", wants true or false`}},
		{"SSATD_SERVER_READ_TIMEOUT=30", []string{"SSATD_SERVER_READ_TIMEOUT", "duration", `"15s"`}},
	}
	path := writeFile(t, minimalTOML)
	for _, tt := range tests {
		_, err := Load(path, []string{tt.env})
		if err == nil {
			t.Errorf("%s: Load succeeded, want an error", tt.env)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tt.env, err, w)
			}
		}
	}
}

func TestUnknownKeysReportKeyAndLine(t *testing.T) {
	doc := `[server]
listen = ":8080"
lisen = ":8081"

[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/"]
colour = "red"

[nonsense]
x = 1
`
	_, err := Load(writeFile(t, doc), nil)
	if err == nil {
		t.Fatal("Load succeeded, want unknown key errors")
	}
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error is %T, want *Errors", err)
	}
	want := []string{
		`line 3: server.lisen: unknown key; did you mean "server.listen"?`,
		`line 12: creative_opportunities.slot[0].colour: unknown key`,
		`line 14: nonsense: unknown table`,
	}
	if len(errs.List) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs.List), len(want), err)
	}
	for i, w := range want {
		if errs.List[i].Error() != w {
			t.Errorf("problem %d = %q, want %q", i, errs.List[i], w)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"string for int", "[server]\nmax_header_bytes = \"big\"\n", []string{`line 2: server.max_header_bytes: found the string "big", wants an integer`}},
		{"int for bool", "[debug]\n\ndiagnostics_headers = 1\n", []string{"line 3: debug.diagnostics_headers: found the integer 1, wants true or false"}},
		{"bad duration string", "[publisher]\norigin_idle_timeout = \"soon\"\n", []string{`line 2: publisher.origin_idle_timeout: found "soon", wants a duration`, `"15s"`}},
		{"integer duration", "[server]\nread_timeout = 30\n", []string{`line 2: server.read_timeout: found the integer 30, wants a duration string with a unit, such as "15s"`}},
		{"float for int", "[auction]\ntimeout_ms = 1.5\n", []string{"line 2: auction.timeout_ms: found the number 1.5, wants an integer"}},
		{"table for string", "[server]\nlisten = { a = 1 }\n", []string{"line 2: server.listen: found a table, wants a string"}},
		{"string for array", "[bots]\nuser_agents = \"x\"\n", []string{`line 2: bots.user_agents: found the string "x", wants an array of strings`}},
		{"element of array", "[publisher]\nallowed_hosts = [\n  \"a.example\",\n  7,\n]\n", []string{"line 4: publisher.allowed_hosts[1]: found the integer 7, wants a string"}},
		{"inline table key", "[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\ntargeting = { pos = \"x\" }\n[creative_opportunities.slot.targeting2]\n", []string{`line 5: creative_opportunities.slot[0].targeting2: unknown table; did you mean "creative_opportunities.slot[0].targeting"?`}},
		{"section outside its table", "domain = \"www.example.com\"\n", []string{`line 1: domain: unknown key; did you mean "publisher.domain"?`}},
		{"syntax", "[server\nlisten = 1\n", []string{"line 1, column"}},
		{"duplicate key", "[server]\nlisten = \":1\"\nlisten = \":2\"\n", []string{"line 3"}},
	}
	for _, tt := range tests {
		_, err := Load(writeFile(t, tt.doc), nil)
		if err == nil {
			t.Errorf("%s: Load succeeded, want an error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tt.name, err, w)
			}
		}
	}
}

func TestTypeErrorsDoNotStopTheOtherChecks(t *testing.T) {
	doc := `[server]
listn = ":8080"
shutdown_timeout = 15

[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[compression]
gzip_level = 0

[auction]
timeout_ms = "500ms"

[[creative_opportunities.slot]]
id = 5
page_patterns = ["/"]
`
	_, err := Load(writeFile(t, doc), []string{"SSATD_DELIVERY_MIN_SIZE=lots"})
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error = %v (%T), want *Errors", err, err)
	}
	// The slot id of the wrong type is reported once: not also as a
	// missing id by Validate, which only saw the default left in place.
	want := []string{
		`line 2: server.listn: unknown key; did you mean "server.listen"?`,
		`line 3: server.shutdown_timeout: found the integer 15, wants a duration string with a unit, such as "15s", "500ms" or "1m30s"`,
		`line 13: auction.timeout_ms: found the string "500ms", wants an integer`,
		`line 16: creative_opportunities.slot[0].id: found the integer 5, wants a string`,
		`SSATD_DELIVERY_MIN_SIZE: delivery.min_size: found "lots", wants an integer`,
		`line 10: compression.gzip_level: must be between 1 and 9, got 0`,
	}
	if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

func TestValidationProblemsNameTheirSource(t *testing.T) {
	doc := `[server]
listen = "nope"

[publisher]
domain = "www.example.com"
`
	_, err := Load(writeFile(t, doc), []string{"SSATD_PUBLISHER_ORIGIN_URL=ftp://x"})
	want := []string{
		`line 2: server.listen: must be host:port or :port`,
		`SSATD_PUBLISHER_ORIGIN_URL: publisher.origin_url: scheme must be http or https`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not contain %q", err, w)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.toml")
	_, err := Load(missing, nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v, want a not-exist error naming the path", err)
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
		{"rewrite type rsc", func(c *Config) { c.Publisher.RewriteContentTypes = []string{"text/x-component"} }, "publisher.rewrite_content_types[0]", "length prefixes"},
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

func TestWriteEffectiveMasksCredentials(t *testing.T) {
	tests := []struct {
		origin   string
		want     string
		mustHide string
	}{
		{"https://user:s3cret@origin.example.com", `origin_url = 'https://user:xxxxx@origin.example.com'`, "s3cret"},
		{"https://t0ken@origin.example.com/", `origin_url = 'https://xxxxx@origin.example.com/'`, "t0ken"},
		{"https://origin.example.com", `origin_url = 'https://origin.example.com'`, ""},
		{"https://user:s3cret@origin.example.com:bad", `origin_url = 'xxxxx'`, "s3cret"},
	}
	for _, tt := range tests {
		c := valid()
		c.Publisher.OriginURL = tt.origin
		var buf bytes.Buffer
		if err := c.WriteEffective(&buf); err != nil {
			t.Fatalf("WriteEffective: %v", err)
		}
		out := buf.String()
		if !strings.Contains(out, tt.want) {
			t.Errorf("origin %q: output lacks %s:\n%s", tt.origin, tt.want, out)
		}
		if tt.mustHide != "" && strings.Contains(out, tt.mustHide) {
			t.Errorf("origin %q: output leaks %q", tt.origin, tt.mustHide)
		}
		if c.Publisher.OriginURL != tt.origin {
			t.Errorf("WriteEffective modified the config: origin_url = %q", c.Publisher.OriginURL)
		}
	}
}

func TestValidationErrorsMaskCredentials(t *testing.T) {
	for _, origin := range []string{
		"https://user:s3cret@o.example/path",
		"ftp://user:s3cret@o.example",
		"https://user:s3cret@o.example:port",
	} {
		c := valid()
		c.Publisher.OriginURL = origin
		err := c.Validate()
		if err == nil {
			t.Errorf("%q: Validate succeeded, want an error", origin)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error leaks the password: %v", origin, err)
		}
	}
}

func TestWriteEffectiveRoundTrips(t *testing.T) {
	c, err := Load(writeFile(t, fullTOML), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var buf bytes.Buffer
	if err := c.WriteEffective(&buf); err != nil {
		t.Fatalf("WriteEffective: %v", err)
	}
	out := buf.String()
	for _, w := range []string{"shutdown_timeout = '0s'", "read_timeout = '1m0s'", "[[creative_opportunities.slot]]", "[[auction.static_bids]]"} {
		if !strings.Contains(out, w) {
			t.Errorf("effective config lacks %s:\n%s", w, out)
		}
	}
	again, err := Load(writeFile(t, out), nil)
	if err != nil {
		t.Fatalf("reloading the effective config: %v\n%s", err, out)
	}
	// Only the masked password may differ.
	again.Publisher.OriginURL = c.Publisher.OriginURL
	again.Publisher.Origin = c.Publisher.Origin
	for i := range again.CreativeOpportunities.Slots {
		again.CreativeOpportunities.Slots[i].Patterns = c.CreativeOpportunities.Slots[i].Patterns
	}
	if !reflect.DeepEqual(again, c) {
		t.Errorf("reloaded effective config differs:\n got %+v\nwant %+v", again, c)
	}

	var empty bytes.Buffer
	if err := valid().WriteEffective(&empty); err != nil {
		t.Fatalf("WriteEffective(defaults): %v", err)
	}
	if _, err := Load(writeFile(t, empty.String()), nil); err != nil {
		t.Errorf("effective defaults do not reload: %v\n%s", err, empty.String())
	}
}

func TestSlotMatches(t *testing.T) {
	tests := []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{"/"}, "/", true},
		{[]string{"/"}, "/news", false},
		{[]string{"/", "/news/**"}, "/news/2024/story", true},
		{[]string{"/", "/news/**"}, "/sport/x", false},
		{[]string{"/**/*.html"}, "/a/b.html", true},
		{[]string{"/**/*.html"}, "/a/b.htm", false},
		{nil, "/", false},
	}
	for _, tt := range tests {
		c := valid()
		c.CreativeOpportunities.Slots = []Slot{{ID: "s", PagePatterns: tt.patterns}}
		// Validate reports the nil-patterns case; Matches must still just
		// say no rather than panic.
		_ = c.Validate()
		s := &c.CreativeOpportunities.Slots[0]
		if got := s.Matches(tt.path); got != tt.want {
			t.Errorf("patterns %q: Matches(%q) = %v, want %v", tt.patterns, tt.path, got, tt.want)
		}
	}
}

func TestDurationText(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"15s", 15 * time.Second, false},
		{"1h2m", time.Hour + 2*time.Minute, false},
		{"0", 0, false},
		{"15", 0, true},
		{"", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		var d Duration
		err := d.UnmarshalText([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("UnmarshalText(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if d.Duration != tt.want {
			t.Errorf("UnmarshalText(%q) = %v, want %v", tt.in, d.Duration, tt.want)
		}
		text, err := d.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Duration
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Errorf("MarshalText(%v) = %q does not round-trip: %v %v", d, text, back, err)
		}
	}
}

// TestProblemsNameNoGoInternals: every problem speaks in the file's terms,
// never in Go's (package names, struct fields, parse functions).
func TestProblemsNameNoGoInternals(t *testing.T) {
	doc := `[server]
listen = "nope"
admin_listen = "1.2.3.4:x"
shutdown_timeout = 15
read_timeout = "soon"
trusted_proxies = ["10.0.0.0/99", "fe80::1%eth0", "x"]
max_header_bytes = "big"

[publisher]
domain = "a:b:c"
origin_url = "http://[::1"
allowed_hosts = ["ok.example", 3]

[auction]
timeout_ms = "500ms"
enabled = "yes"
static_bids = 3
`
	environ := []string{"SSATD_DELIVERY_MIN_SIZE=lots", "SSATD_DELIVERY_ZSTD=maybe", "SSATD_SERVER_IDLE_TIMEOUT=15"}
	_, err := Load(writeFile(t, doc), environ)
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load error = %v, want *Errors", err)
	}
	leaks := []string{"strconv", "netip.", "time:", "cannot decode", "struct field", "config.", "of type", "toml:", "ParseInt", "invalid syntax"}
	for _, e := range errs.List {
		msg := e.Error()
		for _, l := range leaks {
			if strings.Contains(msg, l) {
				t.Errorf("problem %q mentions %q", msg, l)
			}
		}
		if !strings.HasPrefix(msg, "line ") && !strings.HasPrefix(msg, "SSATD_") {
			t.Errorf("problem %q does not say where the key was set", msg)
		}
	}
	if len(errs.List) < 14 {
		t.Errorf("got %d problems, want every one of them:\n%v", len(errs.List), err)
	}
}
