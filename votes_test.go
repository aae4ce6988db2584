package voting

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// noPipePool is a pool whose connections refuse Send, as redisc's
// RetryConn does, and count their round trips.
type noPipePool struct {
	pool  *redis.Pool
	trips int
}

func (p *noPipePool) Get() redis.Conn { return &noPipeConn{Conn: p.pool.Get(), p: p} }

type noPipeConn struct {
	redis.Conn
	p *noPipePool
}

func (c *noPipeConn) Send(string, ...interface{}) error {
	return errors.New("unsupported call to Send")
}

func (c *noPipeConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	c.p.trips++
	return c.Conn.Do(cmd, args...)
}

// TestVotesOfPipeline: VotesOf's pipeline (votes.go) reads what votes.lua
// reads, which a connection that cannot pipeline runs instead, in one
// round trip, on every state of a store the script tells apart: votes
// up, down and none, a corrupt, a missing and an expired voter record, a
// foreign value at a voter record, at the record and at the id counter,
// a store without a record, of another layout, of other options. Where
// one fails, the other fails alike: with ErrIncompatible or with no
// sentinel.
func TestVotesOfPipeline(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, b *backend) {
		states := []struct {
			name string
			set  func(s *Store)
		}{
			{"clean", func(s *Store) {}},
			{"corrupt voter record", func(s *Store) { b.do(t, "HSET", s.keys.votedKey("3"), "bob", "x") }},
			{"expired voter record", func(s *Store) { b.do(t, "DEL", s.keys.votedKey("1")) }},
			{"foreign voter record", func(s *Store) { b.do(t, "DEL", s.keys.votedKey("2")); b.do(t, "SET", s.keys.votedKey("2"), "x") }},
			{"foreign record", func(s *Store) { b.do(t, "DEL", s.keys.record); b.do(t, "HSET", s.keys.record, "a", "b") }},
			{"no record", func(s *Store) { b.do(t, "DEL", s.keys.record) }},
			{"no record, foreign counter", func(s *Store) {
				b.do(t, "DEL", s.keys.record, s.keys.seq)
				b.do(t, "HSET", s.keys.seq, "a", "b")
			}},
			{"layout 2", func(s *Store) { b.do(t, "SET", s.keys.record, "2") }},
			{"empty record", func(s *Store) { b.do(t, "SET", s.keys.record, "") }},
			{"other options", func(s *Store) { b.do(t, "SET", s.keys.record, "3 karma=1,-1") }},
		}
		ids := []string{"1", "2", "3", "4", "99"}
		for _, st := range states {
			s, _ := newStore(t, b)
			for i := 0; i < 4; i++ {
				mustPost(t, s, "alice", "t")
			}
			mustVote(t, s, "bob", "1", Upvote)
			mustVote(t, s, "bob", "2", Downvote)
			st.set(s)
			got, gotErr := s.VotesOf(ctx, "bob", ids)
			p := &noPipePool{pool: b.pool}
			script, err := New(p, WithKeyPrefix(s.keys.prefix), WithClock(s.now))
			if err != nil {
				t.Fatal(err)
			}
			script.VotesOf(ctx, "bob", ids) // loads the library, or finds Functions refused
			p.trips = 0
			want, wantErr := script.VotesOf(ctx, "bob", ids)
			if p.trips != 1 {
				t.Errorf("%s: VotesOf without a pipeline took %d round trips", st.name, p.trips)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || (gotErr == nil) != (wantErr == nil) ||
				errors.Is(gotErr, ErrIncompatible) != errors.Is(wantErr, ErrIncompatible) || isSentinel(gotErr) || isSentinel(wantErr) {
				t.Errorf("%s: VotesOf = %v, %v; votes.lua reads %v, %v", st.name, got, gotErr, want, wantErr)
			}
			if st.name == "clean" && fmt.Sprint(got) != fmt.Sprint([]VoteType{Upvote, Downvote, NoVote, NoVote, NoVote}) {
				t.Errorf("VotesOf = %v", got)
			}
			if gotErr != nil && !strings.HasPrefix(gotErr.Error(), "voting: votes of: ") {
				t.Errorf("%s: error %q", st.name, gotErr)
			}
		}
	})
}

// TestVotesOfRefused: a Redis refusal of any command of VotesOf's
// pipeline (a moving slot's ASK, TRYAGAIN) fails the call with
// ErrTryAgain, as the script's refusal did.
func TestVotesOfRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		s, _ := newStore(t, b)
		a := mustPost(t, s, "alice", "t")
		for _, cmd := range []string{"GET", "TYPE", "HGET"} {
			hook(s, &hooks{after: func(c string, args []interface{}, v interface{}, err error) (interface{}, error) {
				if c == cmd {
					return nil, redis.Error("ASK 3999 127.0.0.1:6381")
				}
				return v, err
			}})
			if _, err := s.VotesOf(ctx, "bob", []string{a.ID}); !errors.Is(err, ErrTryAgain) {
				t.Errorf("VotesOf with an ASK for its %s: %v, want ErrTryAgain", cmd, err)
			}
			s.pool = s.pool.(*hookPool).pool
		}
	})
}
