package voting

import (
	"fmt"
	"strconv"

	"github.com/votekit/voting/internal/layout"
)

// VoteType is a user's vote on an article or a comment, as a read reports
// it ([NoVote], [Upvote], [Downvote]), and a ballot, what a call to
// [Store.Vote] asks for ([Upvote], [Downvote], [CancelVote]).
type VoteType int8

// The votes. Upvote's and Downvote's values are what they add to the net
// count: a switch from [Downvote] to [Upvote] moves it by 2.
//
// NoVote, the zero value, is what a read says where a user has no vote;
// it is no ballot: a Vote, VoteComment or VoteBatch ballot of NoVote gets
// [ErrInvalidVote] and changes nothing, so a request whose vote field was
// left out cannot take a vote back. Taking a vote back is [CancelVote],
// which reads never report.
const (
	NoVote     VoteType = 0  // no vote: a read's answer, never a ballot
	Upvote     VoteType = 1  // an up arrow
	Downvote   VoteType = -1 // a down arrow
	CancelVote VoteType = 2  // a ballot that takes the user's vote back
)

// ParseVoteType parses "up", "down", "cancel" or "none" (the forms String
// returns). Anything else gets an error wrapping [ErrInvalidVote], with a
// VoteType that is not Valid, never [NoVote] or [CancelVote]: a caller
// that drops the error cannot take a vote back by accident.
func ParseVoteType(s string) (VoteType, error) {
	switch s {
	case "up":
		return Upvote, nil
	case "down":
		return Downvote, nil
	case "cancel":
		return CancelVote, nil
	case "none":
		return NoVote, nil
	}
	return invalidVote, fmt.Errorf("%w: %q is not up, down, cancel or none", ErrInvalidVote, s)
}

// invalidVote is what ParseVoteType returns with its error.
const invalidVote VoteType = -128

// String returns "up", "down", "cancel" or "none", or "VoteType(n)" for a
// value outside the four constants.
func (v VoteType) String() string {
	switch v {
	case Upvote:
		return "up"
	case Downvote:
		return "down"
	case CancelVote:
		return "cancel"
	case NoVote:
		return "none"
	}
	return "VoteType(" + strconv.Itoa(int(v)) + ")"
}

// Valid reports whether v is one of the four constants.
func (v VoteType) Valid() bool { return v >= Downvote && v <= CancelVote }

// IsBallot reports whether v is a ballot a vote call takes: [Upvote],
// [Downvote] or [CancelVote]; not [NoVote], the zero value.
func (v VoteType) IsBallot() bool { return v == Upvote || v == Downvote || v == CancelVote }

// held reports whether v is a vote a user can hold, as reads report it.
func (v VoteType) held() bool { return v >= Downvote && v <= Upvote }

// storedVote reads a user's value in a voter record
// (layout.ParseVoteValue) as the vote its voter sees, a shadow vote
// (Shadow) included, and "0", a vote taken back, as NoVote; ok is false
// for a value that is no vote.
func storedVote(v string) (_ VoteType, ok bool) {
	vote, _, ok := layout.ParseVoteValue(v)
	return VoteType(vote), ok
}

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
