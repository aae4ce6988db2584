package voting

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// A store's identity in Redis: what a store records (Identity, Recorded)
// and the one operation that changes it (Reconfigure). The identity's
// type, its text and the refusal of a store of another one are
// identity.go's, below the store.

// Identity returns the store's own identity: what it records in an empty
// store, and what it needs to find recorded to write.
func (s *Store) Identity() Identity {
	return Identity{Layout: s.shared.Layout, Options: append([]string(nil), s.shared.Options...)}
}

// Recorded returns the identity recorded in Redis for the store's
// prefix, read on the primary, and whether there is one: none for an
// empty store (Post records one with its first write), and none for a
// store whose data was written before layouts were recorded (Count tells
// the two apart). Text at the record's key that is not an identity
// (written by hand) gets an error.
func (s *Store) Recorded(ctx context.Context) (Identity, bool, error) {
	if s.hooked(ctx) {
		var found bool
		id, err := observe(ctx, s, Call{Op: "Recorded"}, func(ctx context.Context) (id Identity, err error) {
			id, found, err = s.Recorded(ctx)
			return id, err
		})
		return id, found, err
	}
	const op = "recorded"
	c, err := getConn(ctx, s.pool, s.keys.seq)
	if err != nil {
		return Identity{}, false, opErr(op, err)
	}
	c = s.counted(ctx, c)
	defer c.Close()
	text, err := redis.String(do(ctx, c, "GET", []interface{}{s.keys.record}))
	if errors.Is(err, redis.ErrNil) {
		return Identity{}, false, nil
	}
	if err != nil {
		return Identity{}, false, opErr(op, err)
	}
	id, ok := parseIdentity(text)
	if !ok {
		return Identity{}, false, opErr(op, fmt.Errorf("key %s holds %q, not a store's identity", s.keys.record, text))
	}
	return id, true, nil
}

// backfillStep is the articles a step of Reconfigure's backfill of the
// links goes through: well under a millisecond of Redis time.
const backfillStep = 200

func (s *Store) reconfigureArgs(phase string) []interface{} {
	k := s.keys
	return []interface{}{k.seq, k.orderingKey("time"), k.backfill, phase, k.article, k.link, backfillStep}
}

// Reconfigure records the store's identity ([Store.Identity]: its
// layout and shared options) as the identity of its prefix in Redis, in
// place of the one recorded, and brings the existing data in line, in
// steps of one short script each (doc.go, "The store's identity", says
// what each option does to existing data). From its first step on, the
// processes with the options recorded before get [ErrIncompatible] on
// every write, and this store's options write: restart them with these
// options (doc.go gives the rolling deploy).
//
// The recorded layout must be this package's ([LayoutVersion]), or 3,
// the previous one, which it migrates to 4 by recording the identity
// (layout 4 adds the families of comments, of which a store of layout 3
// has none: nothing else moves); else it returns an error wrapping
// ErrIncompatible and changes nothing. A store
// with data and no record (written before layouts were recorded) is
// adopted where its newest article is a record of this layout.
//
// With [WithUniqueLinks] turned on, it indexes the links of the live
// articles, oldest first, 200 a step: where two live articles share a
// link, the oldest keeps it. It can be interrupted and called again: it
// goes on where it stopped. It returns the identity recorded before (a
// zero Identity for none).
func (s *Store) Reconfigure(ctx context.Context) (Identity, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Reconfigure"}, s.Reconfigure)
	}
	const op = "reconfigure"
	reply, err := s.eval(ctx, reconfigureScript, s.reconfigureArgs("record"))
	late := unreplicated(&err)
	status, rest, err := decode(reply, err)
	var before, backfill string
	if err == nil {
		err = scan(status, rest, &before, &backfill)
	}
	if err != nil {
		return Identity{}, opErr(op, err)
	}
	if late != nil {
		return Identity{}, replicationErr(op, late)
	}
	was, _ := parseIdentity(before)
	for backfill != "" {
		reply, err := s.eval(ctx, reconfigureScript, s.reconfigureArgs("links"))
		late := unreplicated(&err)
		status, rest, err := decode(reply, err)
		var done int64
		if err == nil {
			err = scan(status, rest, &done)
		}
		if err != nil {
			return was, opErr(op, err)
		}
		if late != nil {
			return was, replicationErr(op, late)
		}
		if done == 1 {
			break
		}
	}
	return was, nil
}
