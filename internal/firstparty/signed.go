package firstparty

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The signing-control parameters (core/proxy.rs:1953).
const (
	paramURL   = "tsurl"
	paramToken = "tstoken"
	paramExp   = "tsexp"
)

// Reasons a signed first-party URL is refused. Each maps to one status in
// routes.go.
var (
	errMissingParam = errors.New("firstparty: missing tsurl or tstoken")
	errBadToken     = errors.New("firstparty: invalid tstoken")
	errBadExpiry    = errors.New("firstparty: invalid tsexp")
	errExpired      = errors.New("firstparty: expired tsexp")
)

// target is a verified signed URL: the clear URL to fetch or redirect to and
// the base tsurl it was built from.
type target struct {
	url       string
	tsurl     string
	hadParams bool
}

// verifyQuery is upstream's reconstruct_and_validate_signed_target
// (core/proxy.rs:2112-2194): tsurl and tstoken are taken out (the last of
// each wins), every other pair stays in order, tsexp included, and the signed
// string is tsurl, or tsurl "?" the form-encoded rest. The token is checked
// before tsexp, so a tsexp changed in transit fails as a bad token.
func (s *Signer) verifyQuery(rawQuery string, now time.Time) (target, error) {
	var tsurl, tok, exp string
	var haveURL, haveTok, haveExp, hadParams bool
	var rest []Pair
	for _, p := range formParse(rawQuery) {
		switch p.Key {
		case paramURL:
			tsurl, haveURL = p.Value, true
		case paramToken:
			tok, haveTok = p.Value, true
		case paramExp:
			exp, haveExp = p.Value, true
			rest = append(rest, p)
		default:
			rest = append(rest, p)
			hadParams = true
		}
	}
	if !haveURL || !haveTok {
		return target{}, errMissingParam
	}
	signed := joinSigned(tsurl, rest)
	if !s.Verify(signed, tok) {
		return target{}, errBadToken
	}
	if haveExp {
		// Rust's u64 parse: ASCII digits with an optional '+', nothing else.
		e, err := strconv.ParseUint(strings.TrimPrefix(exp, "+"), 10, 64)
		if err != nil {
			return target{}, errBadExpiry
		}
		if e < uint64(max(now.Unix(), 0)) {
			return target{}, errExpired
		}
	}
	return target{url: signed, tsurl: tsurl, hadParams: hadParams}, nil
}

func joinSigned(tsurl string, pairs []Pair) string {
	if len(pairs) == 0 {
		return tsurl
	}
	return tsurl + "?" + formEncode(pairs)
}

// signURL is upstream's build_signed_url_for (core/creative.rs:137-180): the
// clear URL's query pairs, then extras, are signed after the base URL without
// query or fragment, and the result is base path ? tsurl, the pairs, tstoken.
// A URL that does not parse is returned unchanged, as upstream does.
func (s *Signer) signURL(clear, basePath string, extra ...Pair) string {
	tsurl, pairs, ok := splitClearURL(clear)
	if !ok {
		return clear
	}
	pairs = append(pairs, extra...)
	tok := s.Token(joinSigned(tsurl, pairs))
	q := make([]Pair, 0, len(pairs)+2)
	q = append(q, Pair{paramURL, tsurl})
	q = append(q, pairs...)
	q = append(q, Pair{paramToken, tok})
	return basePath + "?" + formEncode(q)
}

// splitClearURL parses an absolute http(s) URL into its serialized base
// (no query, no fragment) and its query pairs. The base is serialized the
// way the url crate's Url::to_string does for the usual cases (WHATWG URL
// §4.5): scheme and host in lower case, the scheme's default port dropped,
// an empty path as "/". Only the minted tsurl depends on this; verification
// signs whatever tsurl the request carries.
func splitClearURL(clear string) (string, []Pair, bool) {
	u, err := url.Parse(clear)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", nil, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", nil, false
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && !(scheme == "http" && p == "80") && !(scheme == "https" && p == "443") {
		host += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	userinfo := ""
	if u.User != nil {
		userinfo = u.User.String() + "@"
	}
	return scheme + "://" + userinfo + host + path, formParse(u.RawQuery), true
}
