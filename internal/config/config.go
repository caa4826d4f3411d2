// Package config loads the ssatd configuration: a strict TOML file layered
// over built-in defaults, then SSATD_<SECTION>_<KEY> environment overrides,
// then validation that reports every problem at once so an operator can fix
// a broken deployment in one pass.
package config

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/ssatd/ssatd/internal/glob"
)

// EnvPrefix starts the name of every environment override.
const EnvPrefix = "SSATD_"

// Config is the complete daemon configuration.
type Config struct {
	Server                ServerConfig          `toml:"server" envPrefix:"SERVER_"`
	Publisher             PublisherConfig       `toml:"publisher" envPrefix:"PUBLISHER_"`
	Compression           CompressionConfig     `toml:"compression" envPrefix:"COMPRESSION_"`
	Platform              PlatformConfig        `toml:"platform" envPrefix:"PLATFORM_"`
	Delivery              DeliveryConfig        `toml:"delivery" envPrefix:"DELIVERY_"`
	Auction               AuctionConfig         `toml:"auction" envPrefix:"AUCTION_"`
	Consent               ConsentConfig         `toml:"consent" envPrefix:"CONSENT_"`
	CreativeOpportunities CreativeOpportunities `toml:"creative_opportunities" env:"-"`
	Bots                  BotsConfig            `toml:"bots" envPrefix:"BOTS_"`
	Debug                 DebugConfig           `toml:"debug" envPrefix:"DEBUG_"`
	Compute               ComputeConfig         `toml:"compute" envPrefix:"COMPUTE_"`
	Geo                   GeoConfig             `toml:"geo" envPrefix:"GEO_"`
	Bundle                BundleConfig          `toml:"bundle" envPrefix:"BUNDLE_"`
	Tracing               TracingConfig         `toml:"tracing" envPrefix:"TRACING_"`
	RequestSigning        RequestSigningConfig  `toml:"request_signing" envPrefix:"REQUEST_SIGNING_"`
	// Handlers ask Basic authentication on the paths they match
	// (handlers.go); set in the file only.
	Handlers     []HandlerConfig    `toml:"handlers,omitempty" env:"-"`
	TesterCookie TesterCookieConfig `toml:"tester_cookie" envPrefix:"TESTER_COOKIE_"`
	EC           ECConfig           `toml:"ec" envPrefix:"EC_"`
	Store        StoreConfig        `toml:"store" envPrefix:"STORE_"`

	// FirstParty is a Trusted Server file's /first-party/* settings
	// (tsfirstparty.go); it has no native keys.
	FirstParty FirstPartyConfig `toml:"-" env:"-"`
	// Integrations is a Trusted Server file's [integrations.*] as the
	// client bundle reads them (integrations.go); no native keys.
	Integrations IntegrationsConfig `toml:"-" env:"-"`

	// Source says which format the file was in, and what of a Trusted
	// Server file ssatd does not do (tsformat.go).
	Source Source `toml:"-" env:"-"`
}

// BundleConfig is the [bundle] section: which client bundle pages load.
type BundleConfig struct {
	// File is a bundle to serve instead of the built-in one, such as
	// upstream Trusted Server's built tsjs-unified.min.js; "" serves the
	// built-in bundle (docs/behaviour.md, "Bundle tag").
	File string `toml:"file" env:"FILE"`
	// Dir holds upstream's tsjs module files (tsjs-<id>.min.js or .js):
	// the bundle is core, creative and the enabled integrations' modules,
	// joined as upstream joins them (internal/bundle). One of File and Dir.
	Dir string `toml:"dir" env:"DIR"`
}

