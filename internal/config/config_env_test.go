package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
)

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
		"SSATD_SERVER_TLS_CERT_FILE", "SSATD_SERVER_TLS_KEY_FILE", "SSATD_SERVER_HTTP_REDIRECT_LISTEN", "SSATD_SERVER_TLS_REDIRECT_PORT", "SSATD_SERVER_READY_REQUIRES_ORIGIN", "SSATD_SERVER_DATA_DIR",
		"SSATD_PUBLISHER_DOMAIN", "SSATD_PUBLISHER_ORIGIN_URL", "SSATD_PUBLISHER_ORIGIN_HOST_HEADER_OVERRIDE",
		"SSATD_PUBLISHER_ALLOWED_HOSTS", "SSATD_PUBLISHER_MAX_ORIGIN_RESPONSE_BYTES", "SSATD_PUBLISHER_MAX_DECODED_BODY_BYTES",
		"SSATD_PUBLISHER_ORIGIN_CONNECT_TIMEOUT", "SSATD_PUBLISHER_ORIGIN_HEADER_TIMEOUT", "SSATD_PUBLISHER_ORIGIN_IDLE_TIMEOUT",
		"SSATD_PUBLISHER_SSAT_COMPRESSION_OFFLOAD_ENABLED", "SSATD_PUBLISHER_OFFLOAD_ORIGIN_ACCEPT_ENCODING", "SSATD_PUBLISHER_SSAT_CACHE_CONTROL",
		"SSATD_PUBLISHER_REWRITE_CONTENT_TYPES", "SSATD_PUBLISHER_REWRITE_INLINE",
		"SSATD_COMPRESSION_GZIP_LEVEL", "SSATD_COMPRESSION_BROTLI_QUALITY", "SSATD_COMPRESSION_BROTLI_WINDOW",
		"SSATD_PLATFORM_DELIVERY_COMPRESSION",
		"SSATD_DELIVERY_GZIP_LEVEL", "SSATD_DELIVERY_BROTLI_QUALITY", "SSATD_DELIVERY_MIN_SIZE", "SSATD_DELIVERY_ZSTD",
		"SSATD_AUCTION_ENABLED", "SSATD_AUCTION_TIMEOUT_MS", "SSATD_AUCTION_PROVIDER",
		"SSATD_AUCTION_PRICE_GRANULARITY", "SSATD_AUCTION_CURRENCY", "SSATD_AUCTION_POST_AUCTION_TIMEOUT_MS",
		"SSATD_CONSENT_GDPR_APPLIES", "SSATD_CONSENT_REQUIRE_TCF_PURPOSE1", "SSATD_CONSENT_POLICY", "SSATD_CONSENT_JURISDICTION",
		"SSATD_CONSENT_MODE", "SSATD_CONSENT_CHECK_EXPIRATION", "SSATD_CONSENT_MAX_CONSENT_AGE_DAYS", "SSATD_CONSENT_GDPR_APPLIES_IN",
		"SSATD_CONSENT_US_PRIVACY_STATES", "SSATD_CONSENT_US_PRIVACY_NOTICE_GIVEN", "SSATD_CONSENT_US_PRIVACY_LSPA_COVERED",
		"SSATD_CONSENT_GPC_IMPLIES_OPTOUT", "SSATD_CONSENT_CONFLICT_RESOLUTION", "SSATD_CONSENT_FRESHNESS_THRESHOLD_DAYS",
		"SSATD_BOTS_USER_AGENTS",
		"SSATD_DEBUG_DIAGNOSTICS_HEADERS", "SSATD_DEBUG_ALLOW_MODE_OVERRIDE",
		"SSATD_COMPUTE_LIMITS", "SSATD_COMPUTE_CPU_LIMIT_MS", "SSATD_COMPUTE_MAX_RUNTIME", "SSATD_COMPUTE_REQUEST_VIEW",
		"SSATD_COMPUTE_CPU_BUDGET_MS", "SSATD_COMPUTE_CPU_SCALE",
		"SSATD_GEO_COUNTRY", "SSATD_GEO_REGION", "SSATD_GEO_CITY", "SSATD_GEO_LATITUDE", "SSATD_GEO_LONGITUDE", "SSATD_GEO_COUNTRY_HEADER",
		"SSATD_BUNDLE_FILE", "SSATD_BUNDLE_DIR",
		"SSATD_TRACING_ENDPOINT", "SSATD_TRACING_SAMPLE_RATIO", "SSATD_TRACING_SERVICE_NAME",
		"SSATD_REQUEST_SIGNING_ENABLED", "SSATD_REQUEST_SIGNING_KEY_DIR",
		"SSATD_TESTER_COOKIE_ENABLED", "SSATD_TESTER_COOKIE_COOKIE_DOMAIN",
		"SSATD_EC_PASSPHRASE", "SSATD_STORE_URL", "SSATD_STORE_POOL_SIZE",
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
