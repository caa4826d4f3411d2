package config

import "github.com/ssatd/ssatd/internal/consent"

// The schema of a Trusted Server settings file (trusted-server.toml), as
// upstream reads it at IABTechLab/trusted-server main d97bda69: the Settings
// struct and the structs it holds, all `deny_unknown_fields`
// (crates/trusted-server-core/src/settings.rs:2600-2636). The decoder
// (decode.go) walks a file against these types exactly as it walks a native
// file against Config, so an unknown key is an error naming it, with a
// suggestion, and a value of the wrong type says what it wants. A pointer
// field is upstream's Option<T>: nil when the file leaves it out.
//
// Defaults are upstream's, set by tsDefaults and the setDefaults methods,
// for the keys ssatd acts on (tsmap.go); the others are accepted and not
// read. Upstream paths below are relative to crates/trusted-server-core/src/.

// tsSettings is the whole file (settings.rs:2600-2636), plus the [ssatd]
// table, which carries ssatd's own settings in its native form.
type tsSettings struct {
	Publisher             tsPublisher       `toml:"publisher"`
	TesterCookie          tsTesterCookie    `toml:"tester_cookie"`
	EC                    tsEC              `toml:"ec"`
	Integrations          tsIntegrations    `toml:"integrations"`
	Handlers              []tsHandler       `toml:"handlers"`
	ResponseHeaders       map[string]string `toml:"response_headers"`
	RequestSigning        *tsRequestSigning `toml:"request_signing"`
	Rewrite               tsRewrite         `toml:"rewrite"`
	Auction               tsAuction         `toml:"auction"`
	Consent               tsConsent         `toml:"consent"`
	Cache                 tsCache           `toml:"cache"`
	Proxy                 tsProxy           `toml:"proxy"`
	CreativeOpportunities *tsCreativeOpps   `toml:"creative_opportunities"`
	ImageOptimizer        tsImageOptimizer  `toml:"image_optimizer"`
	Tinybird              tsTinybird        `toml:"tinybird"`
	Debug                 tsDebug           `toml:"debug"`
	SSATD                 map[string]any    `toml:"ssatd"`
}

// tsPublisher is [publisher] (settings.rs:30-78).
type tsPublisher struct {
	Domain                   string  `toml:"domain"`
	CookieDomain             string  `toml:"cookie_domain"`
	OriginURL                string  `toml:"origin_url"`
	OriginHostHeaderOverride *string `toml:"origin_host_header_override"`
	ProxySecret              string  `toml:"proxy_secret"`
	MaxBufferedBodyBytes     int64   `toml:"max_buffered_body_bytes"`
}

type tsTesterCookie struct {
	Enabled bool `toml:"enabled"`
}

// tsEC is [ec] (settings.rs:424-456) and its partners (settings.rs:271-327).
type tsEC struct {
	Passphrase            string      `toml:"passphrase"`
	ECStore               *string     `toml:"ec_store"`
	PullSyncConcurrency   int         `toml:"pull_sync_concurrency"`
	ClusterTrustThreshold int         `toml:"cluster_trust_threshold"`
	ClusterRecheckSecs    int64       `toml:"cluster_recheck_secs"`
	Partners              []tsPartner `toml:"partners"`
}

type tsPartner struct {
	Name                   string   `toml:"name"`
	SourceDomain           string   `toml:"source_domain"`
	OpenRTBAtype           int      `toml:"openrtb_atype"`
	BidstreamEnabled       bool     `toml:"bidstream_enabled"`
	APIToken               string   `toml:"api_token"`
	BatchRateLimit         int      `toml:"batch_rate_limit"`
	PullSyncEnabled        bool     `toml:"pull_sync_enabled"`
	PullSyncURL            *string  `toml:"pull_sync_url"`
	PullSyncAllowedDomains []string `toml:"pull_sync_allowed_domains"`
	PullSyncTTLSec         int64    `toml:"pull_sync_ttl_sec"`
	PullSyncRateLimit      int      `toml:"pull_sync_rate_limit"`
	TSPullToken            *string  `toml:"ts_pull_token"`
}

// tsHandler is one [[handlers]] entry (settings.rs:556-567).
type tsHandler struct {
	Path     string `toml:"path"`
	Username string `toml:"username"`
	Password string `toml:"password"`
}

// tsRequestSigning is [request_signing] (settings.rs:622-628).
type tsRequestSigning struct {
	Enabled       bool   `toml:"enabled"`
	ConfigStoreID string `toml:"config_store_id"`
	SecretStoreID string `toml:"secret_store_id"`
}

