package measure

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
)

// FetchResponse is one request to a live origin.
type FetchResponse struct {
	AcceptEncoding  string  `json:"accept_encoding"`  // what was asked
	Status          int     `json:"status"`           //
	ContentEncoding string  `json:"content_encoding"` // what came back ("identity" when absent)
	TransferBytes   int64   `json:"transfer_bytes"`   // body bytes on the wire (after chunking)
	DecodedBytes    int64   `json:"decoded_bytes"`    //
	TTFBMS          float64 `json:"ttfb_ms"`          // request sent → first response byte
	TotalMS         float64 `json:"total_ms"`         // request start → body read
	// SameAsIdentity: the decoded body equals the decoded body of the
	// identity request; DifferingBytes is otherwise the size of the region
	// where they differ (dynamic pages differ between requests).
	SameAsIdentity bool   `json:"same_as_identity"`
	DifferingBytes int64  `json:"differing_bytes"`
	Error          string `json:"error,omitempty"`
}

// Fetch is what a live origin returned for one URL.
type Fetch struct {
	URL       string          `json:"url"`
	Responses []FetchResponse `json:"responses"`
	// IdentityHonoured is false when the origin answered Accept-Encoding:
	// identity with a compressed body. Offload asks for identity; such an
	// origin makes the guest decode anyway.
	IdentityHonoured bool   `json:"identity_honoured"`
	Error            string `json:"error,omitempty"`
}

// fetchEncodings are the Accept-Encoding values asked of a live origin; the
// first is the reference the others are compared with.
var fetchEncodings = []string{"identity", "gzip", "br"}

// newClient never decodes: the transfer sizes are the wire sizes.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:              http.ProxyFromEnvironment,
			DisableCompression: true,
			ForceAttemptHTTP2:  true,
			TLSClientConfig:    &tls.Config{MinVersion: tls.VersionTLS12},
		},
	}
}

// timedGet performs req and reads the whole body, recording time to first
// byte and total time. The body is returned raw; the trailers are in resp.
func timedGet(client *http.Client, req *http.Request) (*http.Response, []byte, time.Duration, time.Duration, error) {
	var first time.Time
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Now() }}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	total := time.Since(start)
	ttfb := time.Duration(0)
	if !first.IsZero() {
		ttfb = first.Sub(start)
	}
	return resp, body, ttfb, total, err
}

// FetchURL fetches rawURL once per Accept-Encoding of fetchEncodings and
// returns the report and the page to run the guest modes on (the decoded
// identity response, or the first one that decoded).
func FetchURL(ctx context.Context, client *http.Client, rawURL string, decodedLimit int64) (Fetch, []byte) {
	f := Fetch{URL: rawURL, IdentityHonoured: true}
	var reference []byte
	var page []byte
	for _, ae := range fetchEncodings {
		fr := FetchResponse{AcceptEncoding: ae}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			f.Error = err.Error()
			return f, nil
		}
		req.Header.Set("Accept-Encoding", ae)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		req.Header.Set("User-Agent", "ssatd-measure")
		resp, raw, ttfb, total, err := timedGet(client, req)
		if err != nil {
			fr.Error = err.Error()
			f.Responses = append(f.Responses, fr)
			continue
		}
		fr.Status = resp.StatusCode
		fr.TransferBytes = int64(len(raw))
		fr.TTFBMS, fr.TotalMS = ms(ttfb), ms(total)
		ce := resp.Header.Get("Content-Encoding")
		coding, ok := compress.ParseContentEncoding(ce)
		fr.ContentEncoding = string(coding)
		if !ok {
			fr.ContentEncoding = ce
			fr.Error = fmt.Sprintf("Content-Encoding %q is not one the guest decodes", ce)
		}
		if ae == "identity" && coding != compress.Identity {
			f.IdentityHonoured = false
		}
		if ok {
			dec, err := compress.NewReader(coding, bytes.NewReader(raw), decodedLimit)
			var plain []byte
			if err == nil {
				plain, err = io.ReadAll(dec)
				dec.Close()
			}
			if err != nil {
				fr.Error = fmt.Sprintf("decode %s: %v", coding, err)
			} else {
				fr.DecodedBytes = int64(len(plain))
				if reference == nil && ae == "identity" {
					reference = plain
				}
				if page == nil {
					page = plain
				}
				if reference != nil {
					fr.SameAsIdentity = bytes.Equal(plain, reference)
					if !fr.SameAsIdentity {
						fr.DifferingBytes = differingBytes(plain, reference)
					}
				}
			}
		}
		f.Responses = append(f.Responses, fr)
	}
	if reference != nil {
		page = reference
	}
	if page == nil && f.Error == "" {
		f.Error = "no response could be decoded"
		for _, r := range f.Responses {
			if r.Error != "" {
				f.Error += ": " + r.AcceptEncoding + ": " + r.Error
				break
			}
		}
	}
	return f, page
}

