package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/hostport"
	"github.com/ssatd/ssatd/internal/pageparse"
)

// The requests verify sends: a browser's navigation, and the variants
// that must not get the ad stack (docs/behaviour.md, "Eligibility").
const (
	verifyBrowserUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	verifyBotUA     = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	verifyMaxBody   = 64 << 20
)

// pathList is the repeatable -path flag.
type pathList []string

func (p *pathList) String() string     { return strings.Join(*p, ",") }
func (p *pathList) Set(v string) error { *p = append(*p, v); return nil }

// verdict is one row of verify's table.
type verdict struct {
	check, path string
	ok          bool
	evidence    string
}

func cmdVerify(ctx context.Context, args []string, stdout, stderr io.Writer, _ []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	base := fs.String("url", "", "base URL of the deployment under test, e.g. https://www.example.com (required)")
	origin := fs.String("origin", "", "host[:port] (or URL) of the origin behind it: no link may name it")
	timeout := fs.Duration("timeout", 15*time.Second, "per request")
	var paths pathList
	fs.Var(&paths, "path", "an SSAT page path, repeatable (default \"/\")")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd verify -url BASE [-path P]... [-origin HOST]\n\n"+
			"Runs the black-box checks of SSAT behaviour against a running deployment (ssatd, or\n"+
			"Trusted Server) and prints pass or fail with the evidence. Exit status 0 only when\n"+
			"every check passes (docs/testing.md, \"ssatd verify\").")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	u, err := url.Parse(*base)
	if *base == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "ssatd verify: -url must be an http(s) URL, got %q\n", *base)
		return 2
	}
	if len(paths) == 0 {
		paths = pathList{"/"}
	}
	v := &verifier{base: u, origin: strings.ToLower(*origin), origins: originAuthorities(*origin), ctx: ctx,
		client: &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableCompression: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	// Its connections end with the command, which may run inside a
	// longer process (the tests).
	defer v.client.CloseIdleConnections()
	var rows []verdict
	for _, p := range paths {
		rows = append(rows, v.page(p)...)
	}
	rows = append(rows, v.bundle())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tPATH\tRESULT\tEVIDENCE")
	failed := 0
	for _, r := range rows {
		res := "pass"
		if !r.ok {
			res, failed = "FAIL", failed+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.check, r.path, res, r.evidence)
	}
	_ = tw.Flush()
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d checks failed\n", failed, len(rows))
		return 1
	}
	fmt.Fprintf(stdout, "all %d checks passed\n", len(rows))
	return 0
}

type verifier struct {
	base      *url.URL
	origin    string   // -origin as given, for the evidence
	origins   []string // the authorities that name it (originAuthorities)
	ctx       context.Context
	client    *http.Client
	bundleSrc string // the bundle tag's src, from the first eligible page
}

// verifyFetch is one response, its body decoded.
type verifyFetch struct {
	resp *http.Response
	body []byte
	err  error
}

func (v *verifier) get(path string, h map[string]string) verifyFetch {
	ref, err := url.Parse(path)
	if err != nil {
		return verifyFetch{err: err}
	}
	req, err := http.NewRequestWithContext(v.ctx, http.MethodGet, v.base.ResolveReference(ref).String(), nil)
	if err != nil {
		return verifyFetch{err: err}
	}
	for k, val := range h {
		req.Header.Set(k, val)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return verifyFetch{err: err}
	}
	defer resp.Body.Close()
	coding, ok := compress.ParseContentEncoding(resp.Header.Get("Content-Encoding"))
	if !ok {
		return verifyFetch{resp: resp, err: fmt.Errorf("unknown Content-Encoding %q", resp.Header.Get("Content-Encoding"))}
	}
	dec, err := compress.NewReader(coding, resp.Body, verifyMaxBody)
	if err != nil {
		return verifyFetch{resp: resp, err: err}
	}
	defer dec.Close()
	body, err := io.ReadAll(dec)
	return verifyFetch{resp: resp, body: body, err: err}
}

func navigation(ae string) map[string]string {
	return map[string]string{
		"User-Agent": verifyBrowserUA, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
		"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "none",
		"Accept-Encoding": ae,
	}
}