// tsRewrite is [rewrite] (settings.rs:519-525).
type tsRewrite struct {
	ExcludeDomains []string `toml:"exclude_domains"`
}

// tsAuction is [auction] (auction_config_types.rs:8-66).
type tsAuction struct {
	Enabled            bool     `toml:"enabled"`
	SanitizeCreatives  bool     `toml:"sanitize_creatives"`
	RewriteCreatives   bool     `toml:"rewrite_creatives"`
	Providers          []string `toml:"providers"`
	Mediator           *string  `toml:"mediator"`
	TimeoutMS          int      `toml:"timeout_ms"`
	CreativeStore      string   `toml:"creative_store"`
	AllowedContextKeys []string `toml:"allowed_context_keys"`
}

// tsConsent is [consent] (consent_config.rs:38-80, 179-270).
type tsConsent struct {
	Mode              string `toml:"mode"`
	CheckExpiration   bool   `toml:"check_expiration"`
	MaxConsentAgeDays int    `toml:"max_consent_age_days"`
	GDPR              struct {
		AppliesIn []string `toml:"applies_in"`
	} `toml:"gdpr"`
	USStates struct {
		PrivacyStates []string `toml:"privacy_states"`
	} `toml:"us_states"`
	USPrivacyDefaults struct {
		NoticeGiven      bool `toml:"notice_given"`
		LSPACovered      bool `toml:"lspa_covered"`
		GPCImpliesOptout bool `toml:"gpc_implies_optout"`
	} `toml:"us_privacy_defaults"`
	ConflictResolution struct {
		Mode                   string `toml:"mode"`
		FreshnessThresholdDays int    `toml:"freshness_threshold_days"`
	} `toml:"conflict_resolution"`
	ConsentStore *string `toml:"consent_store"`
}

// tsCache is [cache] (settings.rs:1874-1985).
type tsCache struct {
	AssetRules []tsAssetRule `toml:"asset_rules"`
}

type tsAssetRule struct {
	ID                          string   `toml:"id"`
	Enabled                     bool     `toml:"enabled"`
	Preset                      *string  `toml:"preset"`
	PathPrefix                  *string  `toml:"path_prefix"`
	PathGlob                    *string  `toml:"path_glob"`
	PathGlobs                   []string `toml:"path_globs"`
	PathRegex                   *string  `toml:"path_regex"`
	Extensions                  []string `toml:"extensions"`
	FingerprintStyle            *string  `toml:"fingerprint_style"`
	Visibility                  string   `toml:"visibility"`
	BrowserTTLSeconds           *int64   `toml:"browser_ttl_seconds"`
	EdgeTTLSeconds              *int64   `toml:"edge_ttl_seconds"`
	StaleWhileRevalidateSeconds *int64   `toml:"stale_while_revalidate_seconds"`
	StaleIfErrorSeconds         *int64   `toml:"stale_if_error_seconds"`
	Immutable                   bool     `toml:"immutable"`
}

// tsProxy is [proxy] (settings.rs:1569-1590) with its asset routes
// (settings.rs:1324-1353); an asset route's auth and image_optimizer
// tables are accepted whole.
type tsProxy struct {
	CertificateCheck bool     `toml:"certificate_check"`
	AllowedDomains   []string `toml:"allowed_domains"`
	AssetRoutes      []struct {
		Prefix         string         `toml:"prefix"`
		OriginURL      string         `toml:"origin_url"`
		PathPattern    *string        `toml:"path_pattern"`
		TargetPath     *string        `toml:"target_path"`
		Auth           map[string]any `toml:"auth"`
		ImageOptimizer map[string]any `toml:"image_optimizer"`
	} `toml:"asset_routes"`
}

// tsImageOptimizer is [image_optimizer] (settings.rs:876-881); each
// profile set is accepted whole.
type tsImageOptimizer struct {
	ProfileSets map[string]any `toml:"profile_sets"`
}

// tsTinybird is [tinybird] (settings.rs:1706-1740).
type tsTinybird struct {
	Enabled            bool    `toml:"enabled"`
	APIHost            string  `toml:"api_host"`
	SecretStore        string  `toml:"secret_store"`
	AuctionDataset     string  `toml:"auction_dataset"`
	AuctionTokenSecret string  `toml:"auction_token_secret"`
	AccessEnabled      bool    `toml:"access_enabled"`
	AccessDataset      string  `toml:"access_dataset"`
	AccessTokenSecret  string  `toml:"access_token_secret"`
	AccessSampleRate   float64 `toml:"access_sample_rate"`
	MaxBodyBytes       int64   `toml:"max_body_bytes"`
}

