// Package devcert makes a local certificate authority and a certificate
// for localhost signed by it, with crypto/x509 alone, so that ssatd can
// serve HTTPS and HTTP/2 in development as browsers reach a CDN.
package devcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the paths that Write writes in its folder.
type Files struct {
	CACert, CAKey, Cert, Key string
}

// Hosts are the names the certificate is valid for.
var Hosts = []string{"localhost", "127.0.0.1", "::1"}

// leafLifetime stays under the 398 days that browsers accept for a
// server certificate (Chromium and Safari refuse longer ones).
const leafLifetime = 397 * 24 * time.Hour

// FilesIn names the files in dir.
func FilesIn(dir string) Files {
	return Files{
		CACert: filepath.Join(dir, "ca.pem"), CAKey: filepath.Join(dir, "ca-key.pem"),
		Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem"),
	}
}

// Write issues a new certificate for Hosts in dir, signed by the CA in
// dir, which it creates first when dir has none (so a CA already trusted
// stays trusted). caCreated says whether it did.
func Write(dir string, now time.Time) (f Files, caCreated bool, err error) {
	f = FilesIn(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, false, fmt.Errorf("dev-cert folder: %w", err)
	}
	ca, caKey, err := loadCA(f)
	if errors.Is(err, os.ErrNotExist) {
		ca, caKey, err = newCA(f, now)
		caCreated = true
	}
	if err != nil {
		return f, false, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, caCreated, fmt.Errorf("certificate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost", Organization: []string{"ssatd development"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return f, caCreated, fmt.Errorf("sign the certificate: %w", err)
	}
	if err := writePEM(f.Cert, "CERTIFICATE", der, 0o644); err != nil {
		return f, caCreated, err
	}
	return f, caCreated, writeKey(f.Key, key)
}

func newCA(f Files, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "ssatd development CA " + host, Organization: []string{"ssatd development"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create the CA: %w", err)
	}
	if err := writeKey(f.CAKey, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(f.CACert, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func loadCA(f Files) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	pair, err := tls.LoadX509KeyPair(f.CACert, f.CAKey)
	if err != nil {
		if _, statErr := os.Stat(f.CACert); errors.Is(statErr, os.ErrNotExist) {
			return nil, nil, statErr
		}
		return nil, nil, fmt.Errorf("the CA in %s: %w", filepath.Dir(f.CACert), err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("the CA in %s: %w", f.CACert, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !ca.IsCA {
		return nil, nil, fmt.Errorf("%s is not a CA made by ssatd dev-cert; remove it or use another folder", f.CACert)
	}
	return ca, key, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
