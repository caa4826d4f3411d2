package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/glob"
	"github.com/ssatd/ssatd/internal/hostport"
)

type problems []error

// problem keeps the key separate from the message so a key containing "%"
// (targeting keys are free-form) cannot corrupt the format string.
type problem struct {
	key string
	err error
}

func (e *problem) Error() string { return e.key + ": " + e.err.Error() }

func (e *problem) Unwrap() error { return e.err }

func (p *problems) addf(key, format string, args ...any) {
	*p = append(*p, &problem{key: key, err: fmt.Errorf(format, args...)})
}

// Validate checks every setting and records all problems rather than
// stopping at the first. It also fills the derived fields (parsed origin,
// trusted prefixes, compiled slot patterns) and normalises case-insensitive
// values, so a validated Config needs no further parsing at request time.
// It returns nil or an *Errors.
func (c *Config) Validate() error {
	var p problems
	c.validateServer(&p)
	c.validatePublisher(&p)
	c.validateAddresses(&p)
	c.validateCompression(&p)
	c.validateAuctionAndSlots(&p)
	c.validateCompute(&p)
	c.validateGeo(&p)
	c.validateBundle(&p)
	c.validateConsent(&p)
	c.validateRequestSigning(&p)
	c.validateHandlers(&p)
	c.validateTesterCookie(&p)
	c.validateEC(&p)
	c.validateTracing(&p)
	for i, ua := range c.Bots.UserAgents {
		if strings.TrimSpace(ua) == "" {
			p.addf(fmt.Sprintf("bots.user_agents[%d]", i), "must not be empty")
		}
	}
	if len(p) == 0 {
		return nil
	}
	return &Errors{List: p}
}

func (c *Config) validateServer(p *problems) {
	s := &c.Server
	checkListen(p, "server.listen", s.Listen)
	checkListen(p, "server.admin_listen", s.AdminListen)
	if s.DrainPeriod.Duration < 0 {
		p.addf("server.drain_period", "must be zero or positive, got %s", s.DrainPeriod)
	}
	if s.ShutdownTimeout.Duration < 0 {
		p.addf("server.shutdown_timeout", "must be zero or positive, got %s", s.ShutdownTimeout)
	}
	checkPositiveDuration(p, "server.read_header_timeout", s.ReadHeaderTimeout)
	checkPositiveDuration(p, "server.read_timeout", s.ReadTimeout)
	checkPositiveDuration(p, "server.idle_timeout", s.IdleTimeout)
	checkPositiveDuration(p, "server.write_timeout", s.WriteTimeout)
	if s.MaxHeaderBytes <= 0 {
		p.addf("server.max_header_bytes", "must be positive, got %d", s.MaxHeaderBytes)
	}
	if s.MaxConcurrentPages <= 0 {
		p.addf("server.max_concurrent_pages", "must be at least 1, got %d", s.MaxConcurrentPages)
	}
	if s.MaxRequestsInProgress < 0 {
		p.addf("server.max_requests_in_progress", "must be zero (8 per page place) or positive, got %d", s.MaxRequestsInProgress)
	}
	if s.PageQueueTimeout.Duration < 0 {
		p.addf("server.page_queue_timeout", "must be zero (no waiting) or positive, got %s", s.PageQueueTimeout)
	}
	c.validateTLS(p)

	s.TrustedPrefixes = s.TrustedPrefixes[:0]
	for i, raw := range s.TrustedProxies {
		prefix, err := parseTrustedProxy(raw)
		if err != nil {
			p.addf(fmt.Sprintf("server.trusted_proxies[%d]", i), "%w", err)
			continue
		}
		s.TrustedPrefixes = append(s.TrustedPrefixes, prefix)
	}
}

func parseTrustedProxy(raw string) (netip.Prefix, error) {
	if strings.Contains(raw, "/") {
		prefix, err := netip.ParsePrefix(raw)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("must be a CIDR such as \"10.0.0.0/8\" or a bare IP, got %q", raw)
		}
		// Masking makes "10.1.2.3/8" mean the network it obviously names.
		return prefix.Masked(), nil
	}
	addr, err := netip.ParseAddr(raw)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("must be a CIDR such as \"10.0.0.0/8\" or a bare IP, got %q", raw)
	}
	if addr.Zone() != "" {
		// Peer addresses seen by the server carry no zone, so a zoned
		// entry could never match and is almost certainly a mistake.
		return netip.Prefix{}, fmt.Errorf("must not carry an IPv6 zone, got %q", raw)
	}
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}

