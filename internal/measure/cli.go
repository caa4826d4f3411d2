package measure

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/cputime"
)

const usage = `usage:
  ssatd measure -pages DIR [-config FILE] [-runs 5] [-format table|json|csv] [-out FILE]
                [-chart FILE.svg] [-origin-gzip-level 6] [-origin-brotli-quality 5]
  ssatd measure -url URL [-url URL ...] [same flags]           live origins
  ssatd measure -proxy URL[,URL...] -url PATH [-host HOST] [-runs 5] [-format ...] [-out FILE]
                [-browser [-network none,slow-4g] [-chrome PATH]]
                                                               a running daemon

See docs/measuring.md.

`

// urlList is a repeatable -url flag.
type urlList []string

func (u *urlList) String() string     { return strings.Join(*u, ",") }
func (u *urlList) Set(v string) error { *u = append(*u, v); return nil }

// BrowserCommand is the command with -browser, the one Command.Launch is
// set in (cmd/ssatd-measure).
const BrowserCommand = "ssatd-measure"

// Command is the measure command as one binary has it.
type Command struct {
	// Name names the command in its usage and messages.
	Name string
	// Launch starts the browser of -browser (chromium.Launch). It is nil
	// in ssatd, which serves and so links no browser tooling: there
	// -browser is a usage error that names BrowserCommand.
	Launch Launcher
}

// Main is `ssatd measure`: Command without -browser.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	return Command{Name: "ssatd measure"}.Main(ctx, args, stdout, stderr, environ)
}

