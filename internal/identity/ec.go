// Package identity is the edge-cookie route family: Trusted Server's ts-ec
// cookie, minted on a consenting reader's document navigation and kept in
// the store (internal/store), and the partner routes that read and sync it,
// GET|OPTIONS /_ts/api/v1/identify and POST /_ts/api/v1/batch-sync. It
// imitates IABTechLab/trusted-server crates/trusted-server-core/src/ec/
// (docs/behaviour.md, "Edge cookie").
//
// The page path calls Family.Page once per origin response, with the
// response's headers; the route table (internal/proxy, routes.go) serves
// Identify and BatchSync.
package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
)

// CookieName is the edge cookie (constants.rs COOKIE_TS_EC).
const CookieName = "ts-ec"

const suffixChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NormalizeIP is the address an id's hash is taken of (ec/generation.rs:
// 20-47): IPv4 dotted, IPv6 its /64 as four zero-padded hex groups without
// separators, so that privacy-extension addresses keep one id.
func NormalizeIP(a netip.Addr) string {
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	return hex.EncodeToString(b[:8])
}

// Generate is a fresh id (generation.rs:72-97): the lower-case hex
// HMAC-SHA256 of the normalised address under passphrase, a dot, and six
// random letters or digits.
func Generate(passphrase string, client netip.Addr) (string, error) {
	mac := hmac.New(sha256.New, []byte(passphrase))
	mac.Write([]byte(NormalizeIP(client)))
	suffix := make([]byte, 0, 6)
	var rnd [16]byte
	for len(suffix) < cap(suffix) {
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", fmt.Errorf("ec suffix: %w", err)
		}
		for _, b := range rnd {
			// Bytes past the last whole multiple of 62 are dropped, so each
			// character is equally likely, as upstream's gen_range.
			if int(b) < 256-256%len(suffixChars) && len(suffix) < cap(suffix) {
				suffix = append(suffix, suffixChars[int(b)%len(suffixChars)])
			}
		}
	}
	return hex.EncodeToString(mac.Sum(nil)) + "." + string(suffix), nil
}

// Valid is upstream's is_valid_ec_id (generation.rs:141-171): 64
// lower-case hex digits, a dot, six ASCII letters or digits.
func Valid(id string) bool {
	hash, suffix, ok := strings.Cut(id, ".")
	if !ok || len(hash) != 64 || len(suffix) != 6 {
		return false
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	for i := 0; i < len(suffix); i++ {
		if c := suffix[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// normalizeForKV lower-cases the hash part, as ids partners send may be
// upper case (normalize_ec_id_for_kv, generation.rs:118-124).
func normalizeForKV(id string) string {
	hash, suffix, _ := strings.Cut(id, ".")
	return strings.ToLower(hash) + "." + suffix
}

// SetCookie is the Set-Cookie value that gives id (cookies.rs:84-113):
// Domain is "." and publisher.domain, never publisher.cookie_domain
// (settings.rs:106-115); a year's Max-Age, as the store's entry.
func SetCookie(domain, id string) string { return formatCookie(domain, id, maxAgeSeconds) }

// ExpireCookie withdraws the edge cookie (cookies.rs:148-166).
func ExpireCookie(domain string) string { return formatCookie(domain, "", 0) }

const maxAgeSeconds = 365 * 24 * 60 * 60

func formatCookie(domain, value string, maxAge int) string {
	return fmt.Sprintf("%s=%s; Domain=.%s; Path=/; Secure; SameSite=Lax; Max-Age=%d; HttpOnly", CookieName, value, domain, maxAge)
}

// cookieID is the request's ts-ec value when it has only the characters an
// id may carry ([A-Za-z0-9._-]), else "": upstream reads a cookie with
// others as no cookie at all, for validity and for withdrawal alike
// (ec/mod.rs:92-106, cookies.rs:27-40).
func cookieID(cookies []string) string {
	for _, v := range cookies {
		ok := v != ""
		for i := 0; i < len(v) && ok; i++ {
			c := v[i]
			ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' || c == '_'
		}
		if ok {
			return v
		}
	}
	return ""
}