// ServerConfig is the [server] section.
type ServerConfig struct {
	Listen            string   `toml:"listen" env:"LISTEN"`
	AdminListen       string   `toml:"admin_listen" env:"ADMIN_LISTEN"`
	DrainPeriod       Duration `toml:"drain_period" env:"DRAIN_PERIOD"`
	ShutdownTimeout   Duration `toml:"shutdown_timeout" env:"SHUTDOWN_TIMEOUT"`
	TrustedProxies    []string `toml:"trusted_proxies" env:"TRUSTED_PROXIES"`
	ReadHeaderTimeout Duration `toml:"read_header_timeout" env:"READ_HEADER_TIMEOUT"`
	ReadTimeout       Duration `toml:"read_timeout" env:"READ_TIMEOUT"`
	IdleTimeout       Duration `toml:"idle_timeout" env:"IDLE_TIMEOUT"`
	WriteTimeout      Duration `toml:"write_timeout" env:"WRITE_TIMEOUT"`
	MaxHeaderBytes    int      `toml:"max_header_bytes" env:"MAX_HEADER_BYTES"`
	// MaxConcurrentPages bounds the pages in the rewrite pipeline at once;
	// PageQueueTimeout is how long a page waits for one of them before it
	// is answered 503 (docs/behaviour.md, "Limits").
	MaxConcurrentPages int      `toml:"max_concurrent_pages" env:"MAX_CONCURRENT_PAGES"`
	PageQueueTimeout   Duration `toml:"page_queue_timeout" env:"PAGE_QUEUE_TIMEOUT"`
	// MaxRequestsInProgress bounds the requests the guest handles at once,
	// pages or not; 0 means RequestsPerPage × MaxConcurrentPages. A request
	// past it waits PageQueueTimeout too (docs/behaviour.md, "Limits").
	MaxRequestsInProgress int `toml:"max_requests_in_progress" env:"MAX_REQUESTS_IN_PROGRESS"`
	// TLSCertFile and TLSKeyFile make server.listen serve HTTPS, with
	// HTTP/2 (docs/behaviour.md, "HTTPS and HTTP/2"); HTTPRedirectListen
	// is then an optional plain listener that redirects to it, at
	// TLSRedirectPort: the port clients reach the HTTPS listener on, which
	// differs from server.listen's behind a port mapping; 0 is
	// server.listen's port.
	TLSCertFile        string `toml:"tls_cert_file" env:"TLS_CERT_FILE"`
	TLSKeyFile         string `toml:"tls_key_file" env:"TLS_KEY_FILE"`
	HTTPRedirectListen string `toml:"http_redirect_listen" env:"HTTP_REDIRECT_LISTEN"`
	TLSRedirectPort    int    `toml:"tls_redirect_port" env:"TLS_REDIRECT_PORT"`
	// TLSCertificate is the pair loaded by Validate, nil without TLS.
	TLSCertificate *tls.Certificate `toml:"-" env:"-"`
	// ReadyRequiresOrigin makes /readyz fail while the origin refuses TCP
	// connections. Off by default: an origin outage must not take every
	// replica out of the load balancer at once.
	ReadyRequiresOrigin bool `toml:"ready_requires_origin" env:"READY_REQUIRES_ORIGIN"`
	// DataDir holds the embedded store (ssatd.db) that edge-cookie
	// identities live in when store.url is not set; "" keeps none.
	DataDir string `toml:"data_dir" env:"DATA_DIR"`

	// TrustedPrefixes is TrustedProxies parsed by Validate; bare IPs become
	// single-address prefixes so callers only ever test prefix containment.
	TrustedPrefixes []netip.Prefix `toml:"-" env:"-"`
}

