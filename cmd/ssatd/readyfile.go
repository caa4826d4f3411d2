package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
)

// readyFileFlag declares serve's -ready-file.
func readyFileFlag(path *string) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.StringVar(path, "ready-file", "", "write the bound client and admin addresses to this JSON file once they accept connections; removed on exit (docs/testing.md)")
	}
}

// bindZeroPorts binds, before the guest is built, each listen address
// whose port is 0, and puts the bound address in the configuration: the
// guest keeps a client's port in links only when server.listen names it
// (docs/behaviour.md, "URL rewriting"), so it must know the port the
// system chose. Other addresses are bound by run as usual.
func bindZeroPorts(cfg *config.Config) (*listeners, error) {
	ls := &listeners{}
	for _, l := range []struct {
		key  string
		addr *string
		ln   *net.Listener
	}{
		{"server.listen", &cfg.Server.Listen, &ls.client},
		{"server.admin_listen", &cfg.Server.AdminListen, &ls.admin},
	} {
		if _, port, err := net.SplitHostPort(*l.addr); err != nil || port != "0" {
			continue
		}
		ln, err := net.Listen("tcp", *l.addr)
		if err != nil {
			ls.closeBound()
			return nil, fmt.Errorf("listen on %s %q: %w", l.key, *l.addr, err)
		}
		*l.ln, *l.addr = ln, ln.Addr().String()
	}
	return ls, nil
}

func (ls *listeners) closeBound() {
	for _, l := range []net.Listener{ls.client, ls.admin} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// readyInfo is the -ready-file's content (docs/testing.md, "From a
// shell"): the addresses as bound, so a port configured as 0 is the one
// the system chose.
type readyInfo struct {
	Client    string `json:"client"`     // host:port
	Admin     string `json:"admin"`      // host:port
	ClientURL string `json:"client_url"` // https://host:port with server.tls_cert_file, else http://; loopback for a wildcard listener (dialable)
	AdminURL  string `json:"admin_url"`  // always http://: the admin listener has no TLS
	PID       int    `json:"pid"`
}

// dialable is a's host:port as a client on this machine reaches it: a
// listener on every address (listen = ":8443", "0.0.0.0:0", "[::]:0";
// Go reports a dual-stack one as [::]) is named by the loopback address
// of its family. "https://[::]:8443" matched no name of a certificate
// (ssatd dev-cert's are localhost, 127.0.0.1 and ::1), so curl refused
// it, and browsers do not navigate to an unspecified address.
func dialable(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || !ap.Addr().IsUnspecified() {
		return a.String()
	}
	loop := netip.IPv6Loopback()
	if ap.Addr().Is4() {
		loop = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return netip.AddrPortFrom(loop, ap.Port()).String()
}

// writeReadyFile writes the file under a temporary name and renames it, so
// that a reader polling for it never sees it half-written.
func (d *daemon) writeReadyFile(ls *listeners) error {
	if d.readyFile == "" {
		return nil
	}
	scheme := "http://"
	if d.cfg.Server.TLS() {
		scheme = "https://"
	}
	info := readyInfo{
		Client: ls.client.Addr().String(), Admin: ls.admin.Addr().String(),
		ClientURL: scheme + dialable(ls.client.Addr()), AdminURL: "http://" + dialable(ls.admin.Addr()),
		PID: os.Getpid(),
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("-ready-file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(d.readyFile), ".ssatd-ready-*")
	if err != nil {
		return fmt.Errorf("-ready-file: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), d.readyFile)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("-ready-file: %w", err)
	}
	d.log.Info("ready file written", zap.String("path", d.readyFile))
	return nil
}

func (d *daemon) removeReadyFile() {
	if d.readyFile == "" {
		return
	}
	if err := os.Remove(d.readyFile); err != nil && !os.IsNotExist(err) {
		d.log.Warn("could not remove the ready file", zap.String("path", d.readyFile), zap.Error(err))
	}
}
