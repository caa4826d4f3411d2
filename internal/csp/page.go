package csp

import (
	"strings"
)

// Keep is the inline content a page's policies allow by hash: the rewrite
// leaves it byte for byte, since a changed byte is a changed hash and the
// browser would block it (CSP3, "does element match source list
// for type and source").
type Keep uint8

const (
	// KeepScripts: a hash-source governs inline <script> elements.
	KeepScripts Keep = 1 << iota
	// KeepHandlers: event-handler attributes are allowed by hash
	// ('unsafe-hashes' with a hash-source).
	KeepHandlers
	// KeepStyles: a hash-source governs inline <style> elements.
	KeepStyles
	// KeepStyleAttrs: style attributes are allowed by hash
	// ('unsafe-hashes' with a hash-source).
	KeepStyleAttrs
)

// Pending says what ssatd will still inject after a policy takes effect:
// a policy only governs the elements that come after it (a <meta> policy
// is enforced from where the parser meets it, HTML §4.2.5.3).
type Pending uint8

const (
	PendingInline Pending = 1 << iota // the ad-slots or the bids script
	PendingBundle                     // the bundle's external script
)

// Page is what one page's policies, the header's and then each <meta>'s,
// require of the rewrite so far.
type Page struct {
	// Nonce is the nonce ssatd's injected scripts carry: the first valid
	// nonce-source of a policy's script element directive.
	Nonce string
	// Loader: ssatd's injected inline scripts go as a JSON data block and
	// the constant loader script (LoaderHash), because a policy would block
	// them otherwise and was given the loader's hash.
	Loader bool
	// Keep is the inline content left byte for byte.
	Keep Keep
	// InlineBlocked: a policy allows no inline script at all ('none', or an
	// empty list), so ssatd's inline scripts are blocked.
	InlineBlocked bool
	// BundleBlocked: a policy surely blocks the bundle's external script
	// ('strict-dynamic' with no nonce to give it, or only keywords and
	// hashes).
	BundleBlocked bool
	// Policies counts the policies read.
	Policies int
}

// On reports whether any policy was read.
func (pg *Page) On() bool { return pg != nil && pg.Policies > 0 }

// ReadHeader reads the values of one Content-Security-Policy (or
// -Report-Only) header field, each a serialized policy list (CSP3, "parse a
// serialized CSP list": policies separated by ','), and returns them with the loader's hash
// added where the pending injections need it. The values are changed in
// place; changed reports whether any was.
func (pg *Page) ReadHeader(vals []string, pending Pending) (changed bool) {
	pols := make([][]policy, len(vals))
	for i, v := range vals {
		for _, raw := range strings.Split(v, ",") {
			pols[i] = append(pols[i], parsePolicy(raw))
		}
	}
	for _, list := range pols {
		for k := range list {
			pg.pickNonce(&list[k])
		}
	}
	for i, list := range pols {
		parts := make([]string, len(list))
		for k := range list {
			parts[k] = pg.read(&list[k], pending)
			if parts[k] != list[k].raw {
				changed = true
			}
		}
		vals[i] = strings.Join(parts, ",")
	}
	return changed
}

// ReadMeta reads the content of a <meta http-equiv="content-security-policy">
// and returns it with the loader's hash added where the pending injections
// need it. HTML §4.2.5.3 parses the content as one serialized policy, but
// Chromium and Safari split it on commas into a list, as a header's value
// (whatwg/html#5102; checked in Chromium: "script-src 'sha256-A',
// script-src 'unsafe-inline'" runs only the script A allows). It is read
// as they read it. Firefox keeps one policy, in which a source
// expression that touches a comma is invalid: the loader's hash, added
// before a comma, is invalid there, and the publisher's expression it
// separates from the comma becomes valid, so that Firefox's reading moves
// toward Chromium's by the publisher's own expression (a page relying on
// Firefox's reading of a comma is broken in Chromium already).
func (pg *Page) ReadMeta(content string, pending Pending) string {
	if content == "" { // HTML §4.2.5.3 step 2: no policy
		return content
	}
	vals := []string{content}
	pg.ReadHeader(vals, pending)
	return vals[0]
}

// pickNonce takes the policy's nonce for the injected scripts when none
// was taken yet.
func (pg *Page) pickNonce(p *policy) {
	if pg.Nonce != "" {
		return
	}
	if d := p.effective(ScriptElem); d != nil {
		if n := d.nonces(); len(n) > 0 {
			pg.Nonce = n[0]
		}
	}
}

// read notes what one policy requires and returns its text, with the
// loader's hash added if the pending inline scripts need it.
func (pg *Page) read(p *policy, pending Pending) string {
	pg.Policies++
	for k, bit := range [kinds]Keep{KeepScripts, KeepHandlers, KeepStyles, KeepStyleAttrs} {
		d := p.effective(Kind(k))
		if d == nil || !d.hasHash() {
			continue
		}
		// Attributes match a hash only under 'unsafe-hashes' (CSP3, "does
		// element match source list for type and source").
		if (Kind(k) == ScriptAttr || Kind(k) == StyleAttr) && !d.keyword("'unsafe-hashes'") {
			continue
		}
		pg.Keep |= bit
	}
	d := p.effective(ScriptElem)
	if d == nil {
		return p.raw
	}
	usable := pg.Nonce != "" && d.hasNonce(pg.Nonce)
	if pending&PendingBundle != 0 && !usable && !d.allowsExternal() {
		pg.BundleBlocked = true
	}
	if pending&PendingInline == 0 || usable || d.allowsAllInline(ScriptElem) {
		return p.raw
	}
	if d.allowsNothing() {
		pg.InlineBlocked = true
		return p.raw
	}
	pg.Loader = true
	if d.allowsLoader() {
		return p.raw // the publisher allows the loader already
	}
	return p.withLoader(d)
}

// withLoader returns the policy's text with the loader's hash added to d,
// the directive that governs script elements. Adding a hash-source to a
// list that allowed all inline scripts would take that away (CSP3, "does
// a source list allow all inline behavior for type"); read never asks,
// since such a list lets the scripts run. When d is default-src, a
// script-src with default-src's sources and the hash is added instead, so
// that styles, images and the rest, which default-src also governs, keep
// their rules.
func (p *policy) withLoader(d *directive) string {
	if d.name != "default-src" {
		return p.raw[:d.end] + " '" + LoaderHash + "'" + p.raw[d.end:]
	}
	head := strings.TrimRightFunc(p.raw, isASCIISpaceRune)
	sep := "; "
	if strings.HasSuffix(head, ";") {
		sep = " "
	}
	return head + sep + "script-src " + strings.Join(append(d.sources[:len(d.sources):len(d.sources)], "'"+LoaderHash+"'"), " ") + p.raw[len(head):]
}