// PublisherConfig is the [publisher] section.
type PublisherConfig struct {
	Domain                        string   `toml:"domain" env:"DOMAIN"`
	OriginURL                     string   `toml:"origin_url" env:"ORIGIN_URL"`
	OriginHostHeaderOverride      string   `toml:"origin_host_header_override" env:"ORIGIN_HOST_HEADER_OVERRIDE"`
	AllowedHosts                  []string `toml:"allowed_hosts" env:"ALLOWED_HOSTS"`
	MaxOriginResponseBytes        int64    `toml:"max_origin_response_bytes" env:"MAX_ORIGIN_RESPONSE_BYTES"`
	MaxDecodedBodyBytes           int64    `toml:"max_decoded_body_bytes" env:"MAX_DECODED_BODY_BYTES"`
	OriginConnectTimeout          Duration `toml:"origin_connect_timeout" env:"ORIGIN_CONNECT_TIMEOUT"`
	OriginHeaderTimeout           Duration `toml:"origin_header_timeout" env:"ORIGIN_HEADER_TIMEOUT"`
	OriginIdleTimeout             Duration `toml:"origin_idle_timeout" env:"ORIGIN_IDLE_TIMEOUT"`
	SSATCompressionOffloadEnabled bool     `toml:"ssat_compression_offload_enabled" env:"SSAT_COMPRESSION_OFFLOAD_ENABLED"`
	OffloadOriginAcceptEncoding   string   `toml:"offload_origin_accept_encoding" env:"OFFLOAD_ORIGIN_ACCEPT_ENCODING"`
	// SSATCacheControl is the Cache-Control of personalised pages
	// (docs/behaviour.md, "Eligible pages").
	SSATCacheControl string `toml:"ssat_cache_control" env:"SSAT_CACHE_CONTROL"`
	// RewriteContentTypes and RewriteInline: the text rules
	// (docs/behaviour.md, "Text responses"; textrewrite.go).
	RewriteContentTypes []string `toml:"rewrite_content_types" env:"REWRITE_CONTENT_TYPES"`
	RewriteInline       bool     `toml:"rewrite_inline" env:"REWRITE_INLINE"`

	// Origin is OriginURL parsed by Validate, with the path cleared so
	// request paths can be joined onto it directly.
	Origin *url.URL `toml:"-" env:"-"`
	// OriginHost is the lower-cased host[:port] of OriginURL, without the
	// port when it is the scheme's default (as links usually write it).
	OriginHost string `toml:"-" env:"-"`
}

// Values of PublisherConfig.SSATCacheControl: ssatd's default, which lets
// a browser keep the page for back/forward navigation, and upstream
// Trusted Server's, which never lets anything store it.
const (
	SSATCachePrivate        = "private, max-age=0"
	SSATCacheNoStorePrivate = "no-store, private"
)

// Values of PublisherConfig.OffloadOriginAcceptEncoding.
const (
	OffloadOriginIdentity  = "identity"
	OffloadOriginNegotiate = "negotiate"
)

// CompressionConfig is the [compression] section.
type CompressionConfig struct {
	GzipLevel     int `toml:"gzip_level" env:"GZIP_LEVEL"`
	BrotliQuality int `toml:"brotli_quality" env:"BROTLI_QUALITY"`
	BrotliWindow  int `toml:"brotli_window" env:"BROTLI_WINDOW"`
}

// Values of PlatformConfig.DeliveryCompression.
const (
	DeliveryCompressionBuiltin     = "builtin"
	DeliveryCompressionExternal    = "external"
	DeliveryCompressionUnavailable = "unavailable"
)

// PlatformConfig is the [platform] section.
type PlatformConfig struct {
	DeliveryCompression string `toml:"delivery_compression" env:"DELIVERY_COMPRESSION"`
}

// DeliveryConfig is the [delivery] section.
type DeliveryConfig struct {
	GzipLevel     int  `toml:"gzip_level" env:"GZIP_LEVEL"`
	BrotliQuality int  `toml:"brotli_quality" env:"BROTLI_QUALITY"`
	MinSize       int  `toml:"min_size" env:"MIN_SIZE"`
	Zstd          bool `toml:"zstd" env:"ZSTD"`
}

// Values of AuctionConfig.Provider.
const (
	AuctionProviderNone    = "none"
	AuctionProviderStatic  = "static"
	AuctionProviderOpenRTB = "openrtb"
)

// AuctionConfig is the [auction] section.
type AuctionConfig struct {
	Enabled          bool              `toml:"enabled" env:"ENABLED"`
	TimeoutMS        int               `toml:"timeout_ms" env:"TIMEOUT_MS"`
	Provider         string            `toml:"provider" env:"PROVIDER"`
	PriceGranularity string            `toml:"price_granularity" env:"PRICE_GRANULARITY"`
	Currency         string            `toml:"currency" env:"CURRENCY"`
	StaticBids       []StaticBid       `toml:"static_bids" env:"-"`
	OpenRTB          []OpenRTBEndpoint `toml:"openrtb,omitempty" env:"-"`

	// PostAuctionTimeoutMS is the deadline of the tsjs callback POST
	// /auction, whose own timeout Trusted Server keeps apart from the
	// page's (docs/behaviour.md, "tsjs callbacks"); 0 is TimeoutMS.
	PostAuctionTimeoutMS int `toml:"post_auction_timeout_ms" env:"POST_AUCTION_TIMEOUT_MS"`
}

