package measure

// loadMedian loads u o.Runs times in b and keeps the medians.
func loadMedian(b Browser, u, ae string, n NetworkProfile, o BrowserOptions) (BrowserLoad, error) {
	l := BrowserLoad{AcceptEncoding: ae, SentAcceptEncoding: browserAcceptEncoding(ae), Network: n.Name, Loads: o.Runs}
	var ttfb, wait, fcp, lcp, end, load []float64
	for i := range o.Runs {
		v, err := b.Load(u, l.SentAcceptEncoding, n, o.Timeout)
		if err != nil {
			return l, err
		}
		if i == 0 {
			l.Status, l.DeliveredCoding = v.Status, orIdentity(v.Coding)
			l.TransferBytes, l.EncodedBodyBytes, l.DecodedBodyBytes = v.Transfer, v.Encoded, v.Decoded
		}
		ttfb, wait, fcp, lcp = append(ttfb, v.TTFB), append(wait, v.Wait), append(fcp, v.FCP), append(lcp, v.LCP)
		end, load = append(end, v.ResponseEnd), append(load, v.Load)
	}
	l.TTFBMS, l.WaitMS, l.FCPMS, l.LCPMS = Median(ttfb), Median(wait), Median(fcp), Median(lcp)
	l.ResponseEndMS, l.LoadMS = Median(end), Median(load)
	return l, nil
}

// browserAcceptEncoding is what Chromium sends for the client coding ae of
// daemonEncodings: ae first, and gzip, which every browser accepts.
// Chromium refuses a coding it did not advertise
// (net::ERR_CONTENT_DECODING_FAILED), so with "br" alone a deployment
// whose origin answers gzip in mirror mode could not be loaded at all,
// where a real browser gets the gzip page.
func browserAcceptEncoding(ae string) string {
	if ae == "gzip" {
		return ae
	}
	return ae + ", gzip"
}