func checkListen(p *problems, key, addr string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		p.addf(key, "must be host:port or :port, got %q", addr)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.addf(key, "port must be a number from 0 to 65535, got %q in %q", port, addr)
	}
}

func checkPositiveDuration(p *problems, key string, d Duration) {
	if d.Duration <= 0 {
		p.addf(key, "must be a positive duration such as \"15s\", got %s", d)
	}
}

func checkRange(p *problems, key string, v int, r compress.Range) {
	if !r.Contains(v) {
		p.addf(key, "must be between %d and %d, got %d", r.Min, r.Max, v)
	}
}

func checkOneOf(p *problems, key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	p.addf(key, "must be one of %q, got %q", allowed, v)
}

func (c *Config) validatePublisher(p *problems) {
	pub := &c.Publisher
	if pub.Domain == "" {
		p.addf("publisher.domain", "is required: the public host[:port] of the site, e.g. \"www.example.com\"")
	} else if err := checkHostPort(pub.Domain); err != nil {
		p.addf("publisher.domain", "%w", err)
	} else {
		pub.Domain = strings.ToLower(pub.Domain)
	}

	pub.Origin, pub.OriginHost = nil, ""
	if pub.OriginURL == "" {
		p.addf("publisher.origin_url", "is required: the origin as http(s)://host[:port], e.g. \"https://origin.example.com\"")
	} else if u, err := parseOrigin(pub.OriginURL); err != nil {
		p.addf("publisher.origin_url", "%w", err)
	} else {
		pub.Origin = u
		pub.OriginHost = originHostKey(u)
	}

	if pub.OriginHostHeaderOverride != "" {
		if err := checkHostPort(pub.OriginHostHeaderOverride); err != nil {
			p.addf("publisher.origin_host_header_override", "%w", err)
		}
	}
	for i, h := range pub.AllowedHosts {
		if err := checkHostPort(h); err != nil {
			p.addf(fmt.Sprintf("publisher.allowed_hosts[%d]", i), "%w", err)
			continue
		}
		pub.AllowedHosts[i] = strings.ToLower(h)
	}

	if pub.MaxOriginResponseBytes <= 0 {
		p.addf("publisher.max_origin_response_bytes", "must be positive, got %d", pub.MaxOriginResponseBytes)
	}
	if pub.MaxDecodedBodyBytes <= 0 {
		p.addf("publisher.max_decoded_body_bytes", "must be positive, got %d", pub.MaxDecodedBodyBytes)
	}
	checkPositiveDuration(p, "publisher.origin_connect_timeout", pub.OriginConnectTimeout)
	checkPositiveDuration(p, "publisher.origin_header_timeout", pub.OriginHeaderTimeout)
	checkPositiveDuration(p, "publisher.origin_idle_timeout", pub.OriginIdleTimeout)
	checkOneOf(p, "publisher.offload_origin_accept_encoding", pub.OffloadOriginAcceptEncoding, OffloadOriginIdentity, OffloadOriginNegotiate)
	checkOneOf(p, "publisher.ssat_cache_control", pub.SSATCacheControl, SSATCachePrivate, SSATCacheNoStorePrivate)
	validateRewriteContentTypes(p, pub)
}

// parseOrigin quotes the value with its credentials masked, because
// validation errors are logged.
func parseOrigin(raw string) (*url.URL, error) {
	shown := maskURL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("must be http(s)://host[:port], got %q: %w", shown, unwrapURLError(err))
	}
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("must be http(s)://host[:port] with a scheme, got %q", shown)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("scheme must be http or https, got %q", shown)
	case u.Opaque != "" || u.Host == "":
		return nil, fmt.Errorf("must be %s://host[:port] with a host, got %q", u.Scheme, shown)
	case u.Path != "" && u.Path != "/":
		return nil, fmt.Errorf("must be scheme://host[:port] with no path, got %q", shown)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("must be scheme://host[:port] with no query, got %q", shown)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("must be scheme://host[:port] with no fragment, got %q", shown)
	}
	if err := checkHostPort(u.Host); err != nil {
		return nil, fmt.Errorf("host in %q: %w", shown, err)
	}
	u.Path, u.RawPath = "", ""
	return u, nil
}

