package basicauth

import (
	"strings"
	"unicode/utf8"
)

// maxDecodeRounds bounds the percent-decodings Reserved tries
// (ec/admin.rs:67-71, MAX_PERCENT_DECODE_ROUNDS).
const maxDecodeRounds = 4

// Reserved reports whether path is in a namespace whose requests must
// never reach the origin, since they may carry admin credentials and
// bodies: "/_ts/admin" as a bare prefix (the unanchored "^/_ts/admin"
// handler authenticates all of it) and the retired "/admin/keys" alias
// with what is under it, on the raw path and on each of up to four
// successive percent-decodings ("/admin%252Fkeys/rotate"), as upstream's
// deny_admin_diagnostic_fallback reserves them
// (crates/trusted-server-core/src/ec/admin.rs:96-151).
func Reserved(path string) bool {
	if reservedPath(path) {
		return true
	}
	for range maxDecodeRounds {
		if !strings.Contains(path, "%") {
			return false
		}
		decoded := percentDecode(path)
		if decoded == path || !utf8.ValidString(decoded) {
			return false
		}
		if reservedPath(decoded) {
			return true
		}
		path = decoded
	}
	return false
}

func reservedPath(p string) bool {
	const admin, retired = "/_ts/admin", "/admin/keys"
	return strings.HasPrefix(p, admin) || p == retired || strings.HasPrefix(p, retired+"/")
}

// percentDecode decodes every valid %XX once and leaves any other '%' as
// it is, as the urlencoding crate's decode does.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
