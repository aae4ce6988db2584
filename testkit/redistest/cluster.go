package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// CLI is the program that joins nodes into a cluster: $REDISTEST_CLI, or
// redis-cli.
var CLI = fromEnv("REDISTEST_CLI", "redis-cli")

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Cluster is a Redis Cluster of this process's own, on loopback, each
// node in a directory of its own, stopped by pid.
type Cluster struct {
	Nodes []*Server // the masters
	// Replicas holds, for a cluster with replicas, the replica of each
	// master: Replicas[i] replicates Nodes[i]. Replicas never fail over.
	Replicas []*Server
}

// StartCluster starts a cluster of masters for tb and stops it when tb
// ends. It skips tb (fails it under CI=true) without redis-server or
// redis-cli.
func StartCluster(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	return startCluster(tb, masters, StartClusterIn)
}

// StartClusterWithReplicas is StartCluster with one replica per master
// (Cluster.Replicas).
func StartClusterWithReplicas(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	return startCluster(tb, masters, StartClusterWithReplicasIn)
}

func startCluster(tb testing.TB, masters int, in func(dir string, masters int) (*Cluster, error)) *Cluster {
	tb.Helper()
	RequireCluster(tb)
	c, err := in(tb.TempDir(), masters)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// StartClusterWithReplicasIn is StartClusterIn with one replica per
// master: it starts the masters' cluster, then joins a replica to each
// (CLUSTER MEET, CLUSTER REPLICATE), and waits until every replica has
// synced and every node reports cluster_state:ok. The caller must Stop it.
func StartClusterWithReplicasIn(dir string, masters int) (*Cluster, error) {
	c, err := StartClusterIn(dir, masters)
	if err != nil {
		return nil, err
	}
	if err := c.addReplicas(dir); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// addReplicas starts a replica for each master and joins it.
func (c *Cluster) addReplicas(dir string) error {
	ids := make([]string, len(c.Nodes))
	for i, m := range c.Nodes {
		nodeDir := filepath.Join(dir, "replica"+strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			return err
		}
		r, err := startIn(nodeDir, append(nodeConf(), "--cluster-replica-no-failover", "yes"), true)
		if err != nil {
			return err
		}
		c.Replicas = append(c.Replicas, r)
		if ids[i], err = redis.String(m.Do("CLUSTER", "MYID")); err != nil {
			return err
		}
		// The sync starts at once, not 5 s later.
		if _, err := m.Do("CONFIG", "SET", "repl-diskless-sync-delay", 0); err != nil {
			return err
		}
		if _, err := r.Do("CLUSTER", "MEET", "127.0.0.1", m.Port, m.bus); err != nil {
			return fmt.Errorf("redistest: CLUSTER MEET: %w", err)
		}
	}
	// A replica knows its master once the handshake is done; until then
	// CLUSTER REPLICATE fails with an unknown node.
	deadline := time.Now().Add(20 * time.Second)
	for i, r := range c.Replicas {
		err := poll(time.Until(deadline), 50*time.Millisecond, func() error {
			_, err := r.Do("CLUSTER", "REPLICATE", ids[i])
			return err
		})
		if err != nil {
			return fmt.Errorf("redistest: CLUSTER REPLICATE on %s: %w", r.Addr, err)
		}
	}
	for _, r := range c.Replicas {
		if err := r.waitLinkUp(time.Until(deadline)); err != nil {
			return err
		}
	}
	return c.waitOK(time.Until(deadline))
}

// nodeConf is the configuration of every cluster node.
func nodeConf() []string {
	return []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "5000",
	}
}

// ReplicaOf returns the replica of master, or nil.
func (c *Cluster) ReplicaOf(master *Server) *Server {
	for i, m := range c.Nodes {
		if m == master && i < len(c.Replicas) {
			return c.Replicas[i]
		}
	}
	return nil
}

// StartClusterIn starts a cluster of masters (at least 3, as redis-cli
// requires) with each node's files in a directory under dir, spreads the
// slots over them with redis-cli --cluster create, and waits until every
// node reports cluster_state:ok. The caller must Stop it.
func StartClusterIn(dir string, masters int) (*Cluster, error) {
	if _, err := exec.LookPath(CLI); err != nil {
		return nil, fmt.Errorf("redistest: %s is not found: %w", CLI, err)
	}
	c := &Cluster{}
	args := []string{"--cluster", "create"}
	for i := 0; i < masters; i++ {
		nodeDir := filepath.Join(dir, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		s, err := startIn(nodeDir, nodeConf(), true)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(CLI, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: %s %s: %w\n%s", CLI, strings.Join(args, " "), err, out)
	}
	if err := c.waitOK(20 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// waitOK waits until every node reports cluster_state:ok and agrees on
// the owner of every slot.
func (c *Cluster) waitOK(timeout time.Duration) error {
	if err := poll(timeout, 50*time.Millisecond, c.checkOK); err != nil {
		return fmt.Errorf("redistest: cluster not ready: %w", err)
	}
	return nil
}

func (c *Cluster) checkOK() error {
	var first map[int]int
	for _, n := range append(c.Nodes[:len(c.Nodes):len(c.Nodes)], c.Replicas...) {
		info, err := redis.String(n.Do("CLUSTER", "INFO"))
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("node %s: cluster_state is not ok", n.Addr)
		}
		owners, err := shardOwners(n)
		if err != nil {
			return err
		}
		if first == nil {
			first = owners
			continue
		}
		if fmt.Sprint(owners) != fmt.Sprint(first) {
			return fmt.Errorf("node %s: sees other slot owners", n.Addr)
		}
	}
	return nil
}

// Stop stops every node by pid.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
	for _, n := range c.Replicas {
		n.Stop()
	}
}

// KeySlot returns the hash slot of key as the cluster computes it, with
// CLUSTER KEYSLOT.
func (c *Cluster) KeySlot(key string) (int, error) {
	return redis.Int(c.Nodes[0].Do("CLUSTER", "KEYSLOT", key))
}

// NodeOf returns the master that owns slot, as CLUSTER SHARDS tells.
func (c *Cluster) NodeOf(slot int) (*Server, error) {
	owners, err := c.Owners()
	if err != nil {
		return nil, err
	}
	return owners[slot], nil
}

// Owners returns the master of every slot, as CLUSTER SHARDS tells:
// owners[slot] is the node that serves it.
func (c *Cluster) Owners() ([]*Server, error) {
	shards, err := shardOwners(c.Nodes[0])
	if err != nil {
		return nil, err
	}
	owners := make([]*Server, Slots)
	for rng, port := range shards {
		var node *Server
		for _, n := range c.Nodes {
			if n.Port == port {
				node = n
			}
		}
		if node == nil {
			return nil, fmt.Errorf("redistest: port %d owns slots but is not a node of this cluster", port)
		}
		for slot := rng >> 16; slot <= rng&0xffff && slot < Slots; slot++ {
			owners[slot] = node
		}
	}
	for slot, n := range owners {
		if n == nil {
			return nil, fmt.Errorf("redistest: slot %d has no owner", slot)
		}
	}
	return owners, nil
}

// NodeOfKey returns the master that owns key's slot.
func (c *Cluster) NodeOfKey(key string) (*Server, error) {
	slot, err := c.KeySlot(key)
	if err != nil {
		return nil, err
	}
	return c.NodeOf(slot)
}

// shardOwners asks n for CLUSTER SHARDS and returns, for each range of
// slots, the port of its master, keyed by first<<16 | last.
func shardOwners(n *Server) (map[int]int, error) {
	shards, err := redis.Values(n.Do("CLUSTER", "SHARDS"))
	if err != nil {
		return nil, err
	}
	owners := map[int]int{}
	for _, sh := range shards {
		fields, err := redis.Values(sh, nil)
		if err != nil {
			return nil, err
		}
		var slots []int
		port := -1
		for i := 0; i+1 < len(fields); i += 2 {
			name, _ := redis.String(fields[i], nil)
			switch name {
			case "slots":
				if slots, err = redis.Ints(fields[i+1], nil); err != nil {
					return nil, err
				}
			case "nodes":
				if port, err = masterPort(fields[i+1]); err != nil {
					return nil, err
				}
			}
		}
		if port < 0 {
			continue // a shard without a master: not ready
		}
		for i := 0; i+1 < len(slots); i += 2 {
			owners[slots[i]<<16|slots[i+1]] = port
		}
	}
	if len(owners) == 0 {
		return nil, errors.New("redistest: CLUSTER SHARDS lists no slots")
	}
	return owners, nil
}

// masterPort returns the port of the healthy master among a shard's
// nodes, or -1. Each node is a flat list of name/value pairs.
func masterPort(v interface{}) (int, error) {
	nodes, err := redis.Values(v, nil)
	if err != nil {
		return -1, err
	}
	for _, node := range nodes {
		fields, err := redis.Values(node, nil)
		if err != nil {
			return -1, err
		}
		m := map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := redis.String(fields[i], nil)
			switch f := fields[i+1].(type) {
			case []byte:
				m[k] = string(f)
			case int64:
				m[k] = strconv.FormatInt(f, 10)
			}
		}
		if m["role"] == "master" && m["health"] == "online" {
			return strconv.Atoi(m["port"])
		}
	}
	return -1, nil
}

// Slot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its hash tag, modulo 16384. The hash tag is what lies between
// the first "{" and the first "}" after it, when that is not empty.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % Slots
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the checksum of
// Redis Cluster's key hashing.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// ID returns the cluster node ID of n (CLUSTER MYID).
func (n *Server) ID() (string, error) { return redis.String(n.Do("CLUSTER", "MYID")) }

// MoveSlot moves slot from its owner to the master to, as redis-cli
// --cluster reshard does: SETSLOT IMPORTING on the target, MIGRATING on
// the source, MIGRATE of its keys batch by batch (pause between two
// batches, so that calls run while the slot is split between the two),
// then SETSLOT NODE on the target, the source and the other masters. It
// returns the number of keys moved.
func (c *Cluster) MoveSlot(slot int, to *Server, batch int, pause time.Duration) (int, error) {
	from, err := c.NodeOf(slot)
	if err != nil {
		return 0, err
	}
	if from == to {
		return 0, fmt.Errorf("redistest: slot %d is on %s already", slot, to.Addr)
	}
	fromID, err := from.ID()
	if err != nil {
		return 0, err
	}
	toID, err := to.ID()
	if err != nil {
		return 0, err
	}
	if _, err := to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID); err != nil {
		return 0, fmt.Errorf("redistest: SETSLOT IMPORTING: %w", err)
	}
	if _, err := from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID); err != nil {
		return 0, fmt.Errorf("redistest: SETSLOT MIGRATING: %w", err)
	}
	moved := 0
	for {
		keys, err := redis.Strings(from.Do("CLUSTER", "GETKEYSINSLOT", slot, batch))
		if err != nil {
			return moved, err
		}
		if len(keys) == 0 {
			break
		}
		args := []interface{}{"127.0.0.1", to.Port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if _, err := from.Do("MIGRATE", args...); err != nil {
			return moved, fmt.Errorf("redistest: MIGRATE: %w", err)
		}
		moved += len(keys)
		time.Sleep(pause)
	}
	for _, n := range append([]*Server{to, from}, c.Nodes...) {
		if _, err := n.Do("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
			return moved, fmt.Errorf("redistest: SETSLOT NODE on %s: %w", n.Addr, err)
		}
	}
	return moved, c.waitOK(20 * time.Second)
}