// unwrapURLError drops url.Error's own copy of the input, which would
// print the unmasked password.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// checkHostPort accepts what may appear in a Host header: a DNS name, an
// IPv4 address or a bracketed IPv6 address, optionally with a port.
func checkHostPort(s string) error {
	const want = "must be a host or host:port with no scheme, path or credentials"
	if s == "" {
		return fmt.Errorf("%s, got an empty value", want)
	}
	if strings.Contains(s, "://") {
		return fmt.Errorf("%s, got %q (drop the scheme)", want, s)
	}
	if strings.ContainsAny(s, "/?#@ \t\r\n") {
		return fmt.Errorf("%s, got %q", want, s)
	}
	host := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() || a.Zone() != "" {
			return fmt.Errorf("%s, got %q (not an IPv6 address)", want, s)
		}
		return nil
	}
	if strings.Contains(s, ":") {
		h, port := hostport.Split(s)
		if !cleanSplit(s, h, port) {
			return fmt.Errorf("%s, got %q", want, s)
		}
		h = hostport.Bare(h)
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s, got %q (port must be 1-65535)", want, s)
		}
		if strings.Contains(h, ":") {
			if a, err := netip.ParseAddr(h); err != nil || !a.Is6() || a.Zone() != "" {
				return fmt.Errorf("%s, got %q (not an IPv6 address)", want, s)
			}
			return nil
		}
		host = h
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if !validHostname(host) {
		return fmt.Errorf("%s, got %q (invalid host name)", want, s)
	}
	return nil
}

// cleanSplit reports whether hostport.Split took a port off s, giving
// host and port, where net.SplitHostPort would: brackets only around a
// whole host, and no other bracket.
func cleanSplit(s, host, port string) bool {
	if len(host) == len(s) {
		return false // no port's colon: two outside brackets, or one inside
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return false
		}
		host = host[1 : len(host)-1]
	}
	return !strings.ContainsAny(host, "[]") && !strings.ContainsAny(port, "[]")
}

func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			default:
				return false
			}
		}
	}
	return true
}

func (c *Config) validateCompression(p *problems) {
	checkRange(p, "compression.gzip_level", c.Compression.GzipLevel, compress.GzipLevels)
	checkRange(p, "compression.brotli_quality", c.Compression.BrotliQuality, compress.BrotliQualities)
	checkRange(p, "compression.brotli_window", c.Compression.BrotliWindow, compress.BrotliWindows)
	checkOneOf(p, "platform.delivery_compression", c.Platform.DeliveryCompression,
		DeliveryCompressionBuiltin, DeliveryCompressionExternal, DeliveryCompressionUnavailable)
	checkRange(p, "delivery.gzip_level", c.Delivery.GzipLevel, compress.GzipLevels)
	checkRange(p, "delivery.brotli_quality", c.Delivery.BrotliQuality, compress.BrotliQualities)
	if c.Delivery.MinSize < 0 {
		p.addf("delivery.min_size", "must be zero or positive, got %d", c.Delivery.MinSize)
	}
}

func (c *Config) validateAuctionAndSlots(p *problems) {
	if c.Auction.TimeoutMS <= 0 {
		p.addf("auction.timeout_ms", "must be a positive number of milliseconds, got %d", c.Auction.TimeoutMS)
	}
	if c.Auction.PostAuctionTimeoutMS < 0 {
		p.addf("auction.post_auction_timeout_ms", "must be zero (auction.timeout_ms) or a positive number of milliseconds, got %d", c.Auction.PostAuctionTimeoutMS)
	}
	checkOneOf(p, "auction.provider", c.Auction.Provider, AuctionProviderNone, AuctionProviderStatic, AuctionProviderOpenRTB)
	c.validateOpenRTB(p)
	c.FirstParty.validate(p)

	ids := make(map[string]int, len(c.CreativeOpportunities.Slots))
	for i := range c.CreativeOpportunities.Slots {
		s := &c.CreativeOpportunities.Slots[i]
		key := fmt.Sprintf("creative_opportunities.slot[%d]", i)
		if s.ID == "" {
			p.addf(key+".id", "is required")
		} else if first, dup := ids[s.ID]; dup {
			p.addf(key+".id", "%q is already used by creative_opportunities.slot[%d]; slot ids must be unique", s.ID, first)
		} else {
			ids[s.ID] = i
		}
		if s.DivID == "" {
			s.DivID = s.ID
		}
		validateSlot(p, key, s)
	}

	for i, b := range c.Auction.StaticBids {
		key := fmt.Sprintf("auction.static_bids[%d].slot_id", i)
		if b.SlotID == "" {
			p.addf(key, "is required")
		} else if _, ok := ids[b.SlotID]; !ok {
			p.addf(key, "%q does not name a configured creative_opportunities.slot id", b.SlotID)
		}
	}
}

