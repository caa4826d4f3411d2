package config

import (
	"crypto/tls"
	"fmt"
	"os"
)

// TLS reports whether server.listen serves HTTPS.
func (s *ServerConfig) TLS() bool { return s.TLSCertificate != nil }

// validateTLS loads the certificate pair, so that a missing file, a
// file that is not PEM or a key that does not belong to the certificate
// is a configuration problem naming its key, found by config check
// rather than at the first handshake.
func (c *Config) validateTLS(p *problems) {
	s := &c.Server
	s.TLSCertificate = nil
	switch {
	case s.TLSCertFile == "" && s.TLSKeyFile != "":
		p.addf("server.tls_cert_file", "must be set with server.tls_key_file (%q)", s.TLSKeyFile)
	case s.TLSCertFile != "" && s.TLSKeyFile == "":
		p.addf("server.tls_key_file", "must be set with server.tls_cert_file (%q)", s.TLSCertFile)
	case s.TLSCertFile != "":
		if cert, ok := loadPair(p, s.TLSCertFile, s.TLSKeyFile); ok {
			s.TLSCertificate = cert
		}
	}
	if s.TLSRedirectPort != 0 {
		switch {
		case s.TLSRedirectPort < 1 || s.TLSRedirectPort > 65535:
			p.addf("server.tls_redirect_port", "%d is not a TCP port (1-65535); 0 redirects to server.listen's port", s.TLSRedirectPort)
		case s.HTTPRedirectListen == "":
			p.addf("server.tls_redirect_port", "needs server.http_redirect_listen: it is the port that listener's redirects name")
		}
	}
	if s.HTTPRedirectListen == "" {
		return
	}
	checkListen(p, "server.http_redirect_listen", s.HTTPRedirectListen)
	if s.TLSCertFile == "" {
		p.addf("server.http_redirect_listen", "needs server.tls_cert_file and server.tls_key_file: it redirects to the HTTPS listener, and without them server.listen serves plain HTTP")
	}
	r, okR := parseListen(s.HTTPRedirectListen)
	for _, other := range []struct{ key, addr string }{{"server.listen", s.Listen}, {"server.admin_listen", s.AdminListen}} {
		if o, ok := parseListen(other.addr); ok && okR && r.port == o.port && r.sharesHostWith(o.host, true) {
			p.addf("server.http_redirect_listen", "%q uses the same port as %s %q on an overlapping address: the second listener could not bind; use another port",
				s.HTTPRedirectListen, other.key, other.addr)
		}
	}
}

func loadPair(p *problems, certFile, keyFile string) (*tls.Certificate, bool) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		p.addf("server.tls_cert_file", "%w", err)
	}
	keyPEM, kerr := os.ReadFile(keyFile)
	if kerr != nil {
		p.addf("server.tls_key_file", "%w", kerr)
	}
	if err != nil || kerr != nil {
		return nil, false
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		p.addf("server.tls_cert_file", "%w", fmt.Errorf("with server.tls_key_file %q: %w", keyFile, err))
		return nil, false
	}
	return &cert, true
}
