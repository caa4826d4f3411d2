package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ssatd/ssatd/internal/ssat"
)

// BundlePath is the path the client bundle is served from; StaticPrefix
// starts every path of the client bundle and its modules (upstream's
// handle_tsjs_dynamic, crates/trusted-server-core/src/publisher.rs:525-567).
const (
	StaticPrefix = "/static/tsjs="
	BundlePath   = StaticPrefix + "tsjs-unified.min.js"
)

// Attr is an attribute of the bundle tag: a name of lower-case letters,
// digits and '-', and a value with none of `"&<>`, as upstream asserts
// (tsjs.rs, tsjs_script_tag_with_attributes); both are written as they are.
type Attr struct{ Name, Value string }

// GAMAttribution is the bundle tag's attribute when GPT's GAM attribution
// is on (integrations/gpt.rs:523-529).
var GAMAttribution = Attr{"data-ts-gam-attribution", "true"}

// BundleTag is the "Bundle tag" (docs/behaviour.md) script tag for a bundle
// whose sha256 is hexHash, with attrs after its id, as upstream writes it
// (tsjs.rs, tsjs_script_tag_with_attributes).
func BundleTag(hexHash string, attrs ...Attr) []byte {
	b := []byte(bundleOpen + BundlePath + `?v=` + hexHash + `" id="trustedserver-js"`)
	for _, a := range attrs {
		b = append(b, ` `+a.Name+`="`+a.Value+`"`...)
	}
	return append(b, `></script>`...)
}

// UnifiedTag is the bundle's tag without a version, which upstream puts
// in creatives and proxied documents, where the exact module set is not
// known (tsjs.rs, tsjs_unified_script_tag; creative.rs:701-706).
func UnifiedTag() []byte {
	return []byte(bundleOpen + BundlePath + `" id="trustedserver-js"></script>`)
}

// DeferredTag is the script tag of a deferred module (one served alone,
// such as prebid's), whose sha256 is hexHash (tsjs.rs,
// tsjs_deferred_script_tag).
func DeferredTag(id, hexHash string) []byte {
	return []byte(bundleOpen + StaticPrefix + `tsjs-` + id + `.min.js?v=` + hexHash + `" defer></script>`)
}

// bundleOpen starts the bundle tag.
const bundleOpen = `<script src="`

// The ad-slots and bids scripts: their data, a JSON text written as a
// JavaScript string (escapeJSString), goes between open and close.
const (
	adSlotsOpen  = `<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("`
	adSlotsClose = `");</script>`
	bidsOpen     = `<script>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("`
	bidsClose    = `");var s=t.scheduleInitialAdInit;if(typeof s==="function")s(b);else t.bids=b;})();</script>`
)

// AdSlotsScript is the "SSAT injection" (docs/behaviour.md) head script declaring the matched slots.
func AdSlotsScript(slots []ssat.Slot) ([]byte, error) {
	// The caller's slots are shared with the auction: normalise a copy so
	// that empty lists and maps encode as [] and {} rather than null.
	out := make([]ssat.Slot, len(slots))
	for i, s := range slots {
		if s.Formats == nil {
			s.Formats = [][]int{}
		}
		if s.Targeting == nil {
			s.Targeting = map[string]any{}
		}
		out[i] = s
	}
	js, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode ad slots: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(adSlotsOpen)
	escapeJSString(&b, js)
	b.WriteString(adSlotsClose)
	return b.Bytes(), nil
}

// BidsScript is the "SSAT injection" (docs/behaviour.md) script placed before </body>.
func BidsScript(bids map[string]ssat.Bid) ([]byte, error) {
	if bids == nil {
		bids = map[string]ssat.Bid{}
	}
	js, err := json.Marshal(bids)
	if err != nil {
		return nil, fmt.Errorf("encode bids: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(bidsOpen)
	escapeJSString(&b, js)
	b.WriteString(bidsClose)
	return b.Bytes(), nil
}

// escapeJSString writes s, which is UTF-8 (json.Marshal's output), as the
// body of a double-quoted JavaScript string literal inside a <script> element
// (docs/behaviour.md, "SSAT injection"). '<', '>' and '&' are escaped so that
// no "</script>" or "<!--" can appear in the element. Every character at or
// above U+0080 is written as \uXXXX (a surrogate pair above U+FFFF, as
// ECMA-262 §12.9.4 reads string escapes), so that the script is ASCII and
// means the same in any ASCII-compatible charset the page is served in
// (windows-1252, Shift_JIS, ...); that also covers U+2028 and U+2029, line
// terminators in older JavaScript string literals.
func escapeJSString(b *bytes.Buffer, s []byte) {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:]) // invalid bytes become U+FFFD
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				writeUEscape(b, hi)
				writeUEscape(b, lo)
			} else {
				writeUEscape(b, r)
			}
			i += size
			continue
		}
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '<', '>', '&':
			writeUEscape(b, rune(c))
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
		i++
	}
}

// writeUEscape writes r, at most U+FFFF, as \uXXXX with upper-case digits.
func writeUEscape(b *bytes.Buffer, r rune) {
	const hex = "0123456789ABCDEF"
	b.WriteString(`\u`)
	b.WriteByte(hex[r>>12&0xF])
	b.WriteByte(hex[r>>8&0xF])
	b.WriteByte(hex[r>>4&0xF])
	b.WriteByte(hex[r&0xF])
}
