package redistest

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestCluster(t *testing.T) {
	c := StartCluster(t, 3)
	table, err := c.Owners()
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]int{} // slots per node
	for _, n := range table {
		owners[n.Addr]++
	}
	if len(owners) != 3 {
		t.Fatalf("slots are owned by %d nodes, want 3", len(owners))
	}

	// Slot agrees with CLUSTER KEYSLOT on random keys, half with tags.
	conn, err := redis.Dial("tcp", c.Nodes[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rng := rand.New(rand.NewSource(1))
	const n = 10000
	keys := make([]string, n)
	alphabet := []byte("ab{}:x\x00\xff")
	for i := range keys {
		b := make([]byte, rng.Intn(24))
		for j := range b {
			if rng.Intn(2) == 0 {
				b[j] = alphabet[rng.Intn(len(alphabet))]
			} else {
				b[j] = byte(rng.Intn(256))
			}
		}
		keys[i] = string(b)
		if err := conn.Send("CLUSTER", "KEYSLOT", keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Flush(); err != nil {
		t.Fatal(err)
	}
	tagged := 0
	for _, k := range keys {
		want, err := redis.Int(conn.Receive())
		if err != nil {
			t.Fatal(err)
		}
		if got := Slot(k); got != want {
			t.Fatalf("Slot(%q) = %d, CLUSTER KEYSLOT = %d", k, got, want)
		}
		if Slot(k) != int(crc16(k))%Slots {
			tagged++
		}
	}
	t.Logf("Slot matches CLUSTER KEYSLOT on %d random keys (%d hashed by a tag); slots per node: %v", n, tagged, owners)
}

// TestClusterWithReplicas checks that each master gets a replica of its
// own that serves reads of its slots on a READONLY connection.
func TestClusterWithReplicas(t *testing.T) {
	c := StartClusterWithReplicas(t, 3)
	if len(c.Replicas) != 3 {
		t.Fatalf("%d replicas, want 3", len(c.Replicas))
	}
	m, err := c.NodeOfKey("{x}:k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Do("SET", "{x}:k", "v"); err != nil {
		t.Fatal(err)
	}
	r := c.ReplicaOf(m)
	if err := m.WaitReplica(r, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	conn, err := redis.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Do("GET", "{x}:k"); err == nil || !strings.HasPrefix(err.Error(), "MOVED") {
		t.Fatalf("GET on a replica without READONLY: %v, want MOVED", err)
	}
	if _, err := conn.Do("READONLY"); err != nil {
		t.Fatal(err)
	}
	if v, err := redis.String(conn.Do("GET", "{x}:k")); err != nil || v != "v" {
		t.Fatalf("GET on a READONLY replica = %q, %v", v, err)
	}
}
