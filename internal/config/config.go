// Package config loads the ssatd configuration: a strict TOML file layered
// over built-in defaults, then SSATD_<SECTION>_<KEY> environment overrides,
// then validation that reports every problem at once so an operator can fix
// a broken deployment in one pass.
package config

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
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
	CreativeOpportunities CreativeOpportunities `toml:"creative_opportunities" env:"-"`
	Bots                  BotsConfig            `toml:"bots" envPrefix:"BOTS_"`
	Debug                 DebugConfig           `toml:"debug" envPrefix:"DEBUG_"`
	Compute               ComputeConfig         `toml:"compute" envPrefix:"COMPUTE_"`
}

// ServerConfig is the [server] section.
type ServerConfig struct {
	Listen            string   `toml:"listen" env:"LISTEN"`
	AdminListen       string   `toml:"admin_listen" env:"ADMIN_LISTEN"`
	ShutdownTimeout   Duration `toml:"shutdown_timeout" env:"SHUTDOWN_TIMEOUT"`
	TrustedProxies    []string `toml:"trusted_proxies" env:"TRUSTED_PROXIES"`
	ReadHeaderTimeout Duration `toml:"read_header_timeout" env:"READ_HEADER_TIMEOUT"`
	ReadTimeout       Duration `toml:"read_timeout" env:"READ_TIMEOUT"`
	IdleTimeout       Duration `toml:"idle_timeout" env:"IDLE_TIMEOUT"`
	WriteTimeout      Duration `toml:"write_timeout" env:"WRITE_TIMEOUT"`
	MaxHeaderBytes    int      `toml:"max_header_bytes" env:"MAX_HEADER_BYTES"`

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

	// Origin is OriginURL parsed by Validate, with the path cleared so
	// request paths can be joined onto it directly.
	Origin *url.URL `toml:"-" env:"-"`
	// OriginHost is the lower-cased host[:port] of OriginURL.
	OriginHost string `toml:"-" env:"-"`
}

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
	AuctionProviderNone   = "none"
	AuctionProviderStatic = "static"
)

// AuctionConfig is the [auction] section.
type AuctionConfig struct {
	Enabled    bool        `toml:"enabled" env:"ENABLED"`
	TimeoutMS  int         `toml:"timeout_ms" env:"TIMEOUT_MS"`
	Provider   string      `toml:"provider" env:"PROVIDER"`
	StaticBids []StaticBid `toml:"static_bids" env:"-"`
}

// StaticBid is a canned bid served by the "static" auction provider. The
// json names mirror the TOML keys so a bid can be handed to page scripts
// as-is; the slot id is left out because the page already knows its slot.
type StaticBid struct {
	SlotID   string `toml:"slot_id" json:"-"`
	HbPb     string `toml:"hb_pb" json:"hb_pb"`
	HbBidder string `toml:"hb_bidder" json:"hb_bidder"`
	W        int    `toml:"w" json:"w"`
	H        int    `toml:"h" json:"h"`
	HbAdid   string `toml:"hb_adid" json:"hb_adid"`
	Adm      string `toml:"adm" json:"adm"`
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

	// Patterns holds PagePatterns compiled by Validate.
	Patterns []*glob.Glob `toml:"-"`
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

// ComputeConfig is the [compute] section: a per-page CPU budget like the
// per-request limit of an edge compute platform, checked against the
// guest's thread CPU (docs/measuring.md, "Compute budget").
type ComputeConfig struct {
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
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("expected a Go duration such as \"15s\" or \"1m30s\": %w", err)
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

// Defaults returns the configuration used for every key that neither the
// file nor the environment sets. The required publisher keys stay empty.
func Defaults() *Config {
	return &Config{
		Server: ServerConfig{
			Listen:            ":8080",
			AdminListen:       "127.0.0.1:9090",
			ShutdownTimeout:   Duration{15 * time.Second},
			TrustedProxies:    []string{},
			ReadHeaderTimeout: Duration{10 * time.Second},
			ReadTimeout:       Duration{30 * time.Second},
			IdleTimeout:       Duration{120 * time.Second},
			WriteTimeout:      Duration{30 * time.Second},
			MaxHeaderBytes:    64 << 10,
		},
		Publisher: PublisherConfig{
			AllowedHosts:                []string{},
			MaxOriginResponseBytes:      10 << 20,
			MaxDecodedBodyBytes:         64 << 20,
			OriginConnectTimeout:        Duration{5 * time.Second},
			OriginHeaderTimeout:         Duration{15 * time.Second},
			OriginIdleTimeout:           Duration{15 * time.Second},
			OffloadOriginAcceptEncoding: "identity",
		},
		Compression: CompressionConfig{
			GzipLevel:     6,
			BrotliQuality: 4,
			BrotliWindow:  22,
		},
		Platform: PlatformConfig{
			DeliveryCompression: DeliveryCompressionBuiltin,
		},
		Delivery: DeliveryConfig{
			GzipLevel:     1,
			BrotliQuality: 1,
		},
		Auction: AuctionConfig{
			TimeoutMS: 500,
			Provider:  AuctionProviderNone,
		},
		Bots: BotsConfig{
			UserAgents: []string{"Googlebot", "Bingbot", "AhrefsBot", "SemrushBot", "DotBot"},
		},
		Compute: ComputeConfig{CPUScale: 1},
	}
}

// Load builds the effective configuration: Defaults, then the TOML file at
// path (skipped when path is ""), then overrides from environ (in
// os.Environ form), then Validate. On failure the error is an *Errors
// listing every problem that could be detected.
func Load(path string, environ []string) (*Config, error) {
	c := Defaults()
	var problems []error
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &Errors{List: []error{fmt.Errorf("read config: %w", err)}}
		}
		decodeErrs, complete := decodeTOML(data, c)
		problems = append(problems, decodeErrs...)
		if !complete {
			// The struct is only partly filled, so validating it would
			// report values the operator never wrote.
			return nil, &Errors{List: problems}
		}
	}
	problems = append(problems, applyEnv(c, environ)...)
	if err := c.Validate(); err != nil {
		var v *Errors
		if errors.As(err, &v) {
			problems = append(problems, v.List...)
		} else {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return nil, &Errors{List: problems}
	}
	return c, nil
}

// decodeTOML reports complete=false when decoding stopped part way. Unknown
// keys alone leave complete=true because go-toml only reports them after
// every known key was decoded.
func decodeTOML(data []byte, c *Config) (problems []error, complete bool) {
	dec := toml.NewDecoder(strings.NewReader(string(data))).DisallowUnknownFields()
	err := dec.Decode(c)
	if err == nil {
		return nil, true
	}
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) {
		for i := range missing.Errors {
			de := &missing.Errors[i]
			line, _ := de.Position()
			problems = append(problems, &unknownKeyError{key: strings.Join(de.Key(), "."), line: line, err: de})
		}
		return problems, true
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		if key := de.Key(); len(key) > 0 {
			return []error{fmt.Errorf("toml line %d, column %d: key %q: %w", line, col, strings.Join(key, "."), de)}, false
		}
		return []error{fmt.Errorf("toml line %d, column %d: %w", line, col, de)}, false
	}
	// go-toml passes some errors (e.g. from UnmarshalText on a non-string
	// value) through without a position or key; keep them visible anyway.
	return []error{fmt.Errorf("toml: %w", err)}, false
}

