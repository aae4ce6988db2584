// Package redistest starts private redis-server processes for tests: each
// on a free loopback port, in its own temporary directory, stopped by pid;
// alone (Start) or as the masters of a Redis Cluster (StartCluster). It
// never connects to a server it did not start. A test binary may share
// servers, their replicas and one cluster (Shared, SharedReplica,
// SharedCluster), stopped by Main from its TestMain. It is the module's
// test kit (testkit/), which services built on the store may use too.
//
// The programs it runs come from the environment, read once when the
// package loads:
//
//	REDISTEST_SERVER  the server (Binary): an absolute path, or a name
//	                  looked up in PATH; default redis-server. Any server
//	                  that takes redis-server's arguments will do, such
//	                  as valkey-server.
//	REDISTEST_CLI     the client that creates clusters (CLI), the same
//	                  way; default redis-cli.
//
// Where the server is not found, Start skips the test with a clear
// message, except under CI=true, where a missing server fails it.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Binary is the server program the package runs: $REDISTEST_SERVER, or
// redis-server.
var Binary = fromEnv("REDISTEST_SERVER", "redis-server")

// fromEnv returns the value of the environment variable name, or def where
// it is unset or empty.
func fromEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Server is a running redis-server of this process's own.
type Server struct {
	Addr string // host:port on loopback
	Port int
	Dir  string // its working directory: config, logs, AOF

	conf []string
	bus  int // the cluster bus port of a cluster node
	cmd  *exec.Cmd
	done chan struct{}
}

// Require skips tb when the server (Binary) is not installed, or fails it
// under CI=true, where the real-server tests must run.
func Require(tb testing.TB) {
	tb.Helper()
	require(tb, Binary)
}

// RequireCluster is Require for cluster tests, which need redis-cli too.
func RequireCluster(tb testing.TB) {
	tb.Helper()
	require(tb, Binary)
	require(tb, CLI)
}

func require(tb testing.TB, program string) {
	tb.Helper()
	if _, err := exec.LookPath(program); err != nil {
		msg := program + " is not found; install it (Debian: apt-get install redis-server), or name another with REDISTEST_SERVER and REDISTEST_CLI, to run the real-server tests"
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg + " (CI=true: this is a failure, not a skip)")
		}
		tb.Skip(msg)
	}
}