// Main runs the command: 0 when every output is equivalent, 1 when one is
// not (or the measurement failed), 2 for bad usage.
func (cmd Command) Main(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	name := cmd.Name
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), strings.ReplaceAll(usage, "ssatd measure ", name+" "))
		if cmd.Launch == nil {
			fmt.Fprintf(fs.Output(), "  (-browser is in %s: %s)\n\n", BrowserCommand, browserInstall)
		}
		fmt.Fprint(fs.Output(), "flags:\n")
		fs.PrintDefaults()
	}
	var (
		pages, cfgPath, format, outPath, chartPath, proxyURL, host string
		networks, chrome                                           string
		runs, gzipLevel, brQuality                                 int
		timeout                                                    time.Duration
		urls                                                       urlList
		browse                                                     bool
	)
	fs.StringVar(&pages, "pages", "", "measure every *.html page of this folder")
	fs.Var(&urls, "url", "a live origin URL to fetch and measure (repeatable); with -proxy, the page path to request")
	fs.StringVar(&proxyURL, "proxy", "", "measure running deployments at these comma-separated base URLs, side by side: ssatd with debug.diagnostics_headers, or Trusted Server answering ?__ts_ssat_compression with x-ts-ssat-* headers")
	fs.StringVar(&host, "host", "", "with -proxy: the Host header to send (default: publisher.domain of -config, else the proxy's host)")
	fs.StringVar(&cfgPath, "config", "", "guest configuration (slots, auction, compression, delivery levels); default: one slot on every path, empty bids")
	fs.IntVar(&runs, "runs", 5, "timed runs per mode (median reported), after one warm-up run")
	fs.StringVar(&format, "format", "table", "output format: table, json or csv")
	fs.StringVar(&outPath, "out", "", "write the report to this file instead of stdout")
	fs.StringVar(&chartPath, "chart", "", "also write an SVG bar chart (guest CPU per mode, bytes per page) to this file")
	fs.IntVar(&gzipLevel, "origin-gzip-level", 6, "gzip and deflate level of the simulated origin")
	fs.IntVar(&brQuality, "origin-brotli-quality", 5, "br quality of the simulated origin (window 22)")
	fs.DurationVar(&timeout, "timeout", 60*time.Second, "timeout of each HTTP request (-url, -proxy) and of each browser load (-browser)")
	fs.BoolVar(&browse, "browser", false, "with -proxy: also load the page per mode and client coding in headless Chromium, and report TTFB, FCP and LCP")
	fs.StringVar(&networks, "network", "none,slow-4g", "with -browser: the emulated networks, comma-separated, of "+networkNames())
	fs.StringVar(&chrome, "chrome", "", "with -browser: the Chromium binary (default: the first of "+strings.Join(chromiumNames, ", ")+" on PATH)")
	// A help request is answered on stdout with status 0, a usage error
	// on stderr with status 2, as by the other commands.
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			_, _ = stdout.Write(msg.Bytes())
			return 0
		}
		_, _ = stderr.Write(msg.Bytes())
		return 2
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, name+": "+format+"\n\n", a...)
		fs.Usage()
		return 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	switch format {
	case "table", "json", "csv":
	default:
		return bad("-format must be table, json or csv, not %q", format)
	}
	if runs < 1 {
		return bad("-runs must be at least 1")
	}
	if r := compress.GzipLevels; !r.Contains(gzipLevel) {
		return bad("-origin-gzip-level must be %d..%d, got %d", r.Min, r.Max, gzipLevel)
	}
	if r := compress.BrotliQualities; !r.Contains(brQuality) {
		return bad("-origin-brotli-quality must be %d..%d, got %d", r.Min, r.Max, brQuality)
	}
	forms := 0
	for _, set := range []bool{pages != "", proxyURL != "", len(urls) > 0 && proxyURL == ""} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return bad("give exactly one of -pages DIR, -url URL, or -proxy URL -url PATH")
	}
	if proxyURL != "" && len(urls) != 1 {
		return bad("-proxy needs exactly one -url PATH")
	}
	if proxyURL != "" && chartPath != "" {
		return bad("-chart goes with -pages or -url")
	}
	var bo *BrowserOptions
	if msg, code := browserFlags(fs, cmd.Launch, browse, proxyURL, format, networks, chrome, runs, timeout, &bo); code != 0 {
		if code == 2 {
			return bad("%s", msg)
		}
		fmt.Fprintf(stderr, name+": %s\n", msg)
		return code
	}

	var cfg *config.Config
	if cfgPath != "" {
		c, err := config.Load(cfgPath, environ)
		if err != nil {
			fmt.Fprintf(stderr, name+": %s: %v\n", cfgPath, err)
			return 1
		}
		cfg = c
	}
	client := newClient(timeout)

	if proxyURL != "" {
		if host == "" && cfg != nil {
			host = cfg.Publisher.Domain
		}
		var rep formats
		var problems []string
		if proxies := strings.Split(proxyURL, ","); len(proxies) > 1 {
			c, err := Compare(ctx, client, proxies, urls[0], host, runs)
			if err != nil {
				fmt.Fprintf(stderr, name+": %v\n", err)
				return 1
			}
			if err := browseAll(ctx, bo, c.Deployments, urls[0], host); err != nil {
				fmt.Fprintf(stderr, name+": %v\n", err)
				return 1
			}
			rep, problems = c, c.Problems()
		} else {
			d, err := Daemon(ctx, client, proxyURL, urls[0], host, runs)
			if err != nil {
				fmt.Fprintf(stderr, name+": %v\n", err)
				return 1
			}
			if err := browseAll(ctx, bo, []*DaemonReport{d}, urls[0], host); err != nil {
				fmt.Fprintf(stderr, name+": %v\n", err)
				return 1
			}
			rep, problems = d, d.Problems
		}
		if err := emit(stdout, outPath, inFormat(rep, format)); err != nil {
			fmt.Fprintf(stderr, name+": %v\n", err)
			return 1
		}
		if len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintf(stderr, name+": %s\n", p)
			}
			return 1
		}
		return 0
	}

	opts := Options{Runs: runs, OriginGzipLevel: gzipLevel, OriginBrotliQuality: brQuality, Config: cfg}
	rep := &Report{Settings: settings(opts, cfgPath)}
	var input []Page
	code := 0
	if pages != "" {
		var err error
		input, err = readPages(pages)
		if err != nil {
			fmt.Fprintf(stderr, name+": %v\n", err)
			return 1
		}
	} else {
		limit := int64(64 << 20)
		if cfg != nil {
			limit = cfg.Publisher.MaxDecodedBodyBytes
		}
		for _, u := range urls {
			f, body := FetchURL(ctx, client, u, limit)
			rep.Fetches = append(rep.Fetches, f)
			if body == nil {
				fmt.Fprintf(stderr, name+": %s: %s\n", u, f.Error)
				code = 1
				continue
			}
			if !f.IdentityHonoured {
				fmt.Fprintf(stderr, name+": note: %s ignored Accept-Encoding: identity\n", u)
			}
			p, err := pageFromURL(u, body)
			if err != nil {
				fmt.Fprintf(stderr, name+": %v\n", err)
				code = 1
				continue
			}
			input = append(input, p)
		}
		if len(input) == 0 {
			// Each error is printed above; a table of zeros would only
			// bury them.
			return 1
		}
	}

	progress, done := progressFor(stderr, len(input))
	results, err := Pages(ctx, input, opts, progress)
	done()
	if err != nil {
		fmt.Fprintf(stderr, name+": %v\n", err)
		return 1
	}
	MarkSimulated(results, rep.Fetches)
	rep.Pages = results
	rep.Summary = Summarize(results)
	if err := emit(stdout, outPath, inFormat(rep, format)); err != nil {
		fmt.Fprintf(stderr, name+": %v\n", err)
		return 1
	}
	if chartPath != "" {
		if err := emit(nil, chartPath, rep.WriteChart); err != nil {
			fmt.Fprintf(stderr, name+": chart: %v\n", err)
			return 1
		}
	}
	var fallback []string
	for _, p := range results {
		if p.OriginFrom == originFromFallback {
			fallback = append(fallback, p.Name)
		}
	}
	if len(fallback) > 0 {
		fmt.Fprintf(stderr, name+": note: %d page(s) with no canonical link or og:url (%s) were measured as if their origin were %s, so none of their links was rewritten (give -config to set the origin)\n",
			len(fallback), listNames(fallback), fallbackOrigin)
	}
	for _, p := range results {
		if !p.Eligible && len(p.Modes) > 0 {
			fmt.Fprintf(stderr, name+": note: %s was not SSAT-eligible (no slot matches %s?)\n", p.Name, p.Path)
		}
	}
	if !rep.Summary.AllEquivalent {
		for _, f := range rep.Summary.Failures {
			fmt.Fprintf(stderr, name+": NOT EQUIVALENT: %s\n", f)
		}
		return 1
	}
	if format != "table" || outPath != "" {
		fmt.Fprintln(stderr, rep.Summary.SummaryLine())
	}
	return code
}

