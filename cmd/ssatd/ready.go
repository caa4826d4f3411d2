package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
)

// originReady is /readyz's origin check, made only with
// server.ready_requires_origin: a TCP connection to the origin within
// publisher.origin_connect_timeout. By default readiness does not depend
// on the origin, because every replica shares it: an origin outage would
// fail them all at once and leave the load balancer with no target, where
// serving on lets pages fail with a 502 that names the origin
// (docs/deployment.md, "Health checks").
func (d *daemon) originReady(ctx context.Context) error {
	cfg := d.config()
	if !cfg.Server.ReadyRequiresOrigin {
		return nil
	}
	u, err := url.Parse(cfg.Publisher.OriginURL)
	if err != nil {
		return fmt.Errorf("origin_url: %w", err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	dialer := net.Dialer{Timeout: cfg.Publisher.OriginConnectTimeout.Duration}
	c, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("origin unreachable: %w", err)
	}
	return c.Close()
}