// Start starts a server for tb and stops it when tb ends. conf holds extra
// redis-server arguments, such as "--appendonly", "yes".
func Start(tb testing.TB, conf ...string) *Server {
	tb.Helper()
	Require(tb)
	s, err := StartIn(tb.TempDir(), conf...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// StartIn starts a server with its files in dir, on a free port. The
// caller must Stop it.
func StartIn(dir string, conf ...string) (*Server, error) {
	return startIn(dir, conf, false)
}

// startIn starts a server in dir on a free port; a cluster node also gets
// a free port of its own for the cluster bus, as the default (port+10000)
// may be out of range or taken.
func startIn(dir string, conf []string, clusterBus bool) (*Server, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var port, bus int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		c := conf
		if clusterBus {
			if bus, err = freePort(); err != nil {
				return nil, err
			}
			if bus == port {
				err = errors.New("redistest: the same free port twice")
				continue
			}
			c = append(append([]string(nil), conf...), "--cluster-port", strconv.Itoa(bus))
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir, conf: c, bus: bus}
		if err = s.start(); err == nil {
			return s, nil
		}
		// Another process may have taken a port in between: try others.
	}
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start() error {
	args := append([]string{
		"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--dir", s.Dir, "--save", "", "--daemonize", "no",
	}, s.conf...)
	logf, err := os.OpenFile(filepath.Join(s.Dir, "redis-"+strconv.Itoa(s.Port)+".log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(Binary, args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start %s: %w", Binary, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("redistest: %s on port %d exited at start; see %s", Binary, s.Port, logf.Name())
		default:
		}
		if _, err := s.Do("PING"); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("redistest: %s on port %d did not answer PING within 10s", Binary, s.Port)
}

// Do runs one command on a fresh side connection to the server.
func (s *Server) Do(cmd string, args ...interface{}) (interface{}, error) {
	c, err := redis.Dial("tcp", s.Addr, redis.DialConnectTimeout(time.Second),
		redis.DialReadTimeout(10*time.Second), redis.DialWriteTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// Pool returns a new connection pool to the server.
func (s *Server) Pool() *redis.Pool {
	return &redis.Pool{
		MaxIdle:     64,
		IdleTimeout: time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", s.Addr, redis.DialConnectTimeout(2*time.Second))
		},
	}
}

// Kill ends the server at once with SIGKILL, as a crash would, and waits
// for it to exit. Its files stay for Restart.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port and directory, with
// the same configuration, after Kill or Stop.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // the port may linger briefly
	}
	return err
}

// Stop ends the server by pid and waits for it to exit.
func (s *Server) Stop() { s.Kill() }

// StartReplica starts a replica of primary for tb (redis-server
// --replicaof), waits until it has synced, and stops it when tb ends.
// conf holds extra redis-server arguments.
func StartReplica(tb testing.TB, primary *Server, conf ...string) *Server {
	tb.Helper()
	Require(tb)
	s, err := StartReplicaIn(tb.TempDir(), primary, conf...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// StartReplicaIn starts a replica of primary with its files in dir, on a
// free port, and waits until its link to primary is up and its first
// sync done. It sets primary's repl-diskless-sync-delay to 0, so that the
// sync starts at once, not 5 s later. The caller must Stop it.
func StartReplicaIn(dir string, primary *Server, conf ...string) (*Server, error) {
	if _, err := primary.Do("CONFIG", "SET", "repl-diskless-sync-delay", 0); err != nil {
		return nil, err
	}
	c := append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}, conf...)
	s, err := startIn(dir, c, false)
	if err != nil {
		return nil, err
	}
	if err := s.waitLinkUp(20 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitLinkUp waits until the replica s reports its link to its master
// up and no sync in progress.
func (s *Server) waitLinkUp(timeout time.Duration) error {
	return poll(timeout, 20*time.Millisecond, func() error {
		repl, err := s.Replication()
		if err == nil && (repl["master_link_status"] != "up" || repl["master_sync_in_progress"] != "0") {
			err = fmt.Errorf("%v", repl)
		}
		if err != nil {
			return fmt.Errorf("redistest: replica %s not in sync: %w", s.Addr, err)
		}
		return nil
	})
}

// poll calls check every interval until it returns nil, and returns nil;
// or until timeout has passed, and returns check's last error.
func poll(timeout, interval time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(interval)
	}
}

// WaitAsleep waits until s answers no PING within 100ms, as while a DEBUG
// SLEEP sent to it runs.
func (s *Server) WaitAsleep(timeout time.Duration) error {
	return poll(timeout, 10*time.Millisecond, func() error {
		c, err := redis.Dial("tcp", s.Addr, redis.DialReadTimeout(100*time.Millisecond))
		if err != nil {
			return err
		}
		_, err = c.Do("PING")
		c.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil
		}
		return fmt.Errorf("redistest: %s is awake", s.Addr)
	})
}

// Replication returns the fields of the server's INFO replication.
func (s *Server) Replication() (map[string]string, error) {
	info, err := redis.String(s.Do("INFO", "replication"))
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// WaitReplica waits until replica has applied every write s, its master,
// had made when called: until its replication offset reaches s's.
func (s *Server) WaitReplica(replica *Server, timeout time.Duration) error {
	repl, err := s.Replication()
	if err != nil {
		return err
	}
	want, err := strconv.ParseInt(repl["master_repl_offset"], 10, 64)
	if err != nil {
		return fmt.Errorf("redistest: master_repl_offset of %s: %w", s.Addr, err)
	}
	return poll(timeout, 2*time.Millisecond, func() error {
		r, err := replica.Replication()
		if err != nil {
			return err
		}
		if got, _ := strconv.ParseInt(r["slave_repl_offset"], 10, 64); got < want {
			return fmt.Errorf("redistest: replica %s at offset %d, want %d", replica.Addr, got, want)
		}
		return nil
	})
}
