package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
)

// redisServer is a redis-server this test started, on a loopback port.
type redisServer struct {
	url string
	cmd *exec.Cmd
}

// startRedis starts redis-server on a free loopback port, without
// persistence, and waits for it to say it is ready. Without redis-server
// in PATH the test skips (fails under SSATD_STRICT=1); .ci/run installs it.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // redis-server cannot take port 0; the port is free a moment more
	return startRedisOn(t, port)
}

func startRedisOn(t *testing.T, port int) *redisServer {
	t.Helper()
	bin := testutil.RequireTool(t, "redis-server", "valkey-server")
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srv := &redisServer{url: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	t.Cleanup(srv.stop)
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- nil
				_, _ = io.Copy(io.Discard, out) // until the server exits
				return
			}
		}
		ready <- fmt.Errorf("redis-server exited before it was ready:\n%s", log.String())
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("redis-server not ready after 30s")
	}
	return srv
}

// stop kills the server this test started and waits for it.
func (r *redisServer) stop() {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}

var redisPrefixes atomic.Int64

// redisURL is SSATD_REDIS, or a server started for the test.
func redisURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("SSATD_REDIS"); u != "" {
		return u
	}
	return startRedis(t).url
}

func openTestRedis(url string) opener {
	return func(t *testing.T, c *clock) Store {
		t.Helper()
		// Each test has a namespace of its own: on a shared
		// SSATD_REDIS, tests never see each other's keys.
		prefix := fmt.Sprintf("ssatd-test-%d-%d:", os.Getpid(), redisPrefixes.Add(1))
		s, err := OpenRedis(RedisOptions{URL: url, Prefix: prefix, Now: c.Now, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx := context.Background()
			if keys, err := s.c.Keys(ctx, globEscape(prefix)+"*").Result(); err == nil && len(keys) > 0 {
				s.c.Del(ctx, keys...)
			}
			s.Close()
		})
		return s
	}
}

// TestRedisConformance runs the store suite on Redis.
func TestRedisConformance(t *testing.T) { runConformance(t, openTestRedis(redisURL(t))) }

// TestRedisOutageFailsFastAndRecovers catches a Redis store that hangs
// the request when Redis is down, or fails other than with
// ErrUnavailable, or does not work again once Redis is back: the
// caller serves the page and degrades identity meanwhile.
func TestRedisOutageFailsFastAndRecovers(t *testing.T) {
	srv := startRedis(t)
	s, err := OpenRedis(RedisOptions{URL: srv.url, Prefix: "outage:"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustSet(t, s, "ec:a", "v", nil, 0, Always)
	srv.stop()
	// Each operation dials at most four times (a retried command, a
	// retried dial), each refused at once on loopback.
	checkUnavailable(t, s, 500*time.Millisecond)

	// Redis back on its address: the same store works again, without
	// being reopened.
	port := srv.cmd.Args[2]
	var p int
	fmt.Sscan(port, &p)
	startRedisOn(t, p)
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping after Redis came back: %v", err)
	}
	if !mustSet(t, s, "ec:b", "v", nil, 0, IfAbsent) {
		t.Error("no write after Redis came back")
	}

	// Nothing listens: a Redis that was never up is unavailable too, not
	// an error at open.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	down, err := OpenRedis(RedisOptions{URL: "redis://" + addr})
	if err != nil {
		t.Fatalf("OpenRedis needs no server: %v", err)
	}
	defer down.Close()
	checkUnavailable(t, down, 500*time.Millisecond)
}

// TestRedisTimeoutBoundsASilentServer catches a store call that waits for
// ever on a Redis that accepts connections and never answers (a hung
// server, a black-holed network): the read timeout ends it.
func TestRedisTimeoutBoundsASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }() // read nothing, answer nothing
		}
	}()
	s, err := OpenRedis(RedisOptions{URL: "redis://" + l.Addr().String(), ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkUnavailable(t, s, 3*time.Second)
}
