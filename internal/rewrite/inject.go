package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ssatd/ssatd/internal/ssat"
)

// BundlePath is the path the client bundle is served from.
const BundlePath = "/static/tsjs=tsjs-unified.min.js"

// BundleTag is the "Bundle tag" (docs/behaviour.md) script tag for a bundle whose sha256 is hexHash.
func BundleTag(hexHash string) []byte {
	return []byte(`<script src="` + BundlePath + `?v=` + hexHash + `" id="trustedserver-js"></script>`)
}

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
	b.WriteString(`<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("`)
	escapeJSString(&b, js)
	b.WriteString(`");</script>`)
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
	b.WriteString(`<script>(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("`)
	escapeJSString(&b, js)
	b.WriteString(`");var s=t.scheduleInitialAdInit;if(typeof s==="function")s(b);else t.bids=b;})();</script>`)
	return b.Bytes(), nil
}

// escapeJSString writes s as the body of a double-quoted JavaScript string
// literal inside a <script> element (docs/behaviour.md, "SSAT injection"). '<', '>' and '&' are escaped so
// that no "</script>" or "<!--" can appear in the element; U+2028 and U+2029
// are line terminators in older JavaScript string literals.
func escapeJSString(b *bytes.Buffer, s []byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '<':
			b.WriteString(`\u003C`)
		case '>':
			b.WriteString(`\u003E`)
		case '&':
			b.WriteString(`\u0026`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0xE2:
			// U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				if s[i+2] == 0xA8 {
					b.WriteString(`\u2028`)
				} else {
					b.WriteString(`\u2029`)
				}
				i += 2
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
}
