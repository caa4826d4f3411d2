package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/devcert"
)

// demoOptions are the flags of `ssatd demo`. A port of 0 picks a free one.
type demoOptions struct {
	addr                      string
	originPort                int
	bidderPort                int
	mirrorPort, offloadPort   int
	mirrorAdmin, offloadAdmin int
	originPrefer              []string
	shutdownTimeout           time.Duration
	// tls serves both proxies over HTTPS and HTTP/2 with a certificate
	// from certDir (made there, as ssatd dev-cert does, when needed).
	tls     bool
	certDir string
	// file is -config: the proxies' settings come from it (democonfig.go).
	file *demoFile
}

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := demoOptions{}
	fs.StringVar(&o.addr, "addr", "127.0.0.1", "address every listener binds to (0.0.0.0 to reach the demo from other machines)")
	fs.IntVar(&o.originPort, "origin-port", 8000, "demo origin port")
	fs.IntVar(&o.bidderPort, "bidder-port", 8002, "demo bidder (mock Prebid Server) port")
	fs.IntVar(&o.mirrorPort, "mirror-port", 8080, "ssatd in mirror mode: client port")
	fs.IntVar(&o.offloadPort, "offload-port", 8081, "ssatd with compression offload (builtin edge): client port")
	fs.IntVar(&o.mirrorAdmin, "mirror-admin-port", 9090, "mirror ssatd: admin port (/healthz, /readyz, /metrics)")
	fs.IntVar(&o.offloadAdmin, "offload-admin-port", 9091, "offload ssatd: admin port")
	fs.BoolVar(&o.tls, "tls", false, "serve both proxies over HTTPS with HTTP/2, as browsers reach Fastly (a local CA and certificate from -cert-dir)")
	fs.StringVar(&o.certDir, "cert-dir", defaultCertDir(), "with -tls: the folder of ssatd dev-cert (its CA is reused, or created)")
	prefer := fs.String("origin-prefer", strings.Join(demo.DefaultPreference, ","), "the origin's coding preference among those the client accepts equally")
	resolveFile := demoFileFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd demo [flags]\n\nRuns a demo publisher origin, a demo bidder (mock Prebid Server) and two ssatd proxies in front of\nthe origin (mirror and offload) that auction each page over OpenRTB, on loopback by default.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	for _, p := range []int{o.originPort, o.bidderPort, o.mirrorPort, o.offloadPort, o.mirrorAdmin, o.offloadAdmin} {
		if p < 0 || p > 65535 {
			fmt.Fprintf(stderr, "ssatd demo: port %d out of range 0-65535\n", p)
			fs.Usage()
			return 2
		}
	}
	o.originPrefer = splitList(*prefer)
	o.file = resolveFile(environ)
	o.shutdownTimeout = 5 * time.Second
	log, err := newLogger(stderr, withDefault(environ, "SSATD_LOG_FORMAT", "console"))
	if err != nil {
		fmt.Fprintf(stderr, "ssatd demo: %v\n", err)
		return 1
	}
	defer func() { _ = log.Sync() }()
	d, err := startDemo(ctx, o, log)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd demo: %v\n", err)
		return 1
	}
	d.printBanner(stdout)
	if err := d.wait(); err != nil {
		fmt.Fprintf(stderr, "ssatd demo: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "ssatd demo: stopped")
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}

// withDefault appends key=value to environ unless key is already set.
func withDefault(environ []string, key, value string) []string {
	if lookupEnv(environ, key) != "" {
		return environ
	}
	return append(environ[:len(environ):len(environ)], key+"="+value)
}

// demoRun is a running demo: the origin, the bidder and the two proxies.
type demoRun struct {
	origin                      *demo.Origin
	originURL                   string
	bidder                      *demo.Bidder
	bidderURL                   string // the auction endpoint
	mirrorURL, offloadURL       string
	mirrorAdmin, offloadAdmin   string
	mirrorConfig, offloadConfig *config.Config
	certs                       devcert.Files // with -tls
	caCreated                   bool          // with -tls: the CA is new, so not trusted yet
	eg                          *errgroup.Group
	// configFile is -config, when given; the proxies then front
	// mirrorConfig's origin, which need not be the demo origin.
	configFile string
}

// startDemo binds every listener first (so port 0 resolves and a busy port
// fails before anything runs), builds the origin for its real address,
// then serves until ctx is cancelled.
func startDemo(ctx context.Context, o demoOptions, log *zap.Logger) (*demoRun, error) {
	var certs devcert.Files
	var caCreated bool
	if o.tls {
		var err error
		if certs, caCreated, err = devcert.Write(o.certDir, time.Now()); err != nil {
			return nil, err
		}
	}
	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}
	listen := func(what string, port int, flagName string) (net.Listener, error) {
		addr := net.JoinHostPort(o.addr, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s: listen on %s: %w (choose another port with -%s)", what, addr, err, flagName)
		}
		ls = append(ls, l)
		return l, nil
	}
	originL, err := listen("origin", o.originPort, "origin-port")
	if err != nil {
		return nil, err
	}
	bidderL, err := listen("bidder", o.bidderPort, "bidder-port")
	if err != nil {
		return nil, err
	}
	mirrorL, err := listen("mirror proxy", o.mirrorPort, "mirror-port")
	if err != nil {
		return nil, err
	}
	mirrorAdminL, err := listen("mirror proxy admin", o.mirrorAdmin, "mirror-admin-port")
	if err != nil {
		return nil, err
	}
	offloadL, err := listen("offload proxy", o.offloadPort, "offload-port")
	if err != nil {
		return nil, err
	}
	offloadAdminL, err := listen("offload proxy admin", o.offloadAdmin, "offload-admin-port")
	if err != nil {
		return nil, err
	}

	// The address clients and the proxies use: loopback when bound to all
	// interfaces.
	host := o.addr
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	hostPort := func(l net.Listener) string {
		return net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	originHost := hostPort(originL)
	origin, err := demo.NewOrigin(demo.OriginOptions{Host: originHost, Prefer: o.originPrefer})
	if err != nil {
		closeAll()
		return nil, err
	}
	bidder, err := demo.NewBidder(demo.BidderOptions{})
	if err != nil {
		closeAll()
		return nil, err
	}
	d := &demoRun{
		origin:       origin,
		originURL:    "http://" + originHost,
		bidder:       bidder,
		bidderURL:    "http://" + hostPort(bidderL) + demo.AuctionPath,
		mirrorURL:    proxyScheme(o) + "://" + hostPort(mirrorL),
		offloadURL:   proxyScheme(o) + "://" + hostPort(offloadL),
		mirrorAdmin:  "http://" + hostPort(mirrorAdminL),
		offloadAdmin: "http://" + hostPort(offloadAdminL),
	}
	if o.tls {
		d.certs, d.caCreated = certs, caCreated
	}
	if o.file != nil {
		d.configFile = o.file.path
	}
	// Links are rewritten to the host the client used when it is one of
	// these (any port); anything else falls back to localhost on the
	// proxy's own port.
	allowed := []string{"127.0.0.1", "localhost"}
	if h := strings.Trim(host, "[]"); h != "127.0.0.1" && h != "localhost" {
		allowed = append(allowed, host)
	}
	proxyConfig := func(l, admin net.Listener, offload bool) (*config.Config, error) {
		po := demo.ProxyOptions{
			Listen:       l.Addr().String(),
			AdminListen:  admin.Addr().String(),
			OriginURL:    d.originURL,
			Domain:       "localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port),
			AllowedHosts: allowed,
			Offload:      offload,
			BidderURL:    d.bidderURL,
		}
		cfg, err := demo.ProxyConfig(po)
		if o.file != nil {
			cfg, err = o.file.proxyConfig(po)
		}
		if err != nil {
			return nil, err
		}
		cfg.Server.ShutdownTimeout.Duration = o.shutdownTimeout
		if o.tls {
			cfg.Server.TLSCertFile, cfg.Server.TLSKeyFile = certs.Cert, certs.Key
			err = cfg.Validate()
		}
		return cfg, err
	}
	if d.mirrorConfig, err = proxyConfig(mirrorL, mirrorAdminL, false); err != nil {
		closeAll()
		return nil, fmt.Errorf("mirror proxy configuration: %w", err)
	}
	if d.offloadConfig, err = proxyConfig(offloadL, offloadAdminL, true); err != nil {
		closeAll()
		return nil, fmt.Errorf("offload proxy configuration: %w", err)
	}
	mirror, err := newDaemon(d.mirrorConfig, log.Named("mirror"))
	if err != nil {
		closeAll()
		return nil, err
	}
	offload, err := newDaemon(d.offloadConfig, log.Named("offload"))
	if err != nil {
		closeAll()
		return nil, err
	}

	eg, ectx := errgroup.WithContext(ctx)
	serveDemo(ectx, eg, "origin", origin, originL, o.shutdownTimeout, log)
	serveDemo(ectx, eg, "bidder", bidder, bidderL, o.shutdownTimeout, log)
	eg.Go(func() error { return mirror.run(ectx, &listeners{client: mirrorL, admin: mirrorAdminL}) })
	eg.Go(func() error { return offload.run(ectx, &listeners{client: offloadL, admin: offloadAdminL}) })
	d.eg = eg
	return d, nil
}

func proxyScheme(o demoOptions) string {
	if o.tls {
		return "https"
	}
	return "http"
}

// serveDemo serves h on l in eg until ctx is cancelled.
func serveDemo(ctx context.Context, eg *errgroup.Group, name string, h http.Handler, l net.Listener, shutdown time.Duration, log *zap.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: zap.NewStdLog(log.Named(name))}
	eg.Go(func() error {
		if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	eg.Go(func() error {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdown)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		return nil
	})
}

// wait blocks until the demo has stopped (its context was cancelled, or a
// server failed, which stops the others).
func (d *demoRun) wait() error { return d.eg.Wait() }

func (d *demoRun) printBanner(w io.Writer) {
	if d.configFile != "" && d.mirrorConfig.Publisher.OriginURL != d.originURL {
		d.printFileBanner(w)
		return
	}
	pages := d.origin.Pages()
	fmt.Fprintf(w, `
ssatd demo is running. Press Ctrl-C to stop.

  origin    %-28s  the demo publisher (The Harbour Gazette): br, gzip, deflate, identity
  bidder    %-28s  mock Prebid Server: the proxies auction every SSAT page here over OpenRTB 2.6
  mirror    %-28s  ssatd, mirror mode: the page keeps the origin's coding
  offload   %-28s  ssatd, compression offload: identity from the origin, br/gzip from the builtin edge
  admin     %s/metrics   %s/metrics

Open in a browser (each ad slot shows its winning OpenRTB creative, in a sandboxed iframe):
`, d.originURL+"/", d.bidderURL, d.mirrorURL+"/", d.offloadURL+"/", d.mirrorAdmin, d.offloadAdmin)
	for _, p := range pages {
		note := "SSAT page"
		switch {
		case p.Path == demo.AboutPath:
			note = "no ad slot: not SSAT-eligible, core rewrite only"
		case p.Path == demo.SPAPath:
			note = "single-page app: its links re-auction with GET /_ts/page-bids, Refresh ads with POST /auction"
		}
		fmt.Fprintf(w, "  %s%s\n  %s%s\n      %s; origin sends %s identity, %s gzip, %s br\n",
			d.mirrorURL, p.Path, d.offloadURL, p.Path, note,
			kb(p.Sizes["identity"]), kb(p.Sizes["gzip"]), kb(p.Sizes["br"]))
	}
	curl := "curl"
	if d.certs.CACert != "" {
		if d.caCreated {
			fmt.Fprintln(w)
			printDevCert(w, d.certs, true)
		}
		fmt.Fprintf(w, "\nThe proxies serve HTTPS with HTTP/2; their certificate is signed by the local CA %s\n(trust it as `ssatd dev-cert` explains, or pass it to curl):\n", d.certs.CACert)
		curl = "curl --cacert " + d.certs.CACert
	}
	fmt.Fprintf(w, `
Try with curl (a browser navigation; the response headers, then the first lines):
  %[5]s -sD- -o /dev/null --compressed -H 'Sec-Fetch-Dest: document' %[1]s/
  %[5]s -sD- -o /dev/null --compressed -H 'Sec-Fetch-Dest: document' %[2]s/
  %[5]s -s --compressed -H 'Sec-Fetch-Dest: document' %[2]s/ | head -c 1500
  %[5]s -s --compressed -H 'Sec-Fetch-Dest: document' %[1]s%[4]s | grep -o 'tsjs.*scheduleInitialAdInit' | head -c 600
  curl -s %[3]s/metrics
`, d.mirrorURL, d.offloadURL, d.mirrorAdmin, demo.ArticlePaths()[0], curl)
}

func kb(n int) string {
	if n >= 10<<10 {
		return fmt.Sprintf("%d KB", (n+512)>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func cmdDemoOrigin(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("demo-origin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8000", "address to listen on (\":8000\" in a container)")
	host := fs.String("host", "", "host[:port] the pages name in their links, the host of the proxies' origin_url (default: the listen address, loopback when it is unspecified)")
	prefer := fs.String("prefer", strings.Join(demo.DefaultPreference, ","), "coding preference among those the client accepts equally")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd demo-origin [-listen ADDR] [-host HOST:PORT] [-prefer CODINGS]\n\nRuns the demo publisher origin alone (for Docker Compose).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd demo-origin: listen on %s: %v\n", *listen, err)
		return 1
	}
	if *host == "" {
		a := l.Addr().(*net.TCPAddr)
		h := a.IP.String()
		if a.IP.IsUnspecified() {
			h = "127.0.0.1"
		}
		*host = net.JoinHostPort(h, strconv.Itoa(a.Port))
	}
	origin, err := demo.NewOrigin(demo.OriginOptions{Host: *host, Prefer: splitList(*prefer)})
	if err != nil {
		l.Close()
		fmt.Fprintf(stderr, "ssatd demo-origin: %v\n", err)
		return 1
	}
	banner := func() {
		fmt.Fprintf(stdout, "ssatd demo-origin: serving on http://%s/ (links name %s)\n", l.Addr(), *host)
		for _, p := range origin.Pages() {
			fmt.Fprintf(stdout, "  %-50s %s identity, %s gzip, %s br\n", p.Path, kb(p.Sizes["identity"]), kb(p.Sizes["gzip"]), kb(p.Sizes["br"]))
		}
	}
	return serveUntilDone(ctx, l, origin, banner, "ssatd demo-origin", stderr)
}

// serveUntilDone serves h on l until ctx ends (a signal), then shuts the
// server down gracefully; it returns the command's exit status. banner runs
// once the server is accepting.
func serveUntilDone(ctx context.Context, l net.Listener, h http.Handler, banner func(), name string, stderr io.Writer) int {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	banner()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-done
	return 0
}

// cmdHealthcheck probes a URL (by default the admin /healthz) and exits 0
// on a 200 within the timeout, else 1. Minimal container images have no
// curl, so the Docker HEALTHCHECK runs this.
func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:9090/healthz", "URL to probe")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd healthcheck [-url URL] [-timeout 3s]\n\nExits 0 when URL answers 200 within the timeout, else 1.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if *timeout <= 0 {
		fmt.Fprintln(stderr, "ssatd healthcheck: -timeout must be positive")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd healthcheck: %v\n", err)
		return 2
	}
	// No proxy from the environment: the probe is for this container.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "ssatd healthcheck: %s answered %s\n", *url, resp.Status)
		return 1
	}
	fmt.Fprintf(stdout, "ok: %s\n", *url)
	return 0
}
