package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/csp"
	"github.com/ssatd/ssatd/internal/pageparse"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// TestVerifySetsAsideTheBidsUnderAPolicy: verify (and measure -proxy)
// compare pages with the
// bids script set aside; under a policy that script carries a nonce or
// goes as a data block and the loader, and two auctions' pages must still
// compare equal.
func TestVerifySetsAsideTheBidsUnderAPolicy(t *testing.T) {
	page := `<html><head></head><body><p>x</p></body></html>`
	for _, policy := range []string{"", "script-src 'nonce-abc'", "script-src 'self'"} {
		var pages [2][]byte
		for i, adm := range []string{"first", "second"} {
			var pg csp.Page
			if policy != "" {
				pg.ReadHeader([]string{policy}, csp.PendingBundle|csp.PendingInline)
			}
			opts := &rewrite.Options{HeadPrepend: rewrite.BundleTag("00"), CSP: &pg, BodyEnd: func() []byte {
				b, _ := rewrite.BidsScript(map[string]ssat.Bid{"top": {Adm: adm}})
				return b
			}}
			var out bytes.Buffer
			if _, err := rewrite.Rewrite(&out, strings.NewReader(page), opts); err != nil {
				t.Fatal(err)
			}
			pages[i] = pageparse.WithoutBids(out.Bytes())
		}
		if !bytes.Equal(pages[0], pages[1]) || bytes.Contains(pages[0], []byte("first")) {
			t.Errorf("policy %q: the bids were not set aside:\n%s\n%s", policy, pages[0], pages[1])
		}
	}
}
