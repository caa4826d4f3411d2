package config

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

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

func TestLoadMissingFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.toml")
	_, err := Load(missing, nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v, want a not-exist error naming the path", err)
	}
}
