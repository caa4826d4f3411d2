package rewrite

import (
	"regexp"
	"strconv"
	"strings"
)

// The WHATWG URL parser's reading of an authority (docs/behaviour.md, "URL
// rewriting"), written plainly on strings for the reference rewriter and
// the oracles of the text rules: backslashes are slashes, a userinfo ends
// at the authority's last '@', a port is a number, and a host is
// percent-decoded and, ending in a number, an IPv4 address. Part of the
// reference (independence_test.go): nothing here comes from the scanner.

// refSeparators finds the separators that end at lv[sep] (lv lower case),
// looking no further back than done: "http:" or "https:" with two to four
// slashes or backslashes, or two or more of them alone (of which four are
// counted). It returns the scheme ("https", "http", or "//" for none),
// where the reference starts, and where the part written as it is (the
// ':' and the slashes) starts.
func refSeparators(lv string, done, sep int) (form string, start, keep int, ok bool) {
	before := lv[done:sep]
	rest := strings.TrimRight(before, `/\`)
	n := len(before) - len(rest)
	if n > 4 {
		n, rest = 4, before[:len(before)-4]
	}
	if n < 2 {
		return "", 0, 0, false
	}
	keep = sep - n
	for _, s := range []string{"https", "http"} {
		if strings.HasSuffix(rest, s+":") {
			return s, keep - len(s) - 1, keep - 1, true
		}
	}
	return "//", keep, keep, true
}

// refReplacement is what replaces a reference of form whose separators
// are sepText.
func (r refRules) refReplacement(form, sepText string) string {
	if form == "https" || form == "http" {
		return r.scheme + sepText + r.reqHost
	}
	return sepText + r.reqHost
}

// refPortNumber is a port's digits as the parser's number reads them: no
// leading zeros ("0" for zero). A port of more than five digits is no
// port of the rules.
func refPortNumber(digits string) (string, bool) {
	if len(digits) > 5 {
		return "", false
	}
	if t := strings.TrimLeft(digits, "0"); t != "" || digits == "" {
		return t, true
	}
	return "0", true
}

// refAuthorities are the authorities of a value: what follows two or more
// slashes or backslashes, up to the next slash, backslash, '?', '#' or
// white space.
var refAuthorities = regexp.MustCompile(`[/\\]{2,}([^/\\?# \t\n\r\f]*)`)

// refRespell rewrites, in the decoded URL value v, the authorities whose
// host is an IPv4 origin's in another spelling than its own (another form
// of the address, percent-encoded or not), by the forms and port rules of
// the name.
func (r refRules) refRespell(v string) (string, bool) {
	if _, ipv4, _ := refIPv4(r.host); !ipv4 {
		return v, false // only an IPv4 origin's other spellings are followed
	}
	lv := refLower(v)
	var out strings.Builder
	done, changed := 0, false
	for _, m := range refAuthorities.FindAllStringSubmatchIndex(lv, -1) {
		sep, end := m[2], m[3]
		if sep < done {
			continue
		}
		at := sep
		if k := strings.LastIndex(lv[sep:end], "@"); k >= 0 {
			at = sep + k + 1
		}
		hostEnd := at
		if k := strings.IndexAny(lv[at:end], ":,"); k >= 0 {
			hostEnd = at + k
		} else {
			hostEnd = end
		}
		host := lv[at:hostEnd]
		if host == r.host || !r.refHostIs(host) {
			continue
		}
		form, start, keep, ok := refSeparators(lv, done, sep)
		if !ok {
			continue
		}
		stop := hostEnd
		if strings.HasPrefix(lv[stop:], ":") {
			digits := lv[stop+1:]
			if k := strings.IndexFunc(digits, func(c rune) bool { return c < '0' || c > '9' }); k >= 0 {
				digits = digits[:k]
			}
			if !r.portKeepsOrigin(digits, form) {
				continue
			}
			stop += 1 + len(digits)
		} else if r.port != "" {
			continue
		}
		if stop < len(lv) && !strings.ContainsRune("/?#\\, \t\n\r\f", rune(lv[stop])) {
			continue
		}
		out.WriteString(v[done:start])
		out.WriteString(r.refReplacement(form, v[keep:sep]))
		done, changed = stop, true
	}
	if !changed {
		return v, false
	}
	out.WriteString(v[done:])
	return out.String(), true
}

// refHostIs reports whether host (lower case, not yet percent-decoded) is
// the origin's host once decoded and lower-cased, compared as an IPv4
// address when it ends in a number.
func (r refRules) refHostIs(host string) bool {
	if host == "" || len(host) > 768 {
		return false
	}
	var b strings.Builder
	for i := 0; i < len(host); i++ {
		if host[i] == '%' && i+2 < len(host) {
			if n, err := strconv.ParseUint(host[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(host[i])
	}
	decoded := refLower(b.String())
	got, isIP, ok := refIPv4(decoded)
	want, originIP, _ := refIPv4(r.host)
	switch {
	case isIP:
		return ok && originIP && got == want
	case originIP:
		return false
	}
	return decoded == r.host
}

// refIPv4 reads host as the IPv4 parser does: isIP when it ends in a
// number, ok when it is then an address.
func refIPv4(host string) (addr uint64, isIP, ok bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if _, err := refIPv4Part(last); last == "" || strings.Trim(last, "0123456789") != "" && err != nil {
		return 0, false, false
	}
	if len(parts) > 4 {
		return 0, true, false
	}
	for i, p := range parts {
		n, err := refIPv4Part(p)
		if err != nil {
			return 0, true, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return 0, true, false
			}
			addr = addr*256 + n
			continue
		}
		room := uint64(1) << (8 * (5 - len(parts)))
		if n >= room {
			return 0, true, false
		}
		addr = addr*room + n
	}
	return addr, true, true
}

// refIPv4Part is the IPv4 number parser: hexadecimal after "0x", octal
// after a leading "0", decimal otherwise; "0x" alone is zero.
func refIPv4Part(p string) (uint64, error) {
	switch {
	case p == "":
		return 0, strconv.ErrSyntax
	case strings.HasPrefix(p, "0x"):
		if p == "0x" {
			return 0, nil
		}
		return strconv.ParseUint(p[2:], 16, 40)
	case len(p) > 1 && p[0] == '0':
		return strconv.ParseUint(p[1:], 8, 40)
	}
	return strconv.ParseUint(p, 10, 40)
}