// tsDebug is [debug] (settings.rs:2372-2416, 2468-2512).
type tsDebug struct {
	JA4EndpointEnabled        bool `toml:"ja4_endpoint_enabled"`
	AuctionHTMLComment        bool `toml:"auction_html_comment"`
	AuctionHTMLCommentOptions struct {
		IncludeProviderResponses bool     `toml:"include_provider_responses"`
		IncludeMediatorResponse  bool     `toml:"include_mediator_response"`
		IncludeBids              bool     `toml:"include_bids"`
		MetadataKeys             []string `toml:"metadata_keys"`
		Verbosity                string   `toml:"verbosity"`
		Format                   string   `toml:"format"`
	} `toml:"auction_html_comment_options"`
	InjectAdmForTesting bool `toml:"inject_adm_for_testing"`
}

// tsCreativeOpps is [creative_opportunities]
// (creative_opportunities.rs:220-336).
type tsCreativeOpps struct {
	GAMNetworkID               string   `toml:"gam_network_id"`
	AuctionTimeoutMS           *int     `toml:"auction_timeout_ms"`
	PriceGranularity           string   `toml:"price_granularity"`
	SectionRoot                *string  `toml:"section_root"`
	SectionSegment             *int     `toml:"section_segment"`
	AssemblyMode               *string  `toml:"assembly_mode"`
	TemplateCacheVary          []string `toml:"template_cache_vary"`
	TemplateCacheMaxAgeSeconds *int     `toml:"template_cache_max_age_seconds"`
	OriginIsCookieIndependent  *bool    `toml:"origin_is_cookie_independent"`
	Slot                       []tsSlot `toml:"slot"`
}

// tsSlot is one [[creative_opportunities.slot]]
// (creative_opportunities.rs:524-547, 903-978).
type tsSlot struct {
	ID           string            `toml:"id"`
	GAMUnitPath  *string           `toml:"gam_unit_path"`
	DivID        *string           `toml:"div_id"`
	PagePatterns []string          `toml:"page_patterns"`
	Formats      []tsFormat        `toml:"formats"`
	FloorPrice   *float64          `toml:"floor_price"`
	Targeting    map[string]string `toml:"targeting"`
	Providers    struct {
		APS *struct {
			SlotID string `toml:"slot_id"`
		} `toml:"aps"`
		Prebid *struct {
			Bidders map[string]any `toml:"bidders"`
		} `toml:"prebid"`
	} `toml:"providers"`
}

type tsFormat struct {
	Width     int    `toml:"width"`
	Height    int    `toml:"height"`
	MediaType string `toml:"media_type"`
}

// tsDefaults is a Settings with upstream's defaults for the keys ssatd
// maps (tsmap.go).
func tsDefaults() *tsSettings {
	return &tsSettings{
		// settings.rs:80-82.
		Publisher: tsPublisher{MaxBufferedBodyBytes: 16 << 20},
		// auction_config_types.rs:69-111: timeout 2000 ms, creatives
		// rewritten, not sanitised.
		Auction: tsAuction{TimeoutMS: 2000, RewriteCreatives: true, CreativeStore: "creative_store"},
		Proxy:   tsProxy{CertificateCheck: true},
		Consent: tsConsentDefaults(),
	}
}

// tsConsentDefaults is upstream's default [consent] (consent_config.rs:
// 83-96), from the one list of them (consent.DefaultTuning).
func tsConsentDefaults() tsConsent {
	t := consent.DefaultTuning()
	var c tsConsent
	c.Mode = string(t.Mode)
	c.CheckExpiration = t.CheckExpiration
	c.MaxConsentAgeDays = t.MaxConsentAgeDays
	c.GDPR.AppliesIn = t.GDPRCountries
	c.USStates.PrivacyStates = t.USPrivacyStates
	c.USPrivacyDefaults.NoticeGiven = t.USPrivacyDefaults.NoticeGiven
	c.USPrivacyDefaults.LSPACovered = t.USPrivacyDefaults.LSPACovered
	c.USPrivacyDefaults.GPCImpliesOptout = t.USPrivacyDefaults.GPCImpliesOptOut
	c.ConflictResolution.Mode = string(t.Conflict)
	c.ConflictResolution.FreshnessThresholdDays = t.FreshnessThresholdDays
	return c
}

func (c *tsCreativeOpps) setDefaults() {
	// price_bucket.rs:3-12: dense unless set.
	c.PriceGranularity = "dense"
}
