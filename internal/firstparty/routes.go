package firstparty

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Route is one method and path the family answers, for a route table that
// lets every other method fall through to the publisher's origin, as
// upstream does (adapter-fastly/src/app.rs:34-39, 2355-2363).
type Route struct {
	Method, Path string
	Handler      http.HandlerFunc
}

// Routes lists the family's six method-and-path pairs.
func (f *Family) Routes() []Route {
	return []Route{
		{http.MethodGet, PathProxy, f.serveProxy},
		{http.MethodGet, PathClick, f.serveClick},
		{http.MethodGet, PathSign, f.serveSign},
		{http.MethodPost, PathSign, f.serveSign},
		{http.MethodGet, PathRebuild, f.serveRebuild},
		{http.MethodPost, PathRebuild, f.serveRebuild},
	}
}

var (
	errBadRequest = errors.New("firstparty: bad request")
	errBodyLarge  = errors.New("firstparty: request body too large")
)

const noStorePrivate = "no-store, private"

// serveClick is handle_first_party_click (core/proxy.rs:1598-1666): a 302
// to the verified target, never cached.
func (f *Family) serveClick(w http.ResponseWriter, r *http.Request) {
	t, err := f.signer.verifyQuery(r.URL.RawQuery, f.deps.Now())
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	redirect(w, f.withEC(r, t.url))
}

func redirect(w http.ResponseWriter, loc string) {
	// A tsurl may decode to bytes no header can carry (upstream:
	// InvalidHeaderValue, 400, core/proxy.rs:1653-1657).
	if !httpguts.ValidHeaderFieldValue(loc) {
		http.Error(w, "invalid redirect target", http.StatusBadRequest)
		return
	}
	w.Header().Set("Location", loc)
	w.Header().Set("Cache-Control", noStorePrivate)
	w.WriteHeader(http.StatusFound)
}

