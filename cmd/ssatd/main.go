// Command ssatd is a streaming reverse proxy that does for a publisher's
// pages what a Fastly Compute guest does on the SSAT path. See README.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: ssatd <command> [flags]

commands:
  serve -config FILE [-ready-file PATH]
                              run the daemon (SSATD_CONFIG may name the file)
  config check -config FILE   validate a configuration and print the effective one
  config convert -config FILE write a Trusted Server file in ssatd's format (docs/trusted-server.md)
  measure -pages DIR | -url URL | -proxy URL -url PATH
                              measure what compression costs (see docs/measuring.md)
  demo [-tls]                 run a demo origin, a demo bidder and two proxies (mirror, offload) locally
  dev-cert [-dir DIR]         create a local CA and a certificate for localhost (HTTPS in development)
  demo-origin                 run the demo origin alone
  demo-bidder                 run the mock Prebid Server (OpenRTB) alone
  verify -url BASE [-path P]... [-origin HOST]
                              check a running deployment against SSAT behaviour (docs/testing.md)
  keys init -dir DIR          create the first request-signing key in a key directory
  healthcheck                 probe a running daemon's /healthz (for container health checks)
  version                     print the version, commit and date

` + envUsage

// envUsage is shared by the top-level usage and that of serve and config
// check, the commands that read the configuration.
const envUsage = `environment:
  SSATD_CONFIG                configuration file when -config is not given
  SSATD_<SECTION>_<KEY>       override a scalar or list key of the file, e.g.
                              SSATD_PUBLISHER_ORIGIN_URL=https://origin.example.com,
                              SSATD_SERVER_TRUSTED_PROXIES=10.0.0.0/8,192.0.2.1
                              (slots, static bids and targeting are set in the file only)
  SSATD_CONFIG_FORMAT         ssatd or trusted-server, as -config-format
  TRUSTED_SERVER__<SECTION>__<KEY>
                              override a key of a Trusted Server file, upstream's
                              way: nested with __, JSON for arrays and tables, e.g.
                              TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT='[{...}]'
  SSATD_LOG_FORMAT            json (default) or console
  SSATD_LOG_LEVEL             debug, info (default), warn, error
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal starts the graceful drain, restore the
		// default handling so that a second Ctrl-C quits at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// run is the whole command line, testable without a process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr, environ)
	case "config":
		switch {
		case len(args) >= 2 && args[1] == "check":
			return cmdConfigCheck(args[2:], stdout, stderr, environ)
		case len(args) >= 2 && args[1] == "convert":
			return cmdConfigConvert(args[2:], stdout, stderr, environ)
		}
		fmt.Fprint(stderr, "ssatd config: the sub-commands are \"check\" and \"convert\"\n\n"+usage)
		return 2
	case "measure":
		return cmdMeasure(ctx, args[1:], stdout, stderr, environ)
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr, environ)
	case "dev-cert":
		return cmdDevCert(args[1:], stdout, stderr)
	case "demo-origin":
		return cmdDemoOrigin(ctx, args[1:], stdout, stderr, environ)
	case "demo-bidder":
		return cmdDemoBidder(ctx, args[1:], stdout, stderr, environ)
	case "verify":
		return cmdVerify(ctx, args[1:], stdout, stderr, environ)
	case "keys":
		return cmdKeys(args[1:], stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], stdout, stderr, environ)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "ssatd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// parseFlags parses a sub-command's flags; no sub-command takes positional
// arguments, so one is a usage error. A help request (-h, -help) is not: as
// for `ssatd -h`, the usage goes to stdout and the exit status is 0. The
// flag set is named after the sub-command and its Usage must write to
// fs.Output().
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil && fs.NArg() > 0:
		fmt.Fprintf(stderr, "ssatd %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return 2, false
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(msg.Bytes())
		return 0, false
	}
	_, _ = stderr.Write(msg.Bytes())
	return 2, false
}

func lookupEnv(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if len(environ[i]) > len(key) && environ[i][:len(key)+1] == key+"=" {
			return environ[i][len(key)+1:]
		}
	}
	return ""
}