// OpenRTBEndpoint is one [[auction.openrtb]] entry: an OpenRTB 2.x endpoint
// such as Prebid Server's /openrtb2/auction.
type OpenRTBEndpoint struct {
	Name      string `toml:"name"`
	URL       string `toml:"url"`
	TimeoutMS int    `toml:"timeout_ms"`
	AccountID string `toml:"account_id"`
	Test      bool   `toml:"test"`
	// Debug asks Prebid Server for its debug output (ext.prebid.debug
	// and returnallbidstatus).
	Debug bool `toml:"debug"`
	// Headers are sent with every bid request; they often carry an API
	// key, so config check masks their values.
	Headers map[string]string `toml:"headers,omitempty"`
}

// StaticBid is a canned bid served by the "static" auction provider, for
// the slot SlotID. The guest turns it into an ssat.Bid, which is what page
// scripts receive.
type StaticBid struct {
	SlotID   string `toml:"slot_id"`
	HbPb     string `toml:"hb_pb"`
	HbBidder string `toml:"hb_bidder"`
	W        int    `toml:"w"`
	H        int    `toml:"h"`
	HbAdid   string `toml:"hb_adid"`
	Adm      string `toml:"adm"`
}

// CreativeOpportunities is the [creative_opportunities] section.
type CreativeOpportunities struct {
	Slots []Slot `toml:"slot" env:"-"`
}

// Slot is one [[creative_opportunities.slot]] entry.
type Slot struct {
	ID           string         `toml:"id"`
	PagePatterns []string       `toml:"page_patterns"`
	Formats      [][]int        `toml:"formats"`
	GAMUnitPath  string         `toml:"gam_unit_path"`
	DivID        string         `toml:"div_id"`
	Targeting    map[string]any `toml:"targeting"`
	// Bidders are the slot's bidder parameters by bidder name, sent as
	// imp.ext.prebid.bidder.
	Bidders map[string]any `toml:"bidders,omitempty"`
	// FloorPrice is the minimum CPM in USD sent as imp.bidfloor; unset
	// sends none.
	FloorPrice *float64 `toml:"floor_price,omitempty"`

	// Patterns holds PagePatterns compiled by Validate.
	Patterns []*glob.Glob `toml:"-"`
	// BidderParams is Bidders encoded as JSON by Validate.
	BidderParams map[string]json.RawMessage `toml:"-"`
}

// Matches reports whether any of the slot's page patterns matches urlPath.
// It relies on Patterns, so it is only meaningful after Validate.
func (s *Slot) Matches(urlPath string) bool {
	for _, g := range s.Patterns {
		if g.Match(urlPath) {
			return true
		}
	}
	return false
}

// BotsConfig is the [bots] section.
type BotsConfig struct {
	UserAgents []string `toml:"user_agents" env:"USER_AGENTS"`
}

// DebugConfig is the [debug] section.
type DebugConfig struct {
	DiagnosticsHeaders bool `toml:"diagnostics_headers" env:"DIAGNOSTICS_HEADERS"`
	AllowModeOverride  bool `toml:"allow_mode_override" env:"ALLOW_MODE_OVERRIDE"`
}

