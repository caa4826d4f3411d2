package proxy

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/firstparty"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// newFirstParty builds the /first-party/* family (internal/firstparty)
// from a Trusted Server file's publisher.proxy_secret, [proxy],
// [rewrite] and auction settings; nil when there is no secret (a native
// configuration), and the routes then fall through to the origin.
func (g *Guest) newFirstParty(fp *config.FirstPartyConfig) (*firstparty.Family, error) {
	if fp.ProxySecret.Expose() == "" {
		return nil, nil
	}
	f, err := firstparty.New(firstparty.Config{
		ProxySecret:       fp.ProxySecret.Expose(),
		AllowedDomains:    fp.AllowedDomains,
		CertificateCheck:  fp.CertificateCheck,
		ExcludeDomains:    fp.ExcludeDomains,
		SanitizeCreatives: fp.SanitizeCreatives,
	}, firstparty.Deps{
		Log:       g.log.Named("firstparty"),
		ClientKey: g.firstPartyClient,
		Scheme:    g.firstPartyScheme,
		// A proxied HTML document gets the creative runtime at the start of
		// its <body>, as upstream's rewrite_proxied_html does
		// (crates/trusted-server-core/src/creative.rs:596-598).
		BundleTag: string(rewrite.UnifiedTag()),
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return f, nil
}

// firstPartyClient is who a /first-party/proxy fetch counts against among
// each client's concurrent fetches: the client's address as the guest
// decided it (behind a trusted proxy, the address it forwarded), so that
// all clients behind one proxy do not share one allowance.
func (g *Guest) firstPartyClient(r *http.Request) string {
	if x := exchangeOf(r); x != nil {
		return g.clientKey(r, x).String()
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// firstPartyScheme is the scheme the client used, as the guest decided it
// (behind a trusted proxy, the forwarded one).
func (g *Guest) firstPartyScheme(r *http.Request) string {
	if x := exchangeOf(r); x != nil && x.view.scheme != "" {
		return x.view.scheme
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// creatives makes winning creatives first party as Trusted Server does
// with auction.rewrite_creatives and sanitize_creatives: every bid the
// guest hands a page, /_ts/page-bids or POST /auction goes through it.
// Off (a native configuration) it passes bids as they are.
type creatives struct {
	on   bool
	opts firstparty.CreativeOptions
	log  *zap.Logger
}

// newCreatives reads the creative settings. Without a first-party family
// there is no signer, so nothing can be rewritten; sanitize_creatives
// still applies.
func newCreatives(fp *config.FirstPartyConfig, f *firstparty.Family, bundleTag []byte, log *zap.Logger) creatives {
	c := creatives{log: log, opts: firstparty.CreativeOptions{Sanitize: fp.SanitizeCreatives}}
	if f != nil {
		c.opts = f.CreativeOptions()
		c.opts.Rewrite = fp.RewriteCreatives
		c.opts.BundleTag = string(bundleTag)
	}
	c.on = f != nil || fp.SanitizeCreatives
	return c
}

// process returns bids with their creatives processed for where they are
// rendered, and without those whose creative comes out empty (sanitized
// away, over the 1 MiB cap, not rewritable): upstream drops a bid whose
// processing rejected its only render source. bids is not modified (a
// static provider hands out its own map).
//
// Inline (the page's bids, /_ts/page-bids): ${AUCTION_PRICE} is expanded
// from the bid's CPM before signing, and the first-party URLs are absolute
// on the client's origin, without the bundle, since the creative may be
// rendered in a foreign origin's frame
// (crates/trusted-server-core/src/publisher.rs:5076-5086, 5199-5222).
// Auction (POST /auction): root-relative URLs and the bundle at the start
// of <body>, the macro left for the client (auction/formats.rs:383-412).
func (c creatives) process(bids map[string]ssat.Bid, render family.Render, v clientView) map[string]ssat.Bid {
	if !c.on || len(bids) == 0 {
		return bids
	}
	o := c.opts
	if render == family.RenderInline {
		o.BaseOrigin, o.BundleTag = v.scheme+"://"+v.host, ""
	}
	out := make(map[string]ssat.Bid, len(bids))
	for slot, b := range bids {
		adm := b.Adm
		if render == family.RenderInline {
			adm = firstparty.ExpandAuctionPrice(adm, b.Price)
		}
		b.Adm = firstparty.ProcessCreative(adm, o)
		if strings.TrimSpace(b.Adm) == "" {
			c.log.Warn("winning bid dropped: creative processing rejected its creative",
				zap.String("slot", slot), zap.String("bidder", b.HbBidder), zap.Int("adm_bytes", len(adm)))
			continue
		}
		out[slot] = b
	}
	return out
}
