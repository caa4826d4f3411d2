package main

import (
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/demo"
)

// demoFile is `ssatd demo -config FILE`: both proxies run the publisher's
// own settings (either format, as serve reads them), and the demo changes
// only what makes them a local pair: their listeners, the client-facing
// host, TLS, and the mirror/offload difference. With demoOrigin the pages
// come from the demo origin instead of publisher.origin_url; with
// demoBidder every OpenRTB endpoint (Prebid Server's included) is the demo
// bidder.
type demoFile struct {
	path                   string
	environ                []string
	demoOrigin, demoBidder bool
}

// demoFileFlags declares -config, -config-format, -demo-origin and
// -demo-bidder on fs; resolve returns nil when no file is named.
func demoFileFlags(fs *flag.FlagSet) (resolve func(environ []string) *demoFile) {
	file := fs.String("config", "", "run both proxies with this configuration file (ssatd's or a Trusted Server trusted-server.toml) instead of the demo's; default $SSATD_CONFIG")
	format := fs.String("config-format", "", "with -config: ssatd or trusted-server; default $"+config.FormatEnv+", else read from the file's keys")
	origin := fs.Bool("demo-origin", false, "with -config: proxy the demo origin instead of the file's publisher.origin_url")
	bidder := fs.Bool("demo-bidder", false, "with -config: send every OpenRTB request (Prebid Server's too) to the demo bidder")
	return func(environ []string) *demoFile {
		path := *file
		if path == "" {
			path = lookupEnv(environ, "SSATD_CONFIG")
		}
		if path == "" {
			return nil
		}
		if *format != "" {
			environ = append(slices.Clip(environ), config.FormatEnv+"="+*format)
		}
		return &demoFile{path: path, environ: environ, demoOrigin: *origin, demoBidder: *bidder}
	}
}

// proxyConfig loads the file afresh for one proxy (so the two share
// nothing) and sets the demo's part from po, as demo.ProxyConfig sets it
// for the demo's own settings.
func (f *demoFile) proxyConfig(po demo.ProxyOptions) (*config.Config, error) {
	c, err := config.Load(f.path, f.environ)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	s := &c.Server
	s.Listen, s.AdminListen = po.Listen, po.AdminListen
	s.DrainPeriod = config.Duration{}
	// -tls decides TLS for the pair; the file's certificate and redirect
	// listener name the publisher's deployment, not loopback.
	s.TLSCertFile, s.TLSKeyFile, s.HTTPRedirectListen = "", "", ""
	p := &c.Publisher
	p.Domain = po.Domain
	p.AllowedHosts = append(slices.Clip(p.AllowedHosts), po.AllowedHosts...)
	p.SSATCompressionOffloadEnabled = po.Offload
	c.Platform.DeliveryCompression = config.DeliveryCompressionBuiltin
	if f.demoOrigin {
		p.OriginURL, p.OriginHostHeaderOverride = po.OriginURL, ""
	}
	if f.demoBidder {
		for i := range c.Auction.OpenRTB {
			c.Auction.OpenRTB[i].URL = po.BidderURL
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s as the demo runs it: %w", f.path, err)
	}
	return c, nil
}

// printFileBanner is the banner of a demo whose proxies front the file's
// own origin: the demo's page list does not apply.
func (d *demoRun) printFileBanner(w io.Writer) {
	openrtb := "the file's auction"
	if eps := d.mirrorConfig.Auction.OpenRTB; len(eps) > 0 {
		openrtb = "OpenRTB to " + eps[0].URL
	}
	fmt.Fprintf(w, `
ssatd demo is running with %s. Press Ctrl-C to stop.

  origin    %s  (publisher.origin_url)
  auction   %s
  mirror    %-28s  ssatd, mirror mode: the page keeps the origin's coding
  offload   %-28s  ssatd, compression offload: identity from the origin, br/gzip from the builtin edge
  admin     %s/metrics   %s/metrics
  (the demo origin %s and demo bidder %s run too)

Try with curl (a browser navigation; the response headers):
  curl -sD- -o /dev/null --compressed -H 'Sec-Fetch-Dest: document' %s/
`, d.configFile, d.mirrorConfig.Publisher.OriginURL, openrtb, d.mirrorURL+"/", d.offloadURL+"/",
		d.mirrorAdmin, d.offloadAdmin, d.originURL+"/", d.bidderURL, d.offloadURL)
}
