package main

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// groupTopics are the demo's groups, each with the subjects of its
// articles. An article belongs to its subject's group, and one in four
// also to another group.
var groupTopics = []struct {
	group    string
	subjects []string
}{
	{"redis", []string{"sorted sets", "Lua scripting in Redis", "Redis Cluster hash tags", "Redis streams", "EVALSHA", "keyspace notifications"}},
	{"golang", []string{"Go generics", "the Go scheduler", "context cancellation", "error wrapping in Go", "Go 1.22 routing", "pooling with sync.Pool"}},
	{"databases", []string{"B-trees", "write-ahead logs", "MVCC", "SQLite", "query planners", "LSM trees"}},
	{"security", []string{"TLS 1.3", "password hashing", "supply-chain attacks", "WebAuthn", "sandboxing"}},
	{"algorithms", []string{"CRDTs", "consistent hashing", "Bloom filters", "HyperLogLog", "rate limiting"}},
}

// defaultGroup is the group whose table the demo prints.
const defaultGroup = "redis"

var titleForms = []string{
	"A deep dive into %s",
	"What I learned from %s",
	"%s, explained",
	"Show HN: %s in 200 lines of Go",
	"The hidden cost of %s",
	"Notes on %s",
	"How we use %s at scale",
	"%s considered harmful",
	"Understanding %s",
	"A gentle introduction to %s",
}

// topic draws an article's groups and title.
func (s *sim) topic() (groups []string, title string) {
	t := groupTopics[s.rng.IntN(len(groupTopics))]
	groups = []string{t.group}
	if s.rng.IntN(4) == 0 {
		if other := groupTopics[s.rng.IntN(len(groupTopics))].group; other != t.group {
			groups = append(groups, other)
		}
	}
	subject := t.subjects[s.rng.IntN(len(t.subjects))]
	return groups, upperFirst(fmt.Sprintf(titleForms[s.rng.IntN(len(titleForms))], subject))
}

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
