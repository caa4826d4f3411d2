package compress

import (
	"strings"
)

// AcceptEncoding is a parsed Accept-Encoding request header (RFC 9110
// §12.5.3).
type AcceptEncoding struct {
	present bool
	// q holds the weight of every coding the client listed, lower-cased,
	// including "*". Weights are kept in thousandths, the RFC's precision, so
	// that comparisons are exact.
	q map[string]int
}

// ParseAcceptEncoding parses every Accept-Encoding line of a request.
//
// It is deliberately tolerant, because rejecting a whole header over one bad
// element would punish the client for noise: malformed elements and elements
// with an invalid q are skipped, unknown parameters are ignored. When a
// coding is listed more than once the lowest weight wins, since wrongly
// assuming a client can decode something is worse than not compressing.
func ParseAcceptEncoding(values []string) AcceptEncoding {
	a := AcceptEncoding{present: len(values) > 0}
	for _, line := range values {
		for _, elem := range strings.Split(line, ",") {
			coding, q, ok := parseAcceptElement(elem)
			if !ok {
				continue
			}
			if a.q == nil {
				a.q = make(map[string]int)
			}
			if old, seen := a.q[coding]; !seen || q < old {
				a.q[coding] = q
			}
		}
	}
	return a
}

func parseAcceptElement(elem string) (coding string, q int, ok bool) {
	parts := strings.Split(elem, ";")
	coding = strings.ToLower(strings.TrimSpace(parts[0]))
	if coding == "" || !isToken(coding) {
		return "", 0, false
	}
	q = 1000
	for _, param := range parts[1:] {
		name, value, hasValue := strings.Cut(strings.TrimSpace(param), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		if !hasValue {
			return "", 0, false
		}
		v, valid := parseQValue(strings.TrimSpace(value))
		if !valid {
			return "", 0, false
		}
		q = v
	}
	return coding, q, true
}

// parseQValue implements the qvalue grammar of RFC 9110 §12.4.2, returning
// thousandths:
//
//	qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
func parseQValue(s string) (int, bool) {
	if s == "" || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	whole := int(s[0]-'0') * 1000
	frac := s[1:]
	if frac == "" {
		return whole, true
	}
	if frac[0] != '.' || len(frac) > 4 {
		return 0, false
	}
	v, scale := 0, 100
	for i := 1; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' || (whole == 1000 && c != '0') {
			return 0, false
		}
		v += int(c-'0') * scale
		scale /= 10
	}
	return whole + v, true
}

// isToken reports whether s consists only of RFC 9110 tchars.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Present reports whether the request had at least one Accept-Encoding line,
// even an empty one.
func (a AcceptEncoding) Present() bool { return a.present }

// Accepts reports whether the client accepts coding c.
//
// A request without Accept-Encoding is treated as accepting only identity.
// RFC 9110 reads that as "no preference", but clients that omit the header
// (scripts, health checks, old tools) are exactly the ones that cannot decode,
// so the proxy does not compress for them.
func (a AcceptEncoding) Accepts(c string) bool { return a.weight(c) > 0 }

// Q returns the effective weight of coding c, as used by Accepts.
func (a AcceptEncoding) Q(c string) float64 { return float64(a.weight(c)) / 1000 }

func (a AcceptEncoding) weight(c string) int {
	c = strings.ToLower(strings.TrimSpace(c))
	if q, ok := a.q[c]; ok {
		return q
	}
	star, hasStar := a.q["*"]
	if c == "identity" {
		// Identity is acceptable unless excluded explicitly or via "*;q=0"
		// (RFC 9110 §12.5.3); a non-zero "*" weight applies to it like to
		// any other unlisted coding.
		if hasStar {
			return star
		}
		return 1000
	}
	if hasStar {
		return star
	}
	return 0
}

// mirrorCodings is the fixed order in which codings are offered to the
// origin. It is fixed rather than copied from the client so that the origin
// request, and therefore any cache keyed on it, varies as little as possible.
var mirrorCodings = [...]Coding{Gzip, Deflate, Brotli}

// MirrorOriginAcceptEncoding returns the Accept-Encoding to send to the
// origin: the codings the proxy can both decode and re-encode that the client
// accepts, so the origin's choice can be mirrored back unchanged. It is
// "identity" when that set is empty or the client sent no Accept-Encoding.
func MirrorOriginAcceptEncoding(a AcceptEncoding) string {
	if !a.Present() {
		return string(Identity)
	}
	var out []string
	for _, c := range mirrorCodings {
		if a.Accepts(string(c)) {
			out = append(out, string(c))
		}
	}
	if len(out) == 0 {
		return string(Identity)
	}
	return strings.Join(out, ", ")
}

// Choose returns the coding a server sends for this Accept-Encoding, among
// offered, listed in the server's order of preference (RFC 9110 §12.5.3):
// the highest weight wins and ties go to the earlier offer. Unlike Accepts,
// which guards what the proxy may send, Choose is for origins that pick a
// representation:
//   - "x-gzip" counts as "gzip" (RFC 9110 §8.4.1.3);
//   - an identity the client did not name, directly or by "*", ranks below
//     every coding it did name, so "br;q=0.1" still gets br;
//   - when nothing offered is acceptable the answer is identity, which
//     RFC 9110 §12.5.3 lets a server send anyway.
//
// The daemon never calls it: the guest does not pick representations. It
// is the negotiation of the origins ssatd is tried and tested against (the
// demo origin through demo.Negotiate, cmd/ssatd-load's origin, the proxy
// tests' origins), and it lives here because it reads the parsed weights
// (the x-gzip alias, whether identity was named) that only this type holds.
func (a AcceptEncoding) Choose(offered ...Coding) Coding {
	best, bestRank := Identity, 0
	for _, c := range offered {
		if r := a.rank(c); r > bestRank {
			best, bestRank = c, r
		}
	}
	return best
}

// rank is twice the weight of c, which leaves 1 for an identity the client
// did not name: above a refused coding, below every accepted one.
func (a AcceptEncoding) rank(c Coding) int {
	name := string(c)
	_, named := a.q[name]
	if !named && c == Gzip {
		if _, alias := a.q["x-gzip"]; alias {
			name, named = "x-gzip", true
		}
	}
	if _, star := a.q["*"]; !named && !star && c == Identity {
		return 1
	}
	return 2 * a.weight(name)
}
