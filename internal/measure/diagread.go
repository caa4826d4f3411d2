package measure

import (
	"net/http"
	"strconv"

	"github.com/ssatd/ssatd/internal/proxy"
)

// diag is what one response says of its processing, from Trusted Server's
// x-ts-ssat-* headers (its Fastly measurement, upstream issue #858; ssatd
// sends them too with diagnostics on) or else ssatd's X-Ssatd-* ones.
type diag struct {
	set                                            string // "x-ts-ssat" or "x-ssatd"; "" when neither
	mode                                           string // offload or mirror
	originAE, originCoding, outputCoding, delivery string
	processedBytes                                 int64
	processingMS, vcpuMS                           float64
}

// field reads name from the headers, or from the trailers: Trusted
// Server's guest sent every value as a header; ssatd sends the figures
// known only at the end of the body as trailers (read after the body).
func field(resp *http.Response, name string) string {
	if v := resp.Header.Get(name); v != "" {
		return v
	}
	return resp.Trailer.Get(name)
}

func readDiag(resp *http.Response) diag {
	if m := field(resp, proxy.TSMode); m != "" {
		d := diag{set: "x-ts-ssat", mode: m, originAE: field(resp, proxy.TSOriginAE), originCoding: field(resp, proxy.TSOriginCoding),
			outputCoding: field(resp, proxy.TSOutputCoding), delivery: field(resp, proxy.TSDelivery)}
		if m == "identity" {
			d.mode = "offload"
		}
		d.processedBytes, _ = strconv.ParseInt(field(resp, proxy.TSProcessedBytes), 10, 64)
		d.processingMS, _ = strconv.ParseFloat(field(resp, proxy.TSProcessingMillis), 64)
		d.vcpuMS, _ = strconv.ParseFloat(field(resp, proxy.TSVCPUMillis), 64)
		return d
	}
	d := diag{mode: field(resp, proxy.DiagMode), originAE: field(resp, proxy.DiagOriginAE), originCoding: field(resp, proxy.DiagOriginCoding),
		outputCoding: field(resp, proxy.DiagOutputCoding), delivery: field(resp, proxy.DiagDelivery)}
	if d.mode != "" {
		d.set = "x-ssatd"
	}
	d.processedBytes, _ = strconv.ParseInt(field(resp, proxy.DiagProcessedBytes), 10, 64)
	d.processingMS, _ = strconv.ParseFloat(field(resp, proxy.DiagProcessingMillis), 64)
	d.vcpuMS, _ = strconv.ParseFloat(field(resp, proxy.DiagGuestCPUMillis), 64)
	return d
}
