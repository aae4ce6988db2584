package voting

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// UserKarma is a user and their karma, as TopUsers lists them.
type UserKarma struct {
	User  string `json:"user"`
	Karma int64  `json:"karma"`
}

// Karma returns the user's karma ([WithKarma]): 0 for a user who has
// none. It reads what every store sharing the prefix has kept; a store
// without WithKarma keeps none.
func (s *Store) Karma(ctx context.Context, user string) (int64, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "Karma"}, func(ctx context.Context) (int64, error) { return s.Karma(ctx, user) })
	}
	const op = "karma"
	if err := checkName("user", user); err != nil {
		return 0, opErr(op, err)
	}
	rest, err := s.call(ctx, op, karmaScript, "", []interface{}{s.keys.karma, user})
	if err != nil {
		return 0, err
	}
	if len(rest) != 1 {
		return 0, opErr(op, fmt.Errorf("reply of %d fields, want 2", len(rest)+1))
	}
	k, err := parseKarma(rest[0])
	if err != nil {
		return 0, opErr(op, err)
	}
	return k, nil
}

// TopUsers returns page (1-based) of the users with karma ([WithKarma]),
// highest karma first, ties by name (byte order), in one round trip, with
// pages of the store's page size ([WithPageSize]). A user whose karma
// went back to 0 stays listed. A page past the end is empty; a page below
// 1 gets [ErrInvalidArgument].
func (s *Store) TopUsers(ctx context.Context, page int) ([]UserKarma, error) {
	if s.hooked(ctx) {
		return observe(ctx, s, Call{Op: "TopUsers", Page: page, HasPage: true}, func(ctx context.Context) ([]UserKarma, error) { return s.TopUsers(ctx, page) })
	}
	const op = "top users"
	if page < 1 {
		return nil, opErr(op, fmt.Errorf("%w: page %d is below 1", ErrInvalidArgument, page))
	}
	if int64(page-1) >= maxRank/int64(s.pageSize) {
		return []UserKarma{}, nil
	}
	start := int64(page-1) * int64(s.pageSize)
	rest, err := s.call(ctx, op, topUsersScript, "", []interface{}{s.keys.karma, start, start + int64(s.pageSize) - 1})
	if err != nil {
		return nil, err
	}
	if len(rest)%2 != 0 {
		return nil, opErr(op, fmt.Errorf("reply of %d fields is not pairs", len(rest)))
	}
	list := make([]UserKarma, len(rest)/2)
	for i := range list {
		user, ok := rest[2*i].([]byte)
		if !ok {
			return nil, opErr(op, fmt.Errorf("user field: unexpected %T", rest[2*i]))
		}
		k, err := parseKarma(rest[2*i+1])
		if err != nil {
			return nil, opErr(op, err)
		}
		list[i] = UserKarma{User: string(user), Karma: k}
	}
	return list, nil
}

// parseKarma parses a karma as the karma key holds it: its negative, a
// sorted set's score, so that ZRANGE lists the highest first and ties by
// name.
func parseKarma(v interface{}) (int64, error) {
	b, ok := v.([]byte)
	if !ok {
		return 0, fmt.Errorf("karma field: unexpected %T", v)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 1<<63 {
		return 0, fmt.Errorf("karma %q is not a number", b)
	}
	return -int64(f), nil
}
