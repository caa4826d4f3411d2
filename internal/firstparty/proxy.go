package firstparty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// maxRedirects is upstream's MAX_REDIRECTS (core/proxy.rs:1323).
const maxRedirects = 4

// forwardHeaders are copied from the client's request to every hop
// (PROXY_FORWARD_HEADERS, core/proxy.rs:72-78); nothing else is, so the
// publisher's cookies and credentials never reach a third party.
var forwardHeaders = []string{"User-Agent", "Accept", "Accept-Language", "Referer", "X-Forwarded-For"}

// supportedEncodings replaces the client's Accept-Encoding: what fetch can
// decode to rewrite (core/proxy.rs:445, 1399-1402).
const supportedEncodings = "gzip, deflate, br"

// errTooManyRedirects is a chain longer than maxRedirects.
var errTooManyRedirects = errors.New("firstparty: too many redirects")

// errBadTarget is a signed URL or redirect that is not an http(s) URL with a host.
var errBadTarget = errors.New("firstparty: unsupported target url")

// serveProxy is handle_first_party_proxy (core/proxy.rs:1560-1586).
func (f *Family) serveProxy(w http.ResponseWriter, r *http.Request) {
	t, err := f.signer.verifyQuery(r.URL.RawQuery, f.deps.Now())
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	key := f.deps.ClientKey(r)
	if !f.slots.acquire(key) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many concurrent first-party fetches", http.StatusTooManyRequests)
		return
	}
	defer f.slots.release(key)

	ctx, cancel := context.WithTimeout(r.Context(), f.cfg.FetchTimeout)
	defer cancel()
	resp, err := f.fetch(ctx, r, f.withEC(r, t.url))
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	defer resp.Body.Close()
	f.deliver(w, r, resp)
}

// withEC appends ts-ec to a target when the daemon knows the client's EC id
// (upsert_ec_query_param, core/proxy.rs:1246-1261).
func (f *Family) withEC(r *http.Request, target string) string {
	if f.deps.ECID == nil {
		return target
	}
	id := f.deps.ECID(r)
	if id == "" {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	var pairs []Pair
	for _, p := range formParse(u.RawQuery) {
		if p.Key != "ts-ec" {
			pairs = append(pairs, p)
		}
	}
	u.RawQuery = formEncode(append(pairs, Pair{"ts-ec", id}))
	return u.String()
}

// fetch is proxy_with_redirects (core/proxy.rs:1315-1542): each hop must be
// http(s) with a host that allowed_domains permits; 301, 302, 303, 307 and
// 308 with a Location are followed, 303 as GET, at most maxRedirects times.
func (f *Family) fetch(ctx context.Context, r *http.Request, target string) (*http.Response, error) {
	cur, err := parseHop(target)
	if err != nil {
		return nil, err
	}
	for hop := 0; ; hop++ {
		if !f.hopPermitted(cur.Hostname()) {
			return nil, fmt.Errorf("%w: %s", errHostRefused, cur.Hostname())
		}
		resp, err := f.roundTrip(ctx, r, cur)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			return resp, nil
		}
		resp.Body.Close()
		if hop == maxRedirects {
			return nil, errTooManyRedirects
		}
		next, err := cur.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("%w: a redirect's location", errBadTarget)
		}
		if next, err = parseHop(next.String()); err != nil {
			return nil, err
		}
		cur = next
	}
}

func parseHop(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errBadTarget
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: scheme %q, host %q", errBadTarget, u.Scheme, u.Hostname())
	}
	return u, nil
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// roundTrip sends one hop: always GET (the route is GET only, so 303's
// switch to GET changes nothing), with the curated headers only.
func (f *Family) roundTrip(ctx context.Context, r *http.Request, u *url.URL) (*http.Response, error) {
	out, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errBadTarget
	}
	for _, h := range forwardHeaders {
		if v := r.Header.Values(h); len(v) > 0 {
			out.Header[h] = append([]string(nil), v...)
		}
	}
	out.Header.Set("Accept-Encoding", supportedEncodings)
	if f.deps.OnFetch != nil {
		f.deps.OnFetch(out)
	}
	resp, err := f.client.Do(out)
	if err != nil {
		// Name the host only: *url.Error quotes the whole URL, and a
		// target's query can carry ids (ts-ec) and bid data.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("firstparty: fetch from %s: %w", u.Host, err)
	}
	return resp, nil
}

