package measure

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"text/tabwriter"
)

// Comparison is `measure -proxy A,B,...`: the same page measured on each
// deployment (a Fastly staging service running Trusted Server, ssatd), in
// one run, so that their rows sit side by side.
type Comparison struct {
	Path        string          `json:"path"`
	Runs        int             `json:"runs"`
	Deployments []*DaemonReport `json:"deployments"`
}

// Compare measures each deployment in turn with Daemon.
func Compare(ctx context.Context, client *http.Client, proxies []string, path, host string, runs int) (*Comparison, error) {
	c := &Comparison{Path: path, Runs: runs}
	for _, p := range proxies {
		rep, err := Daemon(ctx, client, p, path, host, runs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		c.Deployments = append(c.Deployments, rep)
	}
	return c, nil
}

// Problems are every deployment's.
func (c *Comparison) Problems() []string {
	var out []string
	for _, d := range c.Deployments {
		for _, p := range d.Problems {
			out = append(out, d.Proxy+": "+p)
		}
	}
	return out
}

// sameAsFirstDeployment: the decoded page of row i equals the first
// deployment's for the same mode and client coding.
func (c *Comparison) sameAsFirstDeployment(d, i int) string {
	a, b := c.Deployments[0].Results, c.Deployments[d].Results
	if i >= len(a) || i >= len(b) || a[i].BodySHA256 == "" || b[i].BodySHA256 == "" {
		return "-"
	}
	if a[i].BodySHA256 == b[i].BodySHA256 {
		return "same"
	}
	return "differs"
}

// WriteTable prints one row per mode and client coding, and per
// deployment its CPU, bytes and codings, then whether its decoded page is
// the first deployment's.
func (c *Comparison) WriteTable(w io.Writer) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "page %s: median of %d requests after a warm-up, per deployment\n", c.Path, c.Runs)
	for i, d := range c.Deployments {
		set := "-"
		if len(d.Results) > 0 {
			set = d.Results[0].Headers
		}
		fmt.Fprintf(bw, "  [%d] %s (%s headers)\n", i+1, d.Proxy, set)
	}
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "mode\tclient AE\t")
	for i := range c.Deployments {
		fmt.Fprintf(tw, "[%d] processing ms\t[%d] vCPU ms\t[%d] processed B\t[%d] origin/output/delivered\t[%d] delivered B\t", i+1, i+1, i+1, i+1, i+1)
		if i > 0 {
			fmt.Fprintf(tw, "[%d] page vs [1]\t", i+1)
		}
	}
	fmt.Fprintln(tw)
	for r, x := range c.Deployments[0].Results {
		fmt.Fprintf(tw, "%s\t%s\t", x.Mode, x.AcceptEncoding)
		for i, d := range c.Deployments {
			if r >= len(d.Results) {
				fmt.Fprint(tw, "-\t-\t-\t-\t-\t")
				continue
			}
			y := d.Results[r]
			fmt.Fprintf(tw, "%.3f\t%.0f\t%s\t%s/%s/%s\t%s\t", y.ProcessingMS, y.VCPUMS, group(y.ProcessedBytes),
				dash(y.OriginCoding), dash(y.OutputCoding), y.DeliveredCoding, group(y.DeliveredBytes))
			if i > 0 {
				fmt.Fprintf(tw, "%s\t", c.sameAsFirstDeployment(i, r))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for i, d := range c.Deployments {
		if d.Browser != nil {
			fmt.Fprintf(bw, "[%d] %s in a browser:\n", i+1, d.Proxy)
			d.writeBrowserTable(bw)
		}
	}
	for _, p := range c.Problems() {
		fmt.Fprintf(bw, "PROBLEM: %s\n", p)
	}
	return bw.err
}

// WriteJSON writes the comparison as JSON.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"comparison": c})
}

// WriteCSV writes one row per deployment, mode and client coding.
func (c *Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"deployment", "headers", "mode", "accept_encoding", "status", "origin_coding", "output_coding", "delivery",
		"delivered_coding", "delivered_bytes", "decoded_bytes", "processed_bytes", "processing_ms", "vcpu_ms", "same_page_as_first_deployment"})
	for i, d := range c.Deployments {
		for r, x := range d.Results {
			same := "-"
			if i > 0 {
				same = c.sameAsFirstDeployment(i, r)
			}
			_ = cw.Write([]string{d.Proxy, x.Headers, x.Mode, x.AcceptEncoding, strconv.Itoa(x.Status), x.OriginCoding, x.OutputCoding, x.Delivery,
				x.DeliveredCoding, itoa(x.DeliveredBytes), itoa(x.DecodedBytes), itoa(x.ProcessedBytes), ftoa(x.ProcessingMS), ftoa(x.VCPUMS), same})
		}
	}
	cw.Flush()
	return cw.Error()
}
