package measure

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// daemonRow is r's HTTP result for mode and client coding ae, if any.
func (r *DaemonReport) daemonRow(mode, ae string) (DaemonResult, bool) {
	for _, x := range r.Results {
		if x.Mode == mode && x.AcceptEncoding == ae {
			return x, true
		}
	}
	return DaemonResult{}, false
}

// browserProblems are the loads that did not answer 200.
func (r *DaemonReport) browserProblems() []string {
	if r.Browser == nil {
		return nil
	}
	var out []string
	for _, l := range r.Browser.Loads {
		if l.Status != 200 {
			out = append(out, fmt.Sprintf("browser: mode %s, Accept-Encoding %s, network %s: status %d", l.Mode, l.SentAcceptEncoding, l.Network, l.Status))
		}
	}
	return out
}

// browserNotes say where Chromium got another coding than the HTTP client
// for the same mode and client coding: its figures then do not go with
// that row's bytes and CPU.
func (r *DaemonReport) browserNotes() []string {
	var out []string
	for _, l := range r.Browser.Loads {
		if x, ok := r.daemonRow(l.Mode, l.AcceptEncoding); ok && x.DeliveredCoding != l.DeliveredCoding {
			out = append(out, fmt.Sprintf("note: browser: mode %s, network %s: Chromium (Accept-Encoding %s) received %s where the HTTP client (Accept-Encoding %s) received %s",
				l.Mode, l.Network, l.SentAcceptEncoding, l.DeliveredCoding, x.AcceptEncoding, x.DeliveredCoding))
		}
	}
	return out
}

// describe is a profile as the table's heading names it.
func (n NetworkProfile) describe() string {
	if !n.Throttled() {
		return n.Name + " (no emulation)"
	}
	return fmt.Sprintf("%s (%.1f ms latency, %s B/s down, %s B/s up)", n.Name, n.LatencyMS, group(int64(n.DownloadBps)), group(int64(n.UploadBps)))
}

// writeBrowserTable prints the -browser loads of r beside the CPU and
// bytes of its HTTP rows for the same mode and client coding.
func (r *DaemonReport) writeBrowserTable(w io.Writer) {
	b := r.Browser
	if b == nil {
		return
	}
	nets := make([]string, len(b.Networks))
	for i, n := range b.Networks {
		nets[i] = n.describe()
	}
	fmt.Fprintf(w, "browser %s, network %s: median of %d loads after a warm-up, each in a fresh browser context with the cache disabled\n",
		b.Browser, strings.Join(nets, ", "), b.Runs)
	fmt.Fprintln(w, "ms from the navigation's start; ttfb = Navigation Timing responseStart (without the emulated latency), wait = DevTools sendEnd to receiveHeadersEnd (with it)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tclient AE\tnetwork\tstatus\tdelivered coding\ttransfer B\tdecoded B\tttfb\twait\tfcp\tlcp\tresponse end\tload\tvCPU ms\tguest CPU ms\t")
	for _, l := range b.Loads {
		vcpu, cpu := "-", "-"
		if x, ok := r.daemonRow(l.Mode, l.AcceptEncoding); ok {
			vcpu, cpu = fmt.Sprintf("%.0f", x.VCPUMS), guestCPU(x.GuestCPUMS, "-")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%s\t\n", l.Mode, l.AcceptEncoding, l.Network, l.Status,
			l.DeliveredCoding, group(l.TransferBytes), group(l.DecodedBodyBytes), l.TTFBMS, l.WaitMS, l.FCPMS, l.LCPMS, l.ResponseEndMS, l.LoadMS, vcpu, cpu)
	}
	tw.Flush()
	for _, n := range r.browserNotes() {
		fmt.Fprintln(w, n)
	}
}

// browserInstall says how to get BrowserCommand.
const browserInstall = "go install github.com/ssatd/ssatd/cmd/ssatd-measure@latest, or go build ./cmd/ssatd-measure in a checkout"

// browserFlags checks -browser, -network and -chrome together, before any
// measuring, and sets *bo when -browser is on. It returns a message and 2
// for a usage error (-browser where launch is nil is one), 1 when no
// Chromium is found, else "" and 0.
func browserFlags(fs *flag.FlagSet, launch Launcher, browse bool, proxyURL, format, networks, chrome string, runs int, timeout time.Duration, bo **BrowserOptions) (string, int) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !browse {
		for _, name := range []string{"network", "chrome"} {
			if set[name] {
				return "-" + name + " goes with -browser", 2
			}
		}
		return "", 0
	}
	switch {
	case proxyURL == "":
		return "-browser goes with -proxy URL -url PATH", 2
	case format == "csv":
		return "-browser reports in -format table or json, not csv", 2
	case timeout <= 0:
		return "-timeout must be positive with -browser", 2
	}
	nets, err := ParseNetworks(networks)
	if err != nil {
		return err.Error(), 2
	}
	if launch == nil {
		return fmt.Sprintf("-browser is not in this binary, which serves pages and so links no browser tooling; run %s with the same flags (%s)", BrowserCommand, browserInstall), 2
	}
	bin, err := FindChromium(chrome)
	if err != nil {
		if chrome != "" {
			return err.Error(), 2
		}
		return err.Error(), 1
	}
	*bo = &BrowserOptions{Launch: launch, ExecPath: bin, Networks: nets, Runs: runs, Timeout: timeout}
	return "", 0
}

// browseAll loads the page of each deployment in Chromium when bo is set,
// and adds what the loads show went wrong to the deployment's problems.
func browseAll(ctx context.Context, bo *BrowserOptions, deployments []*DaemonReport, path, host string) error {
	if bo == nil {
		return nil
	}
	for _, d := range deployments {
		run, err := Browse(ctx, d.Proxy, path, host, *bo)
		if err != nil {
			return fmt.Errorf("-browser: %s: %w", d.Proxy, err)
		}
		d.Browser = run
		d.Problems = append(d.Problems, d.browserProblems()...)
	}
	return nil
}
