package main

import (
	"context"
	"fmt"
	"io"
)

// cmdDemo, cmdDemoOrigin and cmdHealthcheck are being built (issue 5).
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "ssatd demo: not available in this build yet")
	return 2
}

func cmdDemoOrigin(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "ssatd demo-origin: not available in this build yet")
	return 2
}

func cmdHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	fmt.Fprintln(stderr, "ssatd healthcheck: not available in this build yet")
	return 2
}