func settings(o Options, cfgPath string) Settings {
	c := o.Config
	name := cfgPath
	if c == nil {
		c = config.Defaults()
		name = "default"
	}
	return Settings{
		Runs: o.Runs, CPUClock: cputime.Clock,
		OriginGzipLevel: o.OriginGzipLevel, OriginBrotliQuality: o.OriginBrotliQuality, OriginBrotliWindow: 22,
		GuestGzipLevel: c.Compression.GzipLevel, GuestBrotliQuality: c.Compression.BrotliQuality,
		DeliveryGzipLevel: c.Delivery.GzipLevel, DeliveryBrQuality: c.Delivery.BrotliQuality,
		Config: name,
	}
}

// readPages reads every *.html of dir, sorted by name.
func readPages(dir string) ([]Page, error) {
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("-pages %s: the folder does not exist", dir)
	case err != nil:
		return nil, fmt.Errorf("-pages %s: %w", dir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("-pages %s: not a folder", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, errNoPages)
	}
	sort.Strings(files)
	pages := make([]Page, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		name := filepath.Base(f)
		pages = append(pages, Page{Name: name, Path: "/" + name, Body: b})
	}
	return pages, nil
}

// emit writes through write to path, or to stdout when path is "". The file
// is written whole or not at all.
func emit(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// formats is what both reports (offline pages and a running daemon) can
// write.
type formats interface {
	WriteJSON(io.Writer) error
	WriteCSV(io.Writer) error
	WriteTable(io.Writer) error
}

// inFormat picks the writer of -format.
func inFormat(r formats, format string) func(io.Writer) error {
	switch format {
	case "json":
		return r.WriteJSON
	case "csv":
		return r.WriteCSV
	}
	return r.WriteTable
}
