// Package pageparse reads back what ssatd injected into a page: the
// ad-slots and bids scripts, the bundle tag and the URL attributes. It
// knows the injected formats from docs/behaviour.md ("Bundle tag", "SSAT
// injection") and shares no code with the rewriter that writes them, so
// the test kit (ssatdtest.ParsePage) and `ssatd verify` check the rewriter
// rather than repeat it.
package pageparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// Page is what ssatd put into a page, read back from its HTML.
type Page struct {
	// Slots are the ad slots declared in <head> (window.tsjs.adSlots), in
	// page order; nil when the page has no slots script (a request that
	// was not eligible).
	Slots []Slot
	// Bids are the winning bids by slot id, from the script before
	// </body>; nil when the page has no bids script, empty when the
	// auction brought none.
	Bids map[string]Bid
	// Bundle is the src of the client bundle tag
	// (<script id="trustedserver-js">), "" when there is none.
	Bundle string
	// Links are the values of every href, src and action attribute, in
	// page order, the bundle tag's excepted: the URLs ssatd rewrites to
	// name the client-facing host.
	Links []string
}

// Slot is one declared ad slot, as the client bundle receives it.
type Slot struct {
	ID          string         `json:"id"`
	DivID       string         `json:"div_id"`
	GAMUnitPath string         `json:"gam_unit_path"`
	Formats     [][]int        `json:"formats"`
	Targeting   map[string]any `json:"targeting"`
}

// Bid is a slot's winning bid, as the client bundle receives it.
type Bid struct {
	Bidder      string `json:"hb_bidder"` // the seat
	PriceBucket string `json:"hb_pb"`     // the price, floored to the configured granularity
	AdID        string `json:"hb_adid"`   // the bid's id
	W           int    `json:"w"`
	H           int    `json:"h"`
	Adm         string `json:"adm"` // the creative
}

// The two injected scripts start with these (docs/behaviour.md, "SSAT
// injection"); the JSON follows as a JavaScript string literal.
const (
	slotsPrefix = `(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("`
	bidsPrefix  = `(function(){var t=window.tsjs=window.tsjs||{};var b=JSON.parse("`
	bundleID    = "trustedserver-js"
)

// Parse reads a decoded page body. It fails when an injected script is
// there but cannot be read, or appears twice.
func Parse(body []byte) (*Page, error) {
	p := &Page{}
	z := html.NewTokenizer(bytes.NewReader(body))
	inScript := false
	data := "" // the data-tsjs of a JSON data block being read
	for {
		switch z.Next() {
		case html.ErrorToken:
			if errors.Is(z.Err(), io.EOF) {
				return p, nil
			}
			return nil, fmt.Errorf("pageparse: read page: %w", z.Err())
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			inScript = tok.Data == "script"
			data = ""
			if inScript {
				data = dataBlock(tok)
			}
			p.attrs(tok)
		case html.EndTagToken:
			inScript = false
		case html.TextToken:
			if !inScript {
				break
			}
			text := z.Text()
			if data != "" {
				// The literal's opening quote is the prefix's last byte.
				text = []byte(dataPrefix[data] + strings.TrimPrefix(string(bytes.TrimSpace(text)), `"`))
			}
			if err := p.script(text); err != nil {
				return nil, err
			}
		}
	}
}

// Under a Content Security Policy that would block them, the two scripts'
// data goes in a JSON data block, <script type="application/json"
// data-tsjs="adSlots"> or "bids", holding the same string literal, which
// a constant loader script reads (docs/behaviour.md, "Content Security
// Policy"); dataPrefix makes it read as the script it stands for.
var dataPrefix = map[string]string{"adSlots": slotsPrefix, "bids": bidsPrefix}

// dataBlock returns the data-tsjs of an injected JSON data block, "" for
// any other script.
func dataBlock(tok html.Token) string {
	var typ, kind string
	for _, a := range tok.Attr {
		switch a.Key {
		case "type":
			typ = a.Val
		case "data-tsjs":
			kind = a.Val
		}
	}
	if typ != "application/json" || dataPrefix[kind] == "" {
		return ""
	}
	return kind
}

func (p *Page) attrs(tok html.Token) {
	var src, id string
	var links []string
	for _, a := range tok.Attr {
		switch a.Key {
		case "href", "src", "action":
			links = append(links, a.Val)
		case "id":
			id = a.Val
		}
		if a.Key == "src" {
			src = a.Val
		}
	}
	if tok.Data == "script" && id == bundleID && p.Bundle == "" {
		p.Bundle = src
		return
	}
	p.Links = append(p.Links, links...)
}

func (p *Page) script(text []byte) error {
	s := strings.TrimSpace(string(text))
	switch {
	case strings.HasPrefix(s, slotsPrefix):
		if p.Slots != nil {
			return errors.New("pageparse: two ad-slots scripts")
		}
		p.Slots = []Slot{}
		return decodeLiteral(s[len(slotsPrefix):], &p.Slots, "ad slots")
	case strings.HasPrefix(s, bidsPrefix):
		if p.Bids != nil {
			return errors.New("pageparse: two bids scripts")
		}
		p.Bids = map[string]Bid{}
		return decodeLiteral(s[len(bidsPrefix):], &p.Bids, "bids")
	}
	return nil
}

// decodeLiteral decodes the JSON held in the JavaScript string literal that
// rest starts with (its opening quote already consumed). The escapes ssatd
// writes (\\, \", \n, \r, \uXXXX) mean the same in JSON, so the literal is
// read as a JSON string and its value as JSON.
func decodeLiteral(rest string, v any, what string) error {
	end := -1
	for i := 0; i < len(rest); i++ {
		if rest[i] == '\\' {
			i++
			continue
		}
		if rest[i] == '"' {
			end = i
			break
		}
	}
	if end < 0 {
		return fmt.Errorf("pageparse: %s script: unterminated string", what)
	}
	var js string
	if err := json.Unmarshal([]byte(`"`+rest[:end]+`"`), &js); err != nil {
		return fmt.Errorf("pageparse: %s script: %w", what, err)
	}
	if err := json.Unmarshal([]byte(js), v); err != nil {
		return fmt.Errorf("pageparse: %s script: %w", what, err)
	}
	return nil
}

// WithoutBids is body with the bids script element (<script>…</script>
// before </body>) cut out, byte for byte otherwise. The bids differ from
// one auction to the next (each bid has its own id), so two responses for
// one page are compared with that script set aside: what `ssatd verify`
// and `ssatd measure -proxy` call the same page. A body without a bids
// script is returned as it is.
func WithoutBids(body []byte) []byte {
	z := html.NewTokenizer(bytes.NewReader(body))
	pos, scriptStart := 0, -1
	var cuts [][2]int
	inBids, block := false, false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		n := len(z.Raw())
		switch tt {
		case html.StartTagToken:
			tok := z.Token()
			scriptStart, block = -1, false
			if tok.Data == "script" {
				scriptStart, block = pos, dataBlock(tok) == "bids"
			}
		case html.TextToken:
			inBids = scriptStart >= 0 && (block || strings.HasPrefix(strings.TrimSpace(string(z.Raw())), bidsPrefix))
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "script" && inBids {
				cuts = append(cuts, [2]int{scriptStart, pos + n})
			}
			scriptStart, inBids = -1, false
		default:
			scriptStart, inBids = -1, false
		}
		pos += n
	}
	if len(cuts) == 0 {
		return body
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, c := range cuts {
		out = append(out, body[last:c[0]]...)
		last = c[1]
	}
	return append(out, body[last:]...)
}