// ComputeConfig is the [compute] section: the limits of the edge compute
// platform the guest imitates (docs/behaviour.md, "Fidelity"), and a
// per-page CPU budget checked against the guest's thread CPU
// (docs/measuring.md, "Compute budget"). compute.go validates it.
type ComputeConfig struct {
	// Limits is ComputeLimitsNone or ComputeLimitsFastly: the preset that
	// fills CPULimitMS, MaxRuntime and RequestView when they are unset, and
	// turns on Fastly's request and backend limits.
	Limits string `toml:"limits" env:"LIMITS"`
	// CPULimitMS ends a page whose guest CPU passes it, in platform
	// milliseconds (native CPU times CPUScale); 0 is the preset's.
	CPULimitMS float64 `toml:"cpu_limit_ms" env:"CPU_LIMIT_MS"`
	// MaxRuntime ends a request that runs longer; 0 is the preset's.
	MaxRuntime Duration `toml:"max_runtime" env:"MAX_RUNTIME"`
	// RequestView is RequestViewSSATD or RequestViewFastly: which headers
	// the origin request carries; "" is the preset's.
	RequestView string `toml:"request_view" env:"REQUEST_VIEW"`
	// CPUBudgetMS is the guest CPU a page may use, in platform
	// milliseconds (native CPU times CPUScale); 0 turns the check off.
	CPUBudgetMS float64 `toml:"cpu_budget_ms" env:"CPU_BUDGET_MS"`
	// CPUScale turns native CPU into the platform's: platform = native *
	// CPUScale.
	CPUScale float64 `toml:"cpu_scale" env:"CPU_SCALE"`
}

// Duration is a time.Duration written as a Go duration string ("15s") in
// TOML and in the environment, which is easier to read than nanoseconds.
type Duration struct {
	// The env tag stops caarlos0/env from descending into the embedded
	// field after it has already set the whole value via UnmarshalText.
	time.Duration `env:"-"`
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.Duration.String()), nil
}

// Errors collects every problem found while loading or validating, so the
// operator sees them all instead of fixing one per restart.
type Errors struct {
	List []error
}

