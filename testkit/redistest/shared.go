package redistest

import (
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"sync"
	"testing"
)

// The servers a test binary shares: sharedServers redis-servers, a
// replica of each, and a 3-master Redis Cluster with a replica each,
// each started on first use in a temporary directory of its own, and
// stopped by Main. Tests on them keep apart by key prefix.
//
// A redis-server runs on one thread: tests at once on one server wait
// for it while the machine's other cores idle. So each test is given one
// of sharedServers servers, by its top-level name, the same to all its
// subtests and every call.
const sharedServers = 2

// shared is one server or cluster of the test binary, started once.
type shared[T any] struct {
	once sync.Once
	v    T
	err  error
	dir  string
	stop func()
}

var (
	sharedServer  [sharedServers]shared[*Server]
	sharedReplica [sharedServers]shared[*Server]
	sharedCluster shared[*Cluster]
	clusterOwners []*Server
)

// sharedIndex is the shared server of tb's top-level test.
func sharedIndex(tb testing.TB) int {
	top, _, _ := strings.Cut(tb.Name(), "/")
	h := fnv.New32a()
	h.Write([]byte(top))
	return int(h.Sum32() % sharedServers)
}

// get returns s's value, starting it with start in a new temporary
// directory (named after pattern) on first use; an error fails tb, now
// and on every later use.
func (s *shared[T]) get(tb testing.TB, pattern string, start func(dir string) (T, func(), error)) T {
	tb.Helper()
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", pattern); s.err == nil {
			s.v, s.stop, s.err = start(s.dir)
		}
	})
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.v
}

// close stops s, if started, and removes its directory.
func (s *shared[T]) close() {
	if s.stop != nil {
		s.stop()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Shared returns the redis-server that the test binary shares among the
// tests of tb's top-level test's server (sharedIndex), starting it on
// first use. It skips tb (fails it under CI=true) without redis-server.
// Main stops it.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	Require(tb)
	return sharedServer[sharedIndex(tb)].get(tb, "redistest-redis-", func(dir string) (*Server, func(), error) {
		s, err := StartIn(dir)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Stop, nil
	})
}

// SharedReplica returns a replica of Shared(tb), in sync when started.
func SharedReplica(tb testing.TB) *Server {
	tb.Helper()
	primary := Shared(tb)
	return sharedReplica[sharedIndex(tb)].get(tb, "redistest-replica-", func(dir string) (*Server, func(), error) {
		s, err := StartReplicaIn(dir, primary)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Stop, nil
	})
}

// SharedCluster returns the Redis Cluster shared by the test binary, 3
// masters with a replica each, starting it on first use, and the master
// of every slot (Cluster.Owners, read once: tests that move slots start
// a cluster of their own). It skips tb (fails it under CI=true) without
// redis-server and redis-cli. Main stops it.
func SharedCluster(tb testing.TB) (*Cluster, []*Server) {
	tb.Helper()
	RequireCluster(tb)
	c := sharedCluster.get(tb, "redistest-cluster-", func(dir string) (*Cluster, func(), error) {
		c, err := StartClusterWithReplicasIn(dir, 3)
		if err != nil {
			return nil, nil, err
		}
		if clusterOwners, err = c.Owners(); err != nil {
			c.Stop()
			return nil, nil, err
		}
		return c, c.Stop, nil
	})
	return c, clusterOwners
}

// Main is a TestMain's body: it runs m, stops the shared servers, then,
// if the tests passed, fails the run on an error of leaks, a check such
// as goleak.Find's that no goroutine is left over, and returns the exit
// code:
//
//	func TestMain(m *testing.M) {
//		os.Exit(redistest.Main(m, func() error { return goleak.Find() }))
//	}
func Main(m *testing.M, leaks func() error) int {
	code := m.Run()
	for i := range sharedServer {
		sharedReplica[i].close()
		sharedServer[i].close()
	}
	sharedCluster.close()
	if code == 0 && leaks != nil {
		if err := leaks(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	return code
}