func validateSlot(p *problems, key string, s *Slot) {
	s.Patterns = nil
	if len(s.PagePatterns) == 0 {
		p.addf(key+".page_patterns", "must list at least one URL path pattern, e.g. [\"/news/**\"]")
	}
	for j, pat := range s.PagePatterns {
		g, err := glob.Compile(pat)
		if err != nil {
			p.addf(fmt.Sprintf("%s.page_patterns[%d]", key, j), "%w", err)
			continue
		}
		s.Patterns = append(s.Patterns, g)
	}
	validateBidders(p, key, s)
	// As upstream (creative_opportunities.rs:611-620 at IABTechLab/
	// trusted-server d97bda69): a finite price, zero or more.
	if f := s.FloorPrice; f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0) || *f < 0) {
		p.addf(key+".floor_price", "must be a price of zero or more, got %v", *f)
	}
	for j, f := range s.Formats {
		if len(f) != 2 || f[0] <= 0 || f[1] <= 0 {
			p.addf(fmt.Sprintf("%s.formats[%d]", key, j), "must be [width, height] with both positive, got %v", f)
		}
	}
	// Sorted so that repeated runs report problems in the same order.
	for _, k := range slices.Sorted(maps.Keys(s.Targeting)) {
		v := s.Targeting[k]
		tkey := key + ".targeting." + tomlKey(k)
		if k == "" {
			p.addf(tkey, "key must not be empty")
		}
		norm, ok := normalizeTargeting(v)
		if !ok {
			p.addf(tkey, "must be a string or an array of strings, got %T %v", v, v)
			continue
		}
		s.Targeting[k] = norm
	}
}

// tomlKey quotes k the way TOML requires when it is not a bare key, so the
// reported name can be searched for in the file.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return strconv.Quote(k)
		}
	}
	return k
}

// normalizeTargeting turns TOML's []any into []string so consumers can
// type-switch on just string and []string.
func normalizeTargeting(v any) (any, bool) {
	switch t := v.(type) {
	case string, []string:
		return t, true
	case []any:
		out := make([]string, len(t))
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// Warnings lists settings that are valid but probably unintended or risky
// in production.
func (c *Config) Warnings() []string {
	var w []string
	if c.Debug.DiagnosticsHeaders {
		w = append(w, "debug.diagnostics_headers is on: responses expose internal processing details")
	}
	if c.Debug.AllowModeOverride {
		w = append(w, "debug.allow_mode_override is on: any client can switch the processing mode of its own requests")
	}
	if c.Publisher.SSATCompressionOffloadEnabled && c.Platform.DeliveryCompression == DeliveryCompressionUnavailable {
		w = append(w, "publisher.ssat_compression_offload_enabled is on but platform.delivery_compression is \"unavailable\": offload is inert")
	}
	w = append(w, c.openRTBWarnings()...)
	w = append(w, c.computeWarnings()...)
	w = append(w, c.geoWarnings()...)
	w = append(w, c.storeWarning()...)
	if e := c.eligibilityWarning(); e != "" {
		w = append(w, e)
	}
	if e := c.consentWarning(); e != "" {
		w = append(w, e)
	}
	if e := c.consentAgeWarning(); e != "" {
		w = append(w, e)
	}
	if e := c.FirstParty.warning(); e != "" {
		w = append(w, e)
	}
	w = append(w, c.Source.ignoredEnvWarnings()...)
	return c.Source.upstreamNames(w)
}
