// Package demo is the embedded demo of ssatd: a publisher origin with a few
// generated news pages (served with real content negotiation), and the ad
// slots and static bids that the demo proxies use for them. `ssatd demo`
// runs it with a mirror-mode and an offload-mode proxy in front;
// `ssatd demo-origin` runs the origin alone (Docker Compose).
package demo

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/ssatd/ssatd/internal/config"
)

// Slots are the ad slots of the demo pages. Every div_id exists in the pages
// the patterns match; configs/demo.toml and configs/demo-offload.toml list
// the same slots.
func Slots() []config.Slot {
	return []config.Slot{
		{ID: "top-leaderboard", DivID: "ad-top-leaderboard", PagePatterns: []string{"/", "/articles/*", "/spa", "/spa/*"},
			Formats: [][]int{{728, 90}, {970, 90}}, GAMUnitPath: "/21700000/gazette/top",
			Targeting: map[string]any{"pos": "top"},
			// Passed to the bidder as imp.ext.prebid.bidder (the demo bidder ignores it).
			Bidders: map[string]any{"appnexus": map[string]any{"placementId": int64(13144370)}}},
		{ID: "home-mpu", DivID: "ad-home-mpu", PagePatterns: []string{"/"},
			Formats: [][]int{{300, 250}}, GAMUnitPath: "/21700000/gazette/home",
			Targeting: map[string]any{"pos": "mid", "section": []string{"home"}}},
		{ID: "article-mpu", DivID: "ad-article-mpu", PagePatterns: []string{"/articles/*"},
			Formats: [][]int{{300, 250}, {300, 600}}, GAMUnitPath: "/21700000/gazette/article",
			Targeting: map[string]any{"pos": "mid", "section": []string{"news", "articles"}}},
		// The single-page app's story views (SPAPaths), reached with
		// pushState: the bundle gets them from /_ts/page-bids.
		{ID: "spa-mpu", DivID: "ad-spa-mpu", PagePatterns: []string{"/spa/*"},
			Formats: [][]int{{300, 250}}, GAMUnitPath: "/21700000/gazette/live",
			Targeting: map[string]any{"pos": "mid", "section": []string{"live"}}},
		{ID: "sidebar-sky", DivID: "ad-sidebar-sky", PagePatterns: []string{"/", "/articles/*"},
			Formats: [][]int{{160, 600}}, GAMUnitPath: "/21700000/gazette/rail",
			Targeting: map[string]any{"pos": "rail"}},
	}
}

// StaticBids are the demo bids, one per slot.
func StaticBids() []config.StaticBid {
	return []config.StaticBid{
		{SlotID: "top-leaderboard", HbPb: "1.20", HbBidder: "demobidder", W: 728, H: 90, HbAdid: "demo-top-1",
			Adm: `<div style="width:728px;height:90px;background:#e8f0fe">demo leaderboard creative</div>`},
		{SlotID: "home-mpu", HbPb: "2.50", HbBidder: "examplebidder", W: 300, H: 250, HbAdid: "demo-home-1",
			Adm: `<div style="width:300px;height:250px;background:#fce8e6">demo home creative</div>`},
		{SlotID: "article-mpu", HbPb: "3.10", HbBidder: "demobidder", W: 300, H: 250, HbAdid: "demo-article-1",
			Adm: `<div style="width:300px;height:250px;background:#e6f4ea">demo article creative</div>`},
		{SlotID: "spa-mpu", HbPb: "1.90", HbBidder: "demobidder", W: 300, H: 250, HbAdid: "demo-spa-1",
			Adm: `<div style="width:300px;height:250px;background:#f3e8fd">demo live desk creative</div>`},
		{SlotID: "sidebar-sky", HbPb: "0.80", HbBidder: "examplebidder", W: 160, H: 600, HbAdid: "demo-sky-1",
			Adm: `<div style="width:160px;height:600px;background:#fef7e0">demo skyscraper creative</div>`},
	}
}

// ProxyOptions describe one demo proxy.
type ProxyOptions struct {
	Listen       string   // client listener, host:port
	AdminListen  string   // admin listener, host:port
	OriginURL    string   // http://host:port of the demo origin
	Domain       string   // publisher.domain
	AllowedHosts []string // publisher.allowed_hosts
	Offload      bool     // compression offload with the builtin edge
	// BidderURL is the demo bidder's auction URL: the proxy runs an
	// OpenRTB auction against it. Empty: the static demo bids.
	BidderURL string
}

// proxySecret is the demo proxies' publisher.proxy_secret: one per
// process, shared by the pair as a fleet shares it, so either proxy
// verifies the other's URLs.
var proxySecret = func() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}()

// firstPartyFor makes the demo's creatives first party as Trusted Server
// makes them (docs/behaviour.md, "First-party routes"): the demo's proxy
// secret, and the demo bidder's host named in allowed_domains, which is
// what lets /first-party/proxy fetch a loopback address.
func firstPartyFor(bidderURL string) (config.FirstPartyConfig, error) {
	u, err := url.Parse(bidderURL)
	if err != nil {
		return config.FirstPartyConfig{}, fmt.Errorf("demo bidder url: %w", err)
	}
	return config.FirstPartyConfig{
		ProxySecret:      config.Secret(proxySecret),
		AllowedDomains:   []string{u.Hostname()},
		CertificateCheck: true,
		RewriteCreatives: true,
	}, nil
}

// ProxyConfig builds and validates the configuration of a demo proxy: the
// defaults, the demo slots, the OpenRTB provider calling the demo bidder
// (or the static demo bids without one), and mirror mode or offload with
// the builtin edge.
func ProxyConfig(o ProxyOptions) (*config.Config, error) {
	c := config.Defaults()
	c.Server.Listen = o.Listen
	c.Server.AdminListen = o.AdminListen
	c.Server.ShutdownTimeout = config.Duration{Duration: 5 * time.Second}
	// No load balancer is in front of the demo, so there is nothing to drain.
	c.Server.DrainPeriod = config.Duration{}
	c.Publisher.Domain = o.Domain
	c.Publisher.OriginURL = o.OriginURL
	c.Publisher.AllowedHosts = append([]string{}, o.AllowedHosts...)
	c.Publisher.SSATCompressionOffloadEnabled = o.Offload
	c.Platform.DeliveryCompression = config.DeliveryCompressionBuiltin
	c.Auction.Enabled = true
	c.Auction.TimeoutMS = 500
	if o.BidderURL != "" {
		c.Auction.Provider = config.AuctionProviderOpenRTB
		c.Auction.OpenRTB = []config.OpenRTBEndpoint{{Name: "demo-bidder", URL: o.BidderURL, AccountID: "demo"}}
		fp, err := firstPartyFor(o.BidderURL)
		if err != nil {
			return nil, err
		}
		c.FirstParty = fp
	} else {
		c.Auction.Provider = config.AuctionProviderStatic
		c.Auction.StaticBids = StaticBids()
	}
	c.CreativeOpportunities.Slots = Slots()
	// The demo runs under Fastly's limits, so a page that works here
	// works on Fastly Compute (docs/behaviour.md, "Fidelity").
	c.Compute.Limits = config.ComputeLimitsFastly
	c.Compute.CPUScale = cpuScale
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