func with(h map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// page runs the checks of one SSAT page path.
func (v *verifier) page(path string) []verdict {
	nav := v.get(path, navigation("identity"))
	rows := v.eligible(path, nav)
	for _, c := range []struct {
		check string
		h     map[string]string
	}{
		{"prefetch", with(navigation("identity"), "Sec-Purpose", "prefetch")},
		{"bot", with(navigation("identity"), "User-Agent", verifyBotUA)},
		{"non-navigation", with(navigation("identity"), "Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors", "Accept", "*/*")},
	} {
		rows = append(rows, v.notInjected(c.check, path, v.get(path, c.h)))
	}
	rows = append(rows, v.codings(path), v.links(path, nav))
	return rows
}

func failed(check, path string, f verifyFetch) (verdict, bool) {
	switch {
	case f.err != nil:
		return verdict{check, path, false, f.err.Error()}, true
	case f.resp.StatusCode != http.StatusOK:
		return verdict{check, path, false, "status " + strconv.Itoa(f.resp.StatusCode)}, true
	}
	return verdict{}, false
}

// eligible: the navigation gets the slots and the bids, the private cache
// policy, no validators and Vary: Accept-Encoding.
func (v *verifier) eligible(path string, f verifyFetch) []verdict {
	checks := []string{"injected", "private", "no-validators", "vary"}
	if bad, ok := failed("", path, f); ok {
		out := make([]verdict, len(checks))
		for i, c := range checks {
			out[i] = verdict{c, path, false, bad.evidence}
		}
		return out
	}
	h := f.resp.Header
	p, err := pageparse.Parse(f.body)
	injected := verdict{"injected", path, err == nil && len(p.Slots) > 0 && p.Bids != nil, ""}
	switch {
	case err != nil:
		injected.evidence = err.Error()
	default:
		injected.evidence = fmt.Sprintf("%d slots, bids for %d, bundle %q", len(p.Slots), len(p.Bids), p.Bundle)
		if v.bundleSrc == "" {
			v.bundleSrc = p.Bundle
		}
	}
	cc := h.Get("Cache-Control")
	validators := strings.TrimSpace("ETag=" + h.Get("ETag") + " Last-Modified=" + h.Get("Last-Modified"))
	return []verdict{
		injected,
		{"private", path, hasDirective(cc, "private") && !hasDirective(cc, "public"), "Cache-Control: " + cc},
		{"no-validators", path, h.Get("ETag") == "" && h.Get("Last-Modified") == "", validators},
		{"vary", path, listsToken(h.Values("Vary"), "accept-encoding"), "Vary: " + strings.Join(h.Values("Vary"), ", ")},
	}
}

func (v *verifier) notInjected(check, path string, f verifyFetch) verdict {
	if bad, ok := failed(check, path, f); ok {
		return bad
	}
	p, err := pageparse.Parse(f.body)
	if err != nil {
		return verdict{check, path, false, err.Error()}
	}
	return verdict{check, path, p.Slots == nil && p.Bids == nil,
		fmt.Sprintf("slots script %v, bids script %v", p.Slots != nil, p.Bids != nil)}
}

// codings: the page decoded is the same under gzip, br and identity.
func (v *verifier) codings(path string) verdict {
	var first []byte
	var evidence []string
	for _, ae := range []string{"identity", "gzip", "br"} {
		f := v.get(path, navigation(ae))
		if bad, ok := failed("codings", path, f); ok {
			bad.evidence = ae + ": " + bad.evidence
			return bad
		}
		got := f.resp.Header.Get("Content-Encoding")
		if got != "" && got != ae {
			return verdict{"codings", path, false, fmt.Sprintf("asked for %s, got Content-Encoding %s", ae, got)}
		}
		body := pageparse.WithoutBids(f.body)
		if first == nil {
			first = body
		} else if !bytes.Equal(first, body) {
			return verdict{"codings", path, false, fmt.Sprintf("%s decodes to %d bytes, identity to %d, and they differ", ae, len(body), len(first))}
		}
		evidence = append(evidence, fmt.Sprintf("%s→%s %dB", ae, orIdentityCoding(got), len(body)))
	}
	return verdict{"codings", path, true, strings.Join(evidence, ", ")}
}

func orIdentityCoding(c string) string {
	if c == "" {
		return "identity"
	}
	return c
}

// links: some absolute link names the host of -url, and none names
// -origin (docs/testing.md). A link that names the origin fails the check
// whatever else it names: with -url equal to -origin (a server that is no
// proxy at all) every link did, and each had counted as the host's.
func (v *verifier) links(path string, f verifyFetch) verdict {
	if bad, ok := failed("links", path, f); ok {
		return bad
	}
	p, err := pageparse.Parse(f.body)
	if err != nil {
		return verdict{"links", path, false, err.Error()}
	}
	host := authority(v.base.Host, v.base.Scheme)
	own, toOrigin := 0, ""
	for _, l := range p.Links {
		u, err := url.Parse(strings.TrimSpace(l))
		if err != nil || u.Host == "" {
			continue
		}
		scheme := u.Scheme
		if scheme == "" { // protocol-relative: the page's own scheme
			scheme = v.base.Scheme
		}
		switch a := authority(u.Host, scheme); {
		case slices.Contains(v.origins, a):
			if toOrigin == "" {
				toOrigin = l
			}
		case a == host:
			own++
		}
	}
	switch {
	case toOrigin != "":
		return verdict{"links", path, false, "a link names the origin " + v.origin + ": " + toOrigin}
	case own == 0:
		return verdict{"links", path, false, fmt.Sprintf("no absolute link names %s (%d links)", host, len(p.Links))}
	case v.origin == "":
		return verdict{"links", path, true, fmt.Sprintf("%d absolute links name %s; links to the origin not looked for (no -origin)", own, host)}
	}
	return verdict{"links", path, true, fmt.Sprintf("%d absolute links name %s, none %s", own, host, v.origin)}
}

// authority is host[:port] as one spelling: lower case, the port written
// out (the scheme's default when absent or empty, RFC 3986 §6.2.3), so
// that http://H/, http://H:/ and http://H:80/ name the same server. A
// scheme other than http(s) keeps the host as written.
func authority(hp, scheme string) string {
	hp = strings.ToLower(hp)
	h, port := hostport.Split(hp)
	if port != "" {
		return hp
	}
	switch strings.ToLower(scheme) {
	case "http":
		return net.JoinHostPort(hostport.Bare(h), "80")
	case "https":
		return net.JoinHostPort(hostport.Bare(h), "443")
	}
	return hp
}

// originAuthorities reads -origin: host[:port], or a URL whose host is
// taken. A host without a port names the origin on either default port,
// its scheme being unknown.
func originAuthorities(flag string) []string {
	if flag == "" {
		return nil
	}
	if u, err := url.Parse(flag); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return []string{authority(u.Host, u.Scheme)}
	}
	if _, port := hostport.Split(flag); port != "" {
		return []string{strings.ToLower(flag)}
	}
	return []string{authority(flag, "http"), authority(flag, "https")}
}