// Error returns one problem per line.
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, err := range e.List {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the individual problems to errors.Is and errors.As.
func (e *Errors) Unwrap() []error {
	return e.List
}

// PagesPerCore is how many pages per usable core the rewrite pipeline
// holds by default. A page holds its slot while it waits on the origin, the
// auction and the client as well as while it uses the CPU, so the bound is
// a multiple of the cores; BENCHMARKS.md ("Overload") has the measurement
// behind the number.
const PagesPerCore = 8

// RequestsPerPage is how many requests in progress server.max_requests_in_progress
// allows, when unset, per page place: a page brings its assets, which hold
// no pipeline state and are cheap to have in flight.
const RequestsPerPage = 8

// RequestBound is server.max_requests_in_progress as it applies.
func (s *ServerConfig) RequestBound() int {
	if s.MaxRequestsInProgress > 0 {
		return s.MaxRequestsInProgress
	}
	return RequestsPerPage * s.MaxConcurrentPages
}

// DefaultMaxConcurrentPages is server.max_concurrent_pages when unset:
// PagesPerCore for each core the Go runtime may use (GOMAXPROCS, which
// follows a container's CPU limit).
func DefaultMaxConcurrentPages() int {
	return PagesPerCore * runtime.GOMAXPROCS(0)
}

// Defaults returns the configuration used for every key that neither the
// file nor the environment sets. The required publisher keys stay empty.
func Defaults() *Config {
	return &Config{
		Server: ServerConfig{
			Listen:             ":8080",
			AdminListen:        "127.0.0.1:9090",
			DrainPeriod:        Duration{5 * time.Second},
			ShutdownTimeout:    Duration{15 * time.Second},
			TrustedProxies:     []string{},
			ReadHeaderTimeout:  Duration{10 * time.Second},
			ReadTimeout:        Duration{30 * time.Second},
			IdleTimeout:        Duration{120 * time.Second},
			WriteTimeout:       Duration{30 * time.Second},
			MaxHeaderBytes:     64 << 10,
			MaxConcurrentPages: DefaultMaxConcurrentPages(),
			PageQueueTimeout:   Duration{500 * time.Millisecond},
		},
		Publisher: PublisherConfig{
			AllowedHosts:                []string{},
			MaxOriginResponseBytes:      10 << 20,
			MaxDecodedBodyBytes:         64 << 20,
			OriginConnectTimeout:        Duration{5 * time.Second},
			OriginHeaderTimeout:         Duration{15 * time.Second},
			OriginIdleTimeout:           Duration{15 * time.Second},
			OffloadOriginAcceptEncoding: OffloadOriginIdentity,
			SSATCacheControl:            SSATCachePrivate,
			RewriteContentTypes:         DefaultRewriteContentTypes(),
			RewriteInline:               true,
		},
		Compression: CompressionConfig{
			GzipLevel:     6,
			BrotliQuality: 4,
			BrotliWindow:  20,
		},
		Platform: PlatformConfig{
			DeliveryCompression: DeliveryCompressionBuiltin,
		},
		Consent: defaultConsent(),
		Delivery: DeliveryConfig{
			GzipLevel:     1,
			BrotliQuality: 1,
		},
		Auction: AuctionConfig{
			TimeoutMS:        500,
			Provider:         AuctionProviderNone,
			PriceGranularity: "dense",
			Currency:         "USD",
		},
		Bots: BotsConfig{
			UserAgents: []string{"Googlebot", "Bingbot", "AhrefsBot", "SemrushBot", "DotBot"},
		},
		Compute: ComputeConfig{Limits: ComputeLimitsNone, CPUScale: 1},
		Tracing: TracingConfig{SampleRatio: 1},
	}
}

// Load builds the effective configuration: Defaults, then the TOML file at
// path (skipped when path is ""), then overrides from environ (in
// os.Environ form), then Validate. On failure the error is an *Errors
// listing every problem that could be detected, each prefixed with the
// line or the environment variable that set the key.
func Load(path string, environ []string) (*Config, error) {
	c := Defaults()
	var problems []error
	d := newDecoder()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &Errors{List: []error{fmt.Errorf("read config: %w", err)}}
		}
		format, err := detectFormat(data, lookupEnv(environ, FormatEnv))
		if err != nil {
			return nil, &Errors{List: []error{err}}
		}
		c.Source.Format = format
		ok := false
		if format == FormatTrustedServer {
			ok = d.trustedServerFile(data, c, environ)
		} else {
			ok = d.file(data, c)
		}
		if !ok {
			return nil, &Errors{List: d.problems}
		}
	}
	if c.Source.Format != FormatTrustedServer {
		c.Source.ignoredEnv = tsEnvNames(environ)
	}
	d.applyEnv(c, environ)
	problems = append(problems, d.problems...)
	problems = append(problems, unknownEnvVars(environ)...)
	problems = append(problems, otelEndpointProblems(environ)...)
	problems = append(problems, otelHeaderProblems(environ)...)
	if err := c.Validate(); err != nil {
		var v *Errors
		if !errors.As(err, &v) {
			v = &Errors{List: []error{err}}
		}
		for _, e := range v.List {
			var p *problem
			if !errors.As(e, &p) {
				problems = append(problems, e)
				continue
			}
			if d.covers(p.key) {
				continue
			}
			if n := d.src.name(p.key); n != p.key {
				e = &problem{key: n, err: p.err}
			}
			problems = append(problems, d.src.locate(p.key, e))
		}
	}
	if len(problems) > 0 {
		return nil, &Errors{List: problems}
	}
	return c, nil
}

// WriteEffective writes the whole effective configuration as TOML so an
// operator can see what the daemon actually runs with. Credentials and
// query values of every URL (see maskURL), and endpoint header values,
// are masked because this output ends up in logs and support tickets.
func (c *Config) WriteEffective(w io.Writer) error {
	masked := c.withURLsMasked()
	masked.EC = c.EC.withSecretsMasked()
	endpoints := masked.Auction.OpenRTB
	masked.Auction.OpenRTB = nil
	for _, e := range endpoints {
		h := make(map[string]string, len(e.Headers))
		for k := range e.Headers {
			h[k] = maskedSecret
		}
		e.Headers = h
		masked.Auction.OpenRTB = append(masked.Auction.OpenRTB, e)
	}
	masked.Handlers = maskedHandlers(masked.Handlers)
	if err := toml.NewEncoder(w).Encode(masked); err != nil {
		return fmt.Errorf("write effective config: %w", err)
	}
	return nil
}
