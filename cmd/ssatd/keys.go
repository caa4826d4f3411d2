package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ssatd/ssatd/internal/signing"
)

// cmdKeys is `ssatd keys init -dir DIR`: the first request-signing key in
// a key directory (docs/behaviour.md, "Request signing").
func cmdKeys(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "init" {
		fmt.Fprint(stderr, "ssatd keys: the sub-command is \"init\"\n\n"+usage)
		return 2
	}
	fs := flag.NewFlagSet("keys init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "the key directory (request_signing.key_dir); created if missing")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: ssatd keys init -dir DIR\n\nCreates the first Ed25519 request-signing key in DIR, unless it holds one already.\nMore keys come from POST /_ts/admin/keys/rotate.\n")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args[1:], stdout, stderr); !ok {
		return code
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "ssatd keys init: -dir is required")
		fs.Usage()
		return 2
	}
	kid, created, err := signing.Init(*dir, time.Now)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd keys init: %v\n", err)
		return 1
	}
	if !created {
		fmt.Fprintf(stdout, "ssatd keys init: %s already holds the current key %s; nothing created\n", *dir, kid)
		return 0
	}
	fmt.Fprintf(stdout, `ssatd keys init: created key %s in %s.

Sign bid requests with it:
  [request_signing]
  enabled = true
  key_dir = %q
`, kid, *dir, *dir)
	return 0
}
