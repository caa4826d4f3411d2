package testutil

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// RedisURL is SSATD_REDIS, or a redis-server (or valkey-server) started
// for the test (StartRedis).
func RedisURL(t *testing.T) string {
	t.Helper()
	if u := os.Getenv("SSATD_REDIS"); u != "" {
		return u
	}
	return StartRedis(t).URL
}

// RedisServer is a redis-server a test started, on a loopback port.
type RedisServer struct {
	URL  string
	Port int
	cmd  *exec.Cmd
}

// StartRedis starts redis-server (or valkey-server) on a free loopback
// port, without persistence, waits for it to say it is ready, and stops
// it when the test ends. Without either in PATH the test skips (fails
// under SSATD_STRICT=1); .ci/run installs redis-server.
func StartRedis(t *testing.T) *RedisServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // redis-server cannot take port 0; the port is free a moment more
	return StartRedisOn(t, port)
}

// StartRedisOn is StartRedis on a given port: a server stopped and
// started again where its clients expect it.
func StartRedisOn(t *testing.T, port int) *RedisServer {
	t.Helper()
	bin := RequireTool(t, "redis-server", "valkey-server")
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srv := &RedisServer{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), Port: port, cmd: cmd}
	t.Cleanup(srv.Stop)
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

// Stop kills the server and waits for it; stopping it again does nothing.
func (r *RedisServer) Stop() {
	if r.cmd.ProcessState != nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
}