// serveSign is handle_first_party_proxy_sign (core/proxy.rs:1677-1781):
// the URL from ?url= or a JSON body {"url"} becomes a /first-party/proxy URL
// that carries a tsexp 30 seconds ahead.
func (f *Family) serveSign(w http.ResponseWriter, r *http.Request) {
	var raw string
	if r.Method == http.MethodPost {
		body, err := readBody(w, r, signMaxBody)
		if err != nil {
			f.badRequest(w, r, err)
			return
		}
		var req struct {
			URL *string `json:"url"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.URL == nil {
			f.badRequest(w, r, fmt.Errorf("%w: invalid JSON", errBadRequest))
			return
		}
		raw = *req.URL
	} else {
		found := false
		for _, p := range formParse(r.URL.RawQuery) {
			if p.Key == "url" {
				raw, found = p.Value, true
				break
			}
		}
		if !found {
			f.badRequest(w, r, fmt.Errorf("%w: missing url", errBadRequest))
			return
		}
	}
	trimmed := strings.TrimSpace(raw)
	abs, ok := "", false
	if strings.HasPrefix(trimmed, "//") {
		abs, ok = f.deps.Scheme(r)+":"+trimmed, true
	} else {
		abs, ok = f.toAbs(trimmed)
	}
	if !ok || f.excluded(abs) {
		f.badRequest(w, r, fmt.Errorf("%w: unsupported url", errBadRequest))
		return
	}
	base, _, ok := splitClearURL(abs)
	if !ok {
		f.badRequest(w, r, fmt.Errorf("%w: unsupported url", errBadRequest))
		return
	}
	exp := strconv.FormatInt(f.deps.Now().Add(signLifetime).Unix(), 10)
	href := f.signer.signURL(abs, PathProxy, Pair{paramExp, exp})
	writeJSON(w, http.StatusOK, "", struct {
		Href string `json:"href"`
		Base string `json:"base"`
	}{href, base})
}

// requestScheme is the scheme a protocol-relative URL inherits: the
// request's own (core/proxy.rs:1684-1698), without a Deps.Scheme.
func requestScheme(r *http.Request) string {
	if r.URL.Scheme != "" {
		return strings.ToLower(r.URL.Scheme)
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// serveRebuild is handle_first_party_proxy_rebuild (core/proxy.rs:1849-2055):
// a signed click URL gains new parameters or loses some, never the signing
// ones, and is signed again. GET and form POSTs answer a 302, JSON POSTs the
// JSON {href, base, added, removed}.
func (f *Family) serveRebuild(w http.ResponseWriter, r *http.Request) {
	form := r.Method == http.MethodPost && isFormPost(r)
	var req rebuildReq
	var err error
	switch {
	case r.Method != http.MethodPost:
		req, err = rebuildFromPairs(formParse(r.URL.RawQuery))
	default:
		var body []byte
		if body, err = readBody(w, r, rebuildMaxBody); err != nil {
			break
		}
		if form {
			req, err = rebuildFromPairs(formParse(string(body)))
		} else if json.Unmarshal(body, &req) != nil || req.TSClick == nil {
			err = fmt.Errorf("%w: invalid JSON", errBadRequest)
		}
	}
	if err != nil {
		f.badRequest(w, r, err)
		return
	}
	href, base, added, removed, err := f.rebuild(req)
	if err != nil {
		f.refuse(w, r, err)
		return
	}
	if r.Method == http.MethodGet || form {
		redirect(w, href)
		return
	}
	if removed == nil {
		removed = []string{}
	}
	writeJSON(w, http.StatusOK, noStorePrivate, struct {
		Href    string            `json:"href"`
		Base    string            `json:"base"`
		Added   map[string]string `json:"added"`
		Removed []string          `json:"removed"`
	}{href, base, added, removed})
}

type rebuildReq struct {
	TSClick *string           `json:"tsclick"`
	Add     map[string]string `json:"add"`
	Del     []string          `json:"del"`
}

// rebuildFromPairs reads tsclick, add and del from query or form pairs; add
// and del are JSON and ignored when they do not parse (core/proxy.rs:1797-1830).
func rebuildFromPairs(pairs []Pair) (rebuildReq, error) {
	var req rebuildReq
	for _, p := range pairs {
		switch p.Key {
		case "tsclick":
			v := p.Value
			req.TSClick = &v
		case "add":
			var m map[string]string
			if json.Unmarshal([]byte(p.Value), &m) == nil {
				req.Add = m
			}
		case "del":
			var d []string
			if json.Unmarshal([]byte(p.Value), &d) == nil {
				req.Del = d
			}
		}
	}
	if req.TSClick == nil {
		return req, fmt.Errorf("%w: missing tsclick", errBadRequest)
	}
	return req, nil
}

var reservedParams = map[string]bool{paramExp: true, paramToken: true, paramURL: true}

func (f *Family) rebuild(req rebuildReq) (href, base string, added map[string]string, removed []string, err error) {
	c, perr := url.Parse(*req.TSClick)
	if perr != nil || c.Path != PathClick {
		return "", "", nil, nil, fmt.Errorf("%w: invalid tsclick", errBadTarget)
	}
	t, err := f.signer.verifyQuery(c.RawQuery, f.deps.Now())
	if err != nil {
		return "", "", nil, nil, err
	}
	// The pairs sorted by key, the last of a key winning: upstream keeps
	// them in a BTreeMap (core/proxy.rs:1919-1928).
	orig := map[string]string{}
	for _, p := range formParse(c.RawQuery) {
		if p.Key != paramURL && p.Key != paramToken {
			orig[p.Key] = p.Value
		}
	}
	before := make(map[string]string, len(orig))
	for k, v := range orig {
		before[k] = v
	}
	for _, k := range req.Del {
		if reservedParams[k] {
			return "", "", nil, nil, fmt.Errorf("%w: cannot delete %s", errBadTarget, k)
		}
		delete(orig, k)
	}
	for _, k := range sortedKeys(req.Add) {
		if reservedParams[k] {
			return "", "", nil, nil, fmt.Errorf("%w: cannot add %s", errBadTarget, k)
		}
		if _, ok := orig[k]; ok {
			return "", "", nil, nil, fmt.Errorf("%w: cannot modify %s", errBadTarget, k)
		}
		orig[k] = req.Add[k]
	}
	pairs := make([]Pair, 0, len(orig))
	added = map[string]string{}
	for _, k := range sortedKeys(orig) {
		pairs = append(pairs, Pair{k, orig[k]})
		if _, ok := before[k]; !ok {
			added[k] = orig[k]
		}
	}
	for _, k := range sortedKeys(before) {
		if _, ok := orig[k]; !ok {
			removed = append(removed, k)
		}
	}
	tok := f.signer.Token(joinSigned(t.tsurl, pairs))
	q := append(append([]Pair{{paramURL, t.tsurl}}, pairs...), Pair{paramToken, tok})
	return PathClick + "?" + formEncode(q), t.tsurl, added, removed, nil
}

// sortedKeys orders keys as Rust's BTreeMap<String, _> does: by bytes.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isFormPost(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// readBody reads at most max bytes (enforce_max_body_size, core/http_util.rs:444-458).
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, fmt.Errorf("%w: over %d bytes", errBodyLarge, max)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read body: %w", errBadRequest, err)
	}
	return b, nil
}

// badRequest answers a malformed request: 413 for an oversized body as
// upstream (RequestTooLarge), 400 for the rest, which upstream answers 502
// or 400 (core/proxy.rs:1700-1749; docs/behaviour.md, Fidelity).
func (f *Family) badRequest(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errBodyLarge) {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	msg := strings.TrimPrefix(err.Error(), errBadRequest.Error()+": ")
	http.Error(w, msg, http.StatusBadRequest)
}

func writeJSON(w http.ResponseWriter, code int, cacheControl string, v any) {
	// serde_json does not escape '&', '<' or '>'; a signed href is full of '&'.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if cacheControl != "" {
		w.Header().Set("Cache-Control", cacheControl)
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
