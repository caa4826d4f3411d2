package config

// tsIntegrations is [integrations.*]: one table per integration upstream
// registers, each with the fields of its config struct (paths relative to
// crates/trusted-server-core/src/integrations/). Upstream keeps the section
// as a map and reads each table when its integration is built
// (settings.rs:167-170), so an integration the binary does not know is
// never read; ssatd rejects it instead, with a suggestion, because there a
// misspelt name silently turns an integration off.
type tsIntegrations struct {
	Prebid           *tsPrebid       `toml:"prebid"`
	NextJS           *tsNextJS       `toml:"nextjs"`
	Testlight        *tsTestlight    `toml:"testlight"`
	Didomi           *tsDidomi       `toml:"didomi"`
	Sourcepoint      *tsSourcepoint  `toml:"sourcepoint"`
	Permutive        *tsPermutive    `toml:"permutive"`
	Lockr            *tsLockr        `toml:"lockr"`
	DataDome         *tsDataDome     `toml:"datadome"`
	GPT              *tsGPT          `toml:"gpt"`
	GPTDiagnostics   *tsEnabledOnly  `toml:"gpt_diagnostics"`
	Osano            *tsEnabledOnly  `toml:"osano"`
	APS              *tsAPS          `toml:"aps"`
	GoogleTagManager *tsGTM          `toml:"google_tag_manager"`
	AdserverMock     *tsAdserverMock `toml:"adserver_mock"`
}

// tsPrebid is [integrations.prebid] (prebid.rs:202-300, defaults 473-499),
// with the [integrations.prebid.bundle] table that upstream's `ts prebid
// bundle` reads (trusted-server-cli/src/prebid_bundle.rs:33-36).
type tsPrebid struct {
	Enabled                       bool             `toml:"enabled"`
	ServerURL                     string           `toml:"server_url"`
	AccountID                     *string          `toml:"account_id"`
	TimeoutMS                     int              `toml:"timeout_ms"`
	Bidders                       []string         `toml:"bidders"`
	Debug                         bool             `toml:"debug"`
	TestMode                      bool             `toml:"test_mode"`
	DebugQueryParams              *string          `toml:"debug_query_params"`
	ScriptPatterns                []string         `toml:"script_patterns"`
	ExternalBundleURL             *string          `toml:"external_bundle_url"`
	ExternalBundleSHA256          *string          `toml:"external_bundle_sha256"`
	ExternalBundleSRI             *string          `toml:"external_bundle_sri"`
	ClientSideBidders             []string         `toml:"client_side_bidders"`
	ExcludedGAMAdUnitPathSuffixes []string         `toml:"excluded_gam_ad_unit_path_suffixes"`
	BidParamZoneOverrides         map[string]any   `toml:"bid_param_zone_overrides"`
	BidParamOverrides             map[string]any   `toml:"bid_param_overrides"`
	BidParamOverrideRules         []map[string]any `toml:"bid_param_override_rules"`
	ConsentForwarding             string           `toml:"consent_forwarding"`
	SuppressNurl                  bool             `toml:"suppress_nurl"`
	SuppressNurlBidders           []string         `toml:"suppress_nurl_bidders"`
	Bundle                        *struct {
		Adapters          []string `toml:"adapters"`
		UserIDModules     []string `toml:"user_id_modules"`
		ExternalBundleURL *string  `toml:"external_bundle_url"`
	} `toml:"bundle"`
}

func (p *tsPrebid) setDefaults() {
	// prebid.rs:473-483: enabled unless turned off, 1000 ms, and the
	// mocktioneer test bidder.
	p.Enabled = true
	p.TimeoutMS = 1000
	p.Bidders = []string{"mocktioneer"}
}

type tsEnabledOnly struct {
	Enabled bool `toml:"enabled"`
}

// tsNextJS is [integrations.nextjs] (nextjs/mod.rs).
type tsNextJS struct {
	Enabled                 bool     `toml:"enabled"`
	RewriteAttributes       []string `toml:"rewrite_attributes"`
	MaxCombinedPayloadBytes int64    `toml:"max_combined_payload_bytes"`
}

// tsTestlight is [integrations.testlight] (testlight.rs).
type tsTestlight struct {
	Enabled        bool   `toml:"enabled"`
	Endpoint       string `toml:"endpoint"`
	TimeoutMS      int    `toml:"timeout_ms"`
	ShimSrc        string `toml:"shim_src"`
	RewriteScripts bool   `toml:"rewrite_scripts"`
}

// tsDidomi is [integrations.didomi] (didomi.rs).
type tsDidomi struct {
	Enabled   bool    `toml:"enabled"`
	ProxyPath *string `toml:"proxy_path"`
	SDKOrigin string  `toml:"sdk_origin"`
	APIOrigin string  `toml:"api_origin"`
}

// tsSourcepoint is [integrations.sourcepoint] (sourcepoint.rs).
type tsSourcepoint struct {
	Enabled         bool    `toml:"enabled"`
	RewriteSDK      bool    `toml:"rewrite_sdk"`
	CDNOrigin       string  `toml:"cdn_origin"`
	AuthCookieName  *string `toml:"auth_cookie_name"`
	CacheTTLSeconds int     `toml:"cache_ttl_seconds"`
}

