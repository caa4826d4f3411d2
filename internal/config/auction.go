package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/ssatd/ssatd/internal/auction"
)

// reservedHeaders are set by ssatd on every bid request, or frame it; an
// endpoint's headers table may not replace them.
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection", "X-Openrtb-Version"}

func (c *Config) validateOpenRTB(p *problems) {
	a := &c.Auction
	// The auction's own list: a name it accepts is one the provider can use.
	checkOneOf(p, "auction.price_granularity", a.PriceGranularity, auction.GranularityNames()...)
	if len(a.Currency) != 3 || strings.Trim(strings.ToUpper(a.Currency), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		p.addf("auction.currency", "must be a three-letter ISO-4217 code such as \"USD\", got %q", a.Currency)
	} else {
		a.Currency = strings.ToUpper(a.Currency)
	}
	if a.Provider == AuctionProviderOpenRTB && len(a.OpenRTB) == 0 {
		p.addf("auction.openrtb", "provider \"openrtb\" needs at least one [[auction.openrtb]] endpoint")
	}
	names := map[string]int{}
	for i := range a.OpenRTB {
		e := &a.OpenRTB[i]
		key := fmt.Sprintf("auction.openrtb[%d]", i)
		switch {
		case e.Name == "":
			p.addf(key+".name", "is required: a label for logs and metrics, e.g. \"pbs\"")
		case strings.Trim(e.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "":
			p.addf(key+".name", "must use only letters, digits, '_', '.' and '-', got %q", e.Name)
		default:
			if first, dup := names[e.Name]; dup {
				p.addf(key+".name", "%q is already used by auction.openrtb[%d]; names must be unique", e.Name, first)
			} else {
				names[e.Name] = i
			}
		}
		if err := checkEndpointURL(e.URL); err != nil {
			p.addf(key+".url", "%w", err)
		}
		if e.TimeoutMS < 0 {
			p.addf(key+".timeout_ms", "must be zero (the auction deadline) or a positive number of milliseconds, got %d", e.TimeoutMS)
		}
		for _, h := range slices.Sorted(maps.Keys(e.Headers)) {
			hkey := key + ".headers." + tomlKey(h)
			switch {
			case !httpguts.ValidHeaderFieldName(h): // a token (RFC 9110 §5.1)
				p.addf(hkey, "is not a valid HTTP header name")
			case slices.ContainsFunc(reservedHeaders, func(r string) bool { return strings.EqualFold(r, h) }):
				p.addf(hkey, "is set by ssatd and cannot be configured")
			case !httpguts.ValidHeaderFieldValue(e.Headers[h]):
				// No control characters but tab (RFC 9110 §5.5), so no CR or
				// LF that could split the request. The value is a secret: do
				// not print it.
				p.addf(hkey, "value contains characters not allowed in an HTTP header")
			}
		}
	}
}

// checkEndpointURL accepts an absolute http(s) URL with a host and no
// credentials (they belong in headers, which config check masks).
func checkEndpointURL(raw string) error {
	shown := maskURL(raw)
	if raw == "" {
		return fmt.Errorf("is required: the endpoint as http(s)://host[:port]/path, e.g. \"http://prebid-server:8000/openrtb2/auction\"")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("must be http(s)://host[:port]/path, got %q: %w", shown, unwrapURLError(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme must be http or https, got %q", shown)
	case u.Opaque != "" || u.Host == "":
		return fmt.Errorf("must be %s://host[:port]/path with a host, got %q", u.Scheme, shown)
	case u.User != nil:
		return fmt.Errorf("must not carry credentials, got %q (send them with headers)", shown)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("must not have a fragment, got %q", shown)
	}
	if err := checkHostPort(u.Host); err != nil {
		return fmt.Errorf("host in %q: %w", shown, err)
	}
	return nil
}

// validateBidders checks that each bidder's parameters are a table, and
// encodes them once for every bid request.
func validateBidders(p *problems, key string, s *Slot) {
	s.BidderParams = nil
	for _, name := range slices.Sorted(maps.Keys(s.Bidders)) {
		bkey := key + ".bidders." + tomlKey(name)
		params, ok := s.Bidders[name].(map[string]any)
		if name == "" || !ok {
			p.addf(bkey, "must be a table of bidder parameters, e.g. appnexus = { placementId = 13144370 }")
			continue
		}
		js, err := json.Marshal(params)
		if err != nil {
			p.addf(bkey, "cannot be encoded as JSON: %w", err)
			continue
		}
		if s.BidderParams == nil {
			s.BidderParams = map[string]json.RawMessage{}
		}
		s.BidderParams[name] = js
	}
}

func (c *Config) openRTBWarnings() []string {
	var w []string
	a := &c.Auction
	if len(a.OpenRTB) > 0 && a.Provider != AuctionProviderOpenRTB {
		w = append(w, fmt.Sprintf("auction.openrtb lists endpoints but auction.provider is %q: they are not called", a.Provider))
	}
	for i, e := range a.OpenRTB {
		if e.TimeoutMS > a.TimeoutMS {
			w = append(w, fmt.Sprintf("auction.openrtb[%d].timeout_ms (%d) is longer than auction.timeout_ms (%d): the auction deadline cuts it short", i, e.TimeoutMS, a.TimeoutMS))
		}
	}
	return w
}
