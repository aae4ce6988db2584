package voting

import (
	"fmt"
	"strconv"
)

// VoteType is a user's vote on an article.
type VoteType int8

// The three votes. Their values are what a vote adds to the article's
// net count: a switch from [Downvote] to [Upvote] moves it by 2.
const (
	NoVote   VoteType = 0  // no vote, or a cancelled one
	Upvote   VoteType = 1  // an up arrow
	Downvote VoteType = -1 // a down arrow
)

// ParseVoteType parses "up", "down" or "none" (the forms String returns).
// Anything else gets an error wrapping [ErrInvalidVote], with a VoteType
// that is not Valid, never [NoVote]: a caller that drops the error cannot
// cancel a vote by accident.
func ParseVoteType(s string) (VoteType, error) {
	switch s {
	case "up":
		return Upvote, nil
	case "down":
		return Downvote, nil
	case "none":
		return NoVote, nil
	}
	return invalidVote, fmt.Errorf("%w: %q is not up, down or none", ErrInvalidVote, s)
}

// invalidVote is what ParseVoteType returns with its error.
const invalidVote VoteType = -128

// String returns "up", "down" or "none", or "VoteType(n)" for a value
// outside the three constants.
func (v VoteType) String() string {
	switch v {
	case Upvote:
		return "up"
	case Downvote:
		return "down"
	case NoVote:
		return "none"
	}
	return "VoteType(" + strconv.Itoa(int(v)) + ")"
}

// Valid reports whether v is one of [NoVote], [Upvote] and [Downvote].
func (v VoteType) Valid() bool { return v >= Downvote && v <= Upvote }

// MarshalText encodes v as String does, so VoteType reads as "up", "down"
// or "none" in JSON. A value outside the constants gets [ErrInvalidVote].
func (v VoteType) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidVote, int(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText decodes what ParseVoteType accepts.
func (v *VoteType) UnmarshalText(b []byte) error { return unmarshalText(v, b, ParseVoteType) }

// unmarshalText is the UnmarshalText of a type parsed by parse: it sets
// *v to what parse makes of b, or returns parse's error and leaves *v as
// it was.
func unmarshalText[T any](v *T, b []byte, parse func(string) (T, error)) error {
	p, err := parse(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