type unknownKeyError struct {
	key  string
	line int
	err  error
}

func (e *unknownKeyError) Error() string {
	return fmt.Sprintf("unknown key %q at line %d", e.key, e.line)
}

func (e *unknownKeyError) Unwrap() error { return e.err }

// applyEnv parses one section at a time: caarlos0/env reports a bad value
// by Go field name only, and names such as GzipLevel repeat across
// sections, so the section is needed to name the offending variable.
func applyEnv(c *Config, environ []string) []error {
	vars := env.ToMap(environ)
	cv := reflect.ValueOf(c).Elem()
	ct := cv.Type()
	var problems []error
	for i := range ct.NumField() {
		sf := ct.Field(i)
		if sf.Tag.Get("env") == "-" {
			continue
		}
		prefix := EnvPrefix + sf.Tag.Get("envPrefix")
		section := cv.Field(i)
		err := env.ParseWithOptions(section.Addr().Interface(), env.Options{
			Environment: vars,
			Prefix:      prefix,
		})
		if err == nil {
			continue
		}
		var agg env.AggregateError
		if !errors.As(err, &agg) {
			problems = append(problems, fmt.Errorf("environment: %w", err))
			continue
		}
		for _, e := range agg.Errors {
			problems = append(problems, describeEnvError(e, prefix, sf.Tag.Get("toml"), section.Type()))
		}
	}
	return problems
}

func describeEnvError(err error, prefix, sectionKey string, sectionType reflect.Type) error {
	var pe env.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("environment: %w", err)
	}
	f, ok := sectionType.FieldByName(pe.Name)
	if !ok {
		return fmt.Errorf("environment: %w", err)
	}
	name := prefix + f.Tag.Get("env")
	key := sectionKey + "." + f.Tag.Get("toml")
	return fmt.Errorf("environment variable %s (%s): invalid %s value: %w", name, key, typeName(f.Type), pe.Err)
}

func typeName(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[Duration]():
		return "duration"
	case reflect.TypeFor[bool]():
		return "boolean"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	}
	return t.String()
}

// WriteEffective writes the whole effective configuration as TOML so an
// operator can see what the daemon actually runs with. Credentials in
// publisher.origin_url are masked because this output ends up in logs and
// support tickets.
func (c *Config) WriteEffective(w io.Writer) error {
	masked := *c
	masked.Publisher.OriginURL = maskURL(c.Publisher.OriginURL)
	if err := toml.NewEncoder(w).Encode(masked); err != nil {
		return fmt.Errorf("write effective config: %w", err)
	}
	return nil
}

const maskedSecret = "xxxxx"

// maskURL hides the password, or a lone username, which commonly is a
// token. If the value does not parse, the credentials cannot be located,
// so anything that might carry some is hidden whole.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			return maskedSecret
		}
		return raw
	}
	if u.User == nil {
		return raw
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		u.User = url.UserPassword(u.User.Username(), maskedSecret)
	} else {
		u.User = url.User(maskedSecret)
	}
	return u.String()
}
