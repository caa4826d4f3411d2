package rewrite

// How a URL names the origin's host (docs/behaviour.md, "URL rewriting"),
// as the WHATWG URL Standard's basic URL parser reads a URL of a special
// scheme (http, https) or one relative to a page of such a scheme
// (https://url.spec.whatwg.org/#concept-basic-url-parser): a '\' is a '/'
// ("special relative or authority", "relative slash" and "special
// authority ignore slashes" states), so that any two slashes or
// backslashes start an authority, with or without the scheme before them;
// the authority's last '@' ends a userinfo ("authority state"); a port is
// a number, leading zeros and all ("port state"); and the host is
// percent-decoded and, when it ends in a number, read as an IPv4 address
// in any of its decimal, octal, hexadecimal and short forms ("host
// parser", "IPv4 parser").

// maxSlashRun is the most slashes a scheme may be written with before a
// host for the rules to see the scheme: "https:" and four slashes or
// backslashes ("https:\/\/"), the look-behind of the text rules
// (textLookbehind). A longer run is read as a protocol-relative form: the
// host is replaced, the scheme kept as written.
const maxSlashRun = 4

func isSlash(c byte) bool { return c == '/' || c == '\\' }

// userinfoStart is where the userinfo ends by the '@' at v[at-1] begins:
// the authority runs back to the byte after a slash, '?' or '#' (the last
// '@' of an authority ends its userinfo, so the ones before it are part of
// it), no further back than lo.
func userinfoStart(v []byte, lo, at int) int {
	i := at - 1
	for i > lo && !endsAuthority(v[i-1]) {
		i--
	}
	return i
}

// endsAuthority reports the bytes that end a special URL's authority, and
// white space, which ends a URL in srcset and in text.
func endsAuthority(c byte) bool {
	return c == '/' || c == '\\' || c == '?' || c == '#' || isSpace(c)
}

// portValue is the port p (its digits, without the ':') as the number the
// URL parser reads: without its leading zeros ("0443" is 443). A port of
// digits only is written "0" when it is zero.
func portValue(p []byte) []byte {
	for len(p) > 1 && p[0] == '0' {
		p = p[1:]
	}
	return p
}

// parseIPv4 reads host (lower case, percent-decoded) as the WHATWG IPv4
// parser does when the host ends in a number: one to four parts separated
// by '.', the last of which may be empty, each decimal, octal after a
// leading 0 or hexadecimal after 0x, the last filling the bytes that the
// others leave. ok is false for a host that is no IPv4 address.
func parseIPv4(host []byte) (addr uint32, ok bool) {
	if !endsInNumber(host) {
		return 0, false
	}
	if n := len(host); n > 1 && host[n-1] == '.' {
		host = host[:n-1]
	}
	var parts [4]uint64
	n := 0
	for start := 0; start <= len(host); {
		end := start
		for end < len(host) && host[end] != '.' {
			end++
		}
		if n == 4 {
			return 0, false
		}
		v, ok := ipv4Number(host[start:end])
		if !ok {
			return 0, false
		}
		parts[n], n = v, n+1
		start = end + 1
	}
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return 0, false
		}
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return 0, false
	}
	v := parts[n-1]
	for i := 0; i < n-1; i++ {
		v += parts[i] << (8 * (3 - i))
	}
	return uint32(v), true
}

// endsInNumber is the WHATWG "ends in a number checker": the last part
// (before a final '.') is digits, or a hexadecimal number after 0x.
func endsInNumber(host []byte) bool {
	if n := len(host); n > 1 && host[n-1] == '.' {
		host = host[:n-1]
	}
	i := len(host)
	for i > 0 && host[i-1] != '.' {
		i--
	}
	last := host[i:]
	if len(last) == 0 {
		return false
	}
	digits := true
	for _, c := range last {
		digits = digits && c >= '0' && c <= '9'
	}
	if digits {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number is the WHATWG IPv4 number parser: decimal, hexadecimal after
// 0x, octal after a leading 0; an empty part is no number, "0x" alone is 0.
// A value past 2^32 fails here, as it fails the address.
func ipv4Number(p []byte) (uint64, bool) {
	if len(p) == 0 {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && p[1] == 'x':
		base, p = 16, p[2:]
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var v uint64
	for _, c := range p {
		d := uint64(16)
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		}
		if d >= base {
			return 0, false
		}
		if v = v*base + d; v > 1<<32 {
			return 0, false
		}
	}
	return v, true
}