// bundle: the bundle named by the page's tag is served, cacheable.
func (v *verifier) bundle() verdict {
	if v.bundleSrc == "" {
		return verdict{"bundle", "-", false, "no eligible page named a bundle"}
	}
	f := v.get(v.bundleSrc, map[string]string{"User-Agent": verifyBrowserUA, "Accept": "*/*", "Accept-Encoding": "identity"})
	if bad, ok := failed("bundle", bundlePath(v.bundleSrc), f); ok {
		return bad
	}
	cc, ct := f.resp.Header.Get("Cache-Control"), f.resp.Header.Get("Content-Type")
	age := maxAge(cc)
	ok := strings.Contains(ct, "javascript") && hasDirective(cc, "public") && age > 0 && len(f.body) > 0
	return verdict{"bundle", bundlePath(v.bundleSrc), ok, fmt.Sprintf("Content-Type: %s; Cache-Control: %s; %d bytes", ct, cc, len(f.body))}
}

func directives(cc string) map[string]string {
	m := map[string]string{}
	for _, d := range strings.Split(cc, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		m[strings.ToLower(k)] = strings.Trim(val, `"`)
	}
	return m
}

func hasDirective(cc, name string) bool { _, ok := directives(cc)[name]; return ok }

func maxAge(cc string) int {
	n, _ := strconv.Atoi(directives(cc)["max-age"])
	return n
}

func listsToken(values []string, token string) bool {
	for _, v := range values {
		for _, t := range strings.Split(v, ",") {
			if t = strings.ToLower(strings.TrimSpace(t)); t == token || t == "*" {
				return true
			}
		}
	}
	return false
}

// bundlePath is the bundle's path without its version query, for the table.
func bundlePath(src string) string {
	p, _, _ := strings.Cut(src, "?")
	return p
}
