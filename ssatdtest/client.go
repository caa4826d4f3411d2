package ssatdtest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
)

// newClient is the client of Server.Client: over TLS it trusts exactly
// the daemon's certificate (the one in server.tls_cert_file), whatever
// names it holds, as httptest.Server.Client trusts its own.
func newClient(cert *tls.Certificate) *http.Client {
	tr := &http.Transport{ForceAttemptHTTP2: true}
	if cert != nil && len(cert.Certificate) > 0 {
		want := cert.Certificate[0]
		tr.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The chain is checked by VerifyConnection below: the
			// daemon's certificate itself is the trust anchor.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, want) {
					return errors.New("ssatdtest: the server's certificate is not the daemon's")
				}
				return nil
			},
		}
	}
	return &http.Client{Transport: tr}
}

// Client is an HTTP client for the daemon: over TLS it trusts the daemon's
// certificate and speaks HTTP/2 when the daemon offers it. Its connections
// are closed when the daemon stops. Like any http.Client it decodes a gzip
// body it asked for itself; set Accept-Encoding to see the bytes as sent.
func (s *Server) Client() *http.Client { return s.client }

// NavigationRequest is a GET of url as a browser sends it when the user
// navigates to a page (Accept with text/html, Sec-Fetch-Dest: document,
// Sec-Fetch-Mode: navigate, Sec-Fetch-Site: none, Sec-Fetch-User: ?1): the
// request ssatd makes eligible for the ad stack (docs/behaviour.md,
// "Eligibility"). Add headers to it before sending, e.g. a Cookie.
func NavigationRequest(url string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	h.Set("Sec-Fetch-Dest", "document")
	h.Set("Sec-Fetch-Mode", "navigate")
	h.Set("Sec-Fetch-Site", "none")
	h.Set("Sec-Fetch-User", "?1")
	return req, nil
}

// Navigate requests path (with its query) from the daemon as a browser
// navigation (NavigationRequest) with Client, and returns the response
// with its whole body, decoded, the body already closed.
func (s *Server) Navigate(path string) (*http.Response, []byte, error) {
	req, err := NavigationRequest(s.URL + path)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}