// pageFromURL names the page of a fetched URL for the guest modes.
func pageFromURL(rawURL string, body []byte) (Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Page{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return Page{}, fmt.Errorf("%q is not an http(s) URL", rawURL)
	}
	return Page{Name: rawURL, Path: u.RequestURI(), Body: body, Origin: u.Scheme + "://" + u.Host}, nil
}

func writeFetchTable(w io.Writer, fetches []Fetch) {
	fmt.Fprintln(w, "live origin (client with transparent decompression off; transfer = body bytes received)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "url\tasked\tstatus\tcontent-encoding\ttransfer B\tdecoded B\tttfb ms\ttotal ms\tsame as identity\t")
	for _, f := range fetches {
		// A failed fetch is reported under the table: its error text in a
		// column would stretch the column for every other row.
		for _, r := range f.Responses {
			same := "yes"
			switch {
			case r.Error != "":
				same = "ERROR: " + r.Error
			case !r.SameAsIdentity:
				same = fmt.Sprintf("no: %d bytes differ", r.DifferingBytes)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t\n", f.URL, r.AcceptEncoding, r.Status, r.ContentEncoding,
				group(r.TransferBytes), group(r.DecodedBytes), r.TTFBMS, r.TotalMS, same)
		}
	}
	tw.Flush()
	for _, f := range fetches {
		if f.Error != "" {
			fmt.Fprintf(w, "ERROR: %s: %s\n", f.URL, f.Error)
			continue
		}
		if !f.IdentityHonoured {
			got := ""
			for _, r := range f.Responses {
				if r.AcceptEncoding == "identity" {
					got = r.ContentEncoding
				}
			}
			fmt.Fprintf(w, "NOTE: %s ignored Accept-Encoding: identity and sent %s: with offload the guest still has to decode this origin's pages\n", f.URL, strings.TrimSpace(got))
		}
	}
}

// simulatedMark follows a table figure that was simulated rather than
// measured on what the origin sent.
const simulatedMark = "*"

func noMark(string) string { return "" }

// simMark is simulatedMark when coding c of p was simulated.
func (p PageResult) simMark(c string) string {
	if slices.Contains(p.SimulatedOrigin, c) {
		return simulatedMark
	}
	return ""
}

// MarkSimulated marks, on each page measured from a fetched URL, the origin
// codings the origin did not send when asked (deflate is never asked) and
// the modes that start from them: their figures come from encoding the
// identity page at the -origin-* levels, not from what the origin sends.
func MarkSimulated(pages []PageResult, fetches []Fetch) {
	for i := range pages {
		p := &pages[i]
		for _, f := range fetches {
			if f.URL != p.Name {
				continue
			}
			sent := map[string]bool{}
			for _, r := range f.Responses {
				if r.Error == "" && r.ContentEncoding == r.AcceptEncoding {
					sent[r.AcceptEncoding] = true
				}
			}
			p.SimulatedOrigin = nil
			for _, c := range originCodings {
				if !sent[string(c)] {
					p.SimulatedOrigin = append(p.SimulatedOrigin, string(c))
				}
			}
			for _, m := range Modes {
				if mr, ok := p.Modes[m.Name]; ok && slices.Contains(p.SimulatedOrigin, string(m.In)) {
					mr.Simulated = true
					p.Modes[m.Name] = mr
				}
			}
		}
	}
}

// simulatedLines say, per page, which figures are simulated and why.
func simulatedLines(pages []PageResult) []string {
	var lines []string
	for _, p := range pages {
		var asked []string
		for _, c := range p.SimulatedOrigin {
			if slices.Contains(fetchEncodings, c) {
				asked = append(asked, c)
			}
		}
		if len(p.SimulatedOrigin) == 0 {
			continue
		}
		why := "deflate is never asked of the origin"
		if len(asked) > 0 {
			why = fmt.Sprintf("the origin did not answer Accept-Encoding: %s with that coding, and %s", strings.Join(asked, ", "), why)
		}
		lines = append(lines, fmt.Sprintf("note: %s: origin %s and the modes starting from them are SIMULATED (marked %s): %s, so they are the identity page encoded at the -origin-* levels",
			p.Name, strings.Join(p.SimulatedOrigin, ", "), simulatedMark, why))
	}
	return lines
}