// tsPermutive is [integrations.permutive] (permutive.rs).
type tsPermutive struct {
	Enabled               bool   `toml:"enabled"`
	OrganizationID        string `toml:"organization_id"`
	WorkspaceID           string `toml:"workspace_id"`
	ProjectID             string `toml:"project_id"`
	APIEndpoint           string `toml:"api_endpoint"`
	SecureSignalsEndpoint string `toml:"secure_signals_endpoint"`
	CacheTTLSeconds       int    `toml:"cache_ttl_seconds"`
	RewriteSDK            bool   `toml:"rewrite_sdk"`
}

// tsLockr is [integrations.lockr] (lockr.rs).
type tsLockr struct {
	Enabled         bool    `toml:"enabled"`
	AppID           string  `toml:"app_id"`
	APIEndpoint     string  `toml:"api_endpoint"`
	SDKURL          string  `toml:"sdk_url"`
	CacheTTLSeconds int     `toml:"cache_ttl_seconds"`
	RewriteSDK      bool    `toml:"rewrite_sdk"`
	RewriteSDKHost  *bool   `toml:"rewrite_sdk_host"`
	OriginOverride  *string `toml:"origin_override"`
}

// tsDataDome is [integrations.datadome] (datadome.rs,
// datadome/protection_scope.rs); exclusion rules and IP list sources are
// accepted whole.
type tsDataDome struct {
	Enabled                         bool             `toml:"enabled"`
	SDKOrigin                       string           `toml:"sdk_origin"`
	APIOrigin                       string           `toml:"api_origin"`
	CacheTTLSeconds                 int              `toml:"cache_ttl_seconds"`
	RewriteSDK                      bool             `toml:"rewrite_sdk"`
	EnableProtection                bool             `toml:"enable_protection"`
	ServerSideKeySecretStore        string           `toml:"server_side_key_secret_store"`
	ServerSideKeySecretName         string           `toml:"server_side_key_secret_name"`
	ProtectionAPIOrigin             string           `toml:"protection_api_origin"`
	TimeoutMS                       int              `toml:"timeout_ms"`
	ProtectionExcludedMethods       []string         `toml:"protection_excluded_methods"`
	ProtectionExcludedASNs          []int            `toml:"protection_excluded_asns"`
	ProtectionExcludedIPCIDRs       []string         `toml:"protection_excluded_ip_cidrs"`
	ProtectionExcludedIPCIDRSources []map[string]any `toml:"protection_excluded_ip_cidr_sources"`
	ProtectionIPListCacheTTLSeconds int64            `toml:"protection_ip_list_cache_ttl_seconds"`
	ProtectionExclusionRules        []map[string]any `toml:"protection_exclusion_rules"`
	ProtectionTestBypass            *struct {
		Enabled               bool   `toml:"enabled"`
		CredentialSecretStore string `toml:"credential_secret_store"`
		CredentialSecretName  string `toml:"credential_secret_name"`
	} `toml:"protection_test_bypass"`
	EnableGraphQLSupport    bool   `toml:"enable_graphql_support"`
	ClientSideKey           string `toml:"client_side_key"`
	InjectClientSideTag     bool   `toml:"inject_client_side_tag"`
	ClientSideTagURL        string `toml:"client_side_tag_url"`
	ClientSideConfiguration any    `toml:"client_side_configuration"`
}

// tsGPT is [integrations.gpt] (gpt.rs).
type tsGPT struct {
	Enabled               bool    `toml:"enabled"`
	GAMAttributionEnabled bool    `toml:"gam_attribution_enabled"`
	ScriptURL             string  `toml:"script_url"`
	CacheTTLSeconds       int     `toml:"cache_ttl_seconds"`
	RewriteScript         bool    `toml:"rewrite_script"`
	SlimPrebidURL         *string `toml:"slim_prebid_url"`
}

// tsAPS is [integrations.aps] (aps.rs).
type tsAPS struct {
	Enabled              bool    `toml:"enabled"`
	AccountID            string  `toml:"account_id"`
	Endpoint             string  `toml:"endpoint"`
	TimeoutMS            int     `toml:"timeout_ms"`
	Debug                bool    `toml:"debug"`
	AllowScriptCreatives bool    `toml:"allow_script_creatives"`
	InventoryDomain      *string `toml:"inventory_domain"`
	InventoryPageOrigin  *string `toml:"inventory_page_origin"`
}

// tsGTM is [integrations.google_tag_manager] (google_tag_manager.rs).
type tsGTM struct {
	Enabled           bool   `toml:"enabled"`
	ContainerID       string `toml:"container_id"`
	UpstreamURL       string `toml:"upstream_url"`
	CacheMaxAge       int    `toml:"cache_max_age"`
	MaxBeaconBodySize int64  `toml:"max_beacon_body_size"`
}

// tsAdserverMock is [integrations.adserver_mock] (adserver_mock.rs).
type tsAdserverMock struct {
	Enabled            bool              `toml:"enabled"`
	Endpoint           string            `toml:"endpoint"`
	TimeoutMS          int               `toml:"timeout_ms"`
	PriceFloor         *float64          `toml:"price_floor"`
	ContextQueryParams map[string]string `toml:"context_query_params"`
}