// refuse answers a refused or failed request. Upstream answers the parameter
// errors 502 (core/proxy.rs:2144-2153, 2172-2186); ssatd answers client
// input 4xx (docs/behaviour.md, Fidelity).
func (f *Family) refuse(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusBadGateway, "bad gateway"
	switch {
	case errors.Is(err, errMissingParam):
		code, msg = http.StatusBadRequest, "missing tsurl or tstoken"
	case errors.Is(err, errBadToken):
		code, msg = http.StatusForbidden, "invalid tstoken"
	case errors.Is(err, errBadExpiry):
		code, msg = http.StatusBadRequest, "invalid tsexp"
	case errors.Is(err, errExpired):
		code, msg = http.StatusForbidden, "expired tsexp"
	case errors.Is(err, errHostRefused):
		code, msg = http.StatusForbidden, "host not allowed"
	case errors.Is(err, errAddrRefused):
		code, msg = http.StatusForbidden, "address not allowed"
	case errors.Is(err, errBadTarget) && r.URL.Path != PathProxy:
		code, msg = http.StatusBadRequest, "unsupported url"
	case errors.Is(err, errTooLarge):
		code, msg = http.StatusBadGateway, "third-party answer too large"
	case errors.Is(err, context.DeadlineExceeded):
		code, msg = http.StatusGatewayTimeout, "third party timed out"
	}
	if r.Context().Err() != nil {
		return // the client left; nobody reads the answer
	}
	f.deps.Log.Info("first-party request refused", zap.String("path", r.URL.Path),
		zap.Int("status", code), zap.Error(err))
	http.Error(w, msg, code)
}

// deliver writes the third party's answer: its status and headers minus
// CORS grants (core/proxy.rs:699-710), cookies and hop-by-hop headers; HTML
// and CSS rewritten as creatives, the rest copied within MaxBodyBytes. Its
// headers are copied only once the answer is known to go out, so that a
// refusal carries none of them.
func (f *Family) deliver(w http.ResponseWriter, r *http.Request, resp *http.Response) {
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if strings.Contains(ct, "text/html") || strings.Contains(ct, "text/css") {
		f.deliverRewritten(w, r, resp, strings.Contains(ct, "text/html"))
		return
	}
	if resp.ContentLength > f.cfg.MaxBodyBytes {
		f.refuse(w, r, fmt.Errorf("%w: %d bytes", errTooLarge, resp.ContentLength))
		return
	}
	copyHeaders(w.Header(), resp.Header)
	// apply_image_passthrough_metadata (core/proxy.rs:589-612).
	if (strings.HasPrefix(ct, "image/") || strings.Contains(strings.ToLower(r.Header.Get("Accept")), "image/")) &&
		resp.Header.Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.WriteHeader(resp.StatusCode)
	n, err := io.Copy(w, io.LimitReader(resp.Body, f.cfg.MaxBodyBytes+1))
	if err != nil || n > f.cfg.MaxBodyBytes {
		// The status is out: only a reset tells the client the body is cut.
		panic(http.ErrAbortHandler)
	}
}

func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		dst[k] = append([]string(nil), v...)
	}
	for _, k := range strippedResponseHeaders {
		dst.Del(k)
	}
}

// strippedResponseHeaders never reach the client: CORS grants (upstream
// strips these three), third-party cookies (ssatd: none of theirs is set on
// the publisher's domain), and the hop-by-hop and length headers that the
// daemon's own connection sets.
var strippedResponseHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials", "Access-Control-Expose-Headers",
	"Set-Cookie", "Set-Cookie2",
	"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade", "Trailer", "Alt-Svc",
}

var errTooLarge = errors.New("firstparty: third-party answer too large")

func (f *Family) deliverRewritten(w http.ResponseWriter, r *http.Request, resp *http.Response, html bool) {
	body, err := readDecoded(resp, f.cfg.MaxRewriteBytes)
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	var out []byte
	ct := "text/css; charset=utf-8"
	if html {
		out = []byte(f.RewriteHTML(string(body), RewriteOptions{BundleTag: f.deps.BundleTag, MaxBytes: f.cfg.MaxRewriteBytes}))
		ct = "text/html; charset=utf-8"
		// The rewriter refuses a document whose rewritten form passes the
		// bound with "": upstream sends that empty body as the answer
		// (core/creative.rs:900-906); ssatd does not serve it as complete.
		if len(out) == 0 && len(body) > 0 {
			f.refuse(w, r, fmt.Errorf("%w: rewritten document over %d bytes", errTooLarge, f.cfg.MaxRewriteBytes))
			return
		}
	} else {
		out = []byte(f.RewriteCSS(string(body)))
	}
	enc, err := encodeAs(resp.Header.Get("Content-Encoding"), out)
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	h := w.Header()
	copyHeaders(h, resp.Header)
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(enc)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(enc)
}
