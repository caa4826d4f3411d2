package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/ssatd/ssatd/internal/demo"
)

func cmdDemoBidder(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("demo-bidder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8002", "address to listen on (\":8002\" in a container)")
	delay := fs.Duration("delay", 0, "added before every answer, e.g. 300ms (a slow exchange)")
	failure := fs.Float64("failure-rate", 0, "share of bid requests answered with a 500, from 0 to 1 (spread evenly)")
	script := fs.String("script", "", "JSON file of scripted answers (bids per slot and seat, delay, status) instead of the demo bids (docs/testing.md)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd demo-bidder [-listen ADDR] [-delay D] [-failure-rate F] [-script FILE]\n\n"+
			"Runs a mock Prebid Server: POST "+demo.AuctionPath+" answers OpenRTB 2.6 bid requests with\n"+
			"deterministic bids from three demo seats, each with a visible creative, or as -script says.\n"+
			"GET "+demo.RequestsPath+" lists the last "+strconv.Itoa(demo.MaxRecorded)+" bid requests received (JSON, newest last);\n"+
			"DELETE "+demo.RequestsPath+" forgets them.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	opts := demo.BidderOptions{Delay: *delay, FailureRate: *failure}
	if *script != "" {
		s, err := demo.LoadScript(*script)
		if err != nil {
			fmt.Fprintf(stderr, "ssatd demo-bidder: %v\n", err)
			return 2
		}
		opts.Script = s
	}
	b, err := demo.NewBidder(opts)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd demo-bidder: %v\n", err)
		fs.Usage()
		return 2
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd demo-bidder: listen on %s: %v\n", *listen, err)
		return 1
	}
	banner := func() {
		fmt.Fprintf(stdout, "ssatd demo-bidder: serving OpenRTB on http://%s%s (delay %v, failure rate %v)\n", l.Addr(), demo.AuctionPath, *delay, *failure)
	}
	return serveUntilDone(ctx, l, b, banner, "ssatd demo-bidder", stderr)
}
