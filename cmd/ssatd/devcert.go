package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/devcert"
)

// defaultCertDir is where dev-cert and demo -tls keep the local CA, so
// that a CA trusted once stays trusted across runs.
func defaultCertDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "ssatd-dev-cert"
	}
	return filepath.Join(dir, "ssatd", "dev-cert")
}

func cmdDevCert(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dev-cert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", defaultCertDir(), "folder for the CA and the certificate (the CA in it is reused)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ssatd dev-cert [-dir DIR]\n\nCreates a local certificate authority (once) and a certificate for %s signed by it,\nfor server.tls_cert_file and server.tls_key_file in development.\n", strings.Join(devcert.Hosts, ", "))
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	f, created, err := devcert.Write(*dir, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "ssatd dev-cert: %v\n", err)
		return 1
	}
	printDevCert(stdout, f, created)
	return 0
}

func printDevCert(w io.Writer, f devcert.Files, created bool) {
	ca := "reused the local CA"
	if created {
		ca = "created a local CA"
	}
	fmt.Fprintf(w, `ssatd dev-cert: %s and issued a certificate for %s.

  CA certificate  %s
  CA key          %s   (keep it private: it can sign for any name)
  certificate     %s
  key             %s

Serve HTTPS and HTTP/2 with it:
  [server]
  tls_cert_file = %q
  tls_key_file = %q

Trust the CA (once; browsers then accept https://localhost):
  Debian, Ubuntu:  sudo cp %s /usr/local/share/ca-certificates/ssatd-dev-ca.crt && sudo update-ca-certificates
  Fedora, RHEL:    sudo cp %s /etc/pki/ca-trust/source/anchors/ssatd-dev-ca.pem && sudo update-ca-trust
  macOS:           sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain %s
  Windows:         certutil -addstore -f ROOT %s
  Chrome, Firefox on Linux (NSS):  certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n ssatd-dev-ca -i %s
  curl:            curl --cacert %s https://localhost:8443/
`, ca, strings.Join(devcert.Hosts, ", "), f.CACert, f.CAKey, f.Cert, f.Key, f.Cert, f.Key,
		f.CACert, f.CACert, f.CACert, f.CACert, f.CACert, f.CACert)
}
