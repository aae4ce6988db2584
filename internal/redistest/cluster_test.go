package redistest

import (
	"math/rand"
	"testing"

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
