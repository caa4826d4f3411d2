package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"

	"github.com/ssatd/ssatd/internal/demo"
)

func cmdDemoBidder(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("demo-bidder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8002", "address to listen on (\":8002\" in a container)")
	delay := fs.Duration("delay", 0, "added before every answer, e.g. 300ms (a slow exchange)")
	failure := fs.Float64("failure-rate", 0, "share of bid requests answered with a 500, from 0 to 1 (spread evenly)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ssatd demo-bidder [-listen ADDR] [-delay D] [-failure-rate F]\n\n"+
			"Runs a mock Prebid Server: POST "+demo.AuctionPath+" answers OpenRTB 2.6 bid requests with\n"+
			"deterministic bids from three demo seats, each with a visible creative.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	b, err := demo.NewBidder(demo.BidderOptions{Delay: *delay, FailureRate: *failure})
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
