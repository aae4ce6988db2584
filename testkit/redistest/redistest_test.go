package redistest

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReplica checks that a replica serves what its primary wrote once
// WaitReplica returns, and refuses writes.
func TestReplica(t *testing.T) {
	p := Start(t)
	r := StartReplica(t, p)
	for i := 0; i < 100; i++ {
		if _, err := p.Do("INCR", "n"); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitReplica(r, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		if n, err := redis.Int(r.Do("GET", "n")); err != nil || n != i+1 {
			t.Fatalf("GET on the replica after %d INCR = %d, %v", i+1, n, err)
		}
	}
	if _, err := r.Do("SET", "n", 0); err == nil {
		t.Fatal("SET on the replica succeeded")
	}
}
