package voting

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/votekit/voting/internal/layout"
)

// Order is the order of a page of articles. Every order breaks ties by id
// as a number: newest first in descending orders, oldest first in
// ascending ones.
type Order int

// The orders of a page. ScoreDesc, ScoreAsc, TimeDesc and TimeAsc are
// always available; Top, Hot, Best and Controversial are descending only
// and kept for the articles a store posts with them enabled ([WithOrders]).
// With s = up − down and n = up + down:
const (
	ScoreDesc Order = iota // highest score first: the front page
	ScoreAsc               // lowest score first
	TimeDesc               // newest first
	TimeAsc                // oldest first
	// Top is by net votes, s.
	Top
	// Hot is Reddit's hot: sign(s)·log10(max(|s|, 1)) + (posted − 1134028003)/45000.
	Hot
	// Best is the lower bound of the Wilson score interval of up/n at
	// z = 1.281551565545 (80%); 0 with no votes.
	Best
	// Controversial is n^(min(up, down)/max(up, down)) when up and down
	// are both above 0, else 0.
	Controversial
)

var orderNames = [...]string{"score-desc", "score-asc", "time-desc", "time-asc", "top", "hot", "best", "controversial"}

// Valid reports whether o is one of the Order constants.
func (o Order) Valid() bool { return o >= ScoreDesc && o <= Controversial }

// String returns the order's name: "score-desc", "score-asc",
// "time-desc", "time-asc", "top", "hot", "best" or "controversial", or
// "Order(n)" for a value outside the constants.
func (o Order) String() string {
	if o.Valid() {
		return orderNames[o]
	}
	return "Order(" + strconv.Itoa(int(o)) + ")"
}

// shortNames are the short names ParseOrder accepts besides String's:
// "score" and "time" for the descending orders, as a front page reads,
// and Reddit's "new" and "old" for newest and oldest first.
var shortNames = map[string]Order{"score": ScoreDesc, "time": TimeDesc, "new": TimeDesc, "old": TimeAsc}

// ParseOrder parses the names String returns, and the short names
// "score" (ScoreDesc), "time" and "new" (TimeDesc), and "old" (TimeAsc).
// Names are case-sensitive. Anything else gets an error wrapping
// [ErrInvalidArgument], with an Order that is not Valid.
func ParseOrder(s string) (Order, error) {
	for o, name := range orderNames {
		if s == name {
			return Order(o), nil
		}
	}
	if o, ok := shortNames[s]; ok {
		return o, nil
	}
	return -1, fmt.Errorf("%w: unknown order %q", ErrInvalidArgument, s)
}

// MarshalText encodes o as String does, so Order reads as its name in
// JSON. A value outside the constants gets [ErrInvalidArgument].
func (o Order) MarshalText() ([]byte, error) {
	if !o.Valid() {
		return nil, fmt.Errorf("%w: unknown order %d", ErrInvalidArgument, int(o))
	}
	return []byte(o.String()), nil
}

// UnmarshalText decodes what ParseOrder accepts, short names included.
func (o *Order) UnmarshalText(b []byte) error { return unmarshalText(o, b, ParseOrder) }

// ordering returns the name of the ordering an order reads (keys.go), and
// whether it reads it from the highest value down.
func (o Order) ordering() (name string, desc bool) {
	switch o {
	case ScoreDesc:
		return "score", true
	case ScoreAsc:
		return "score", false
	case TimeDesc:
		return "time", true
	case TimeAsc:
		return "time", false
	}
	return o.String(), true
}

// articleScore is an article's score, posted + weight × (up − down)
// (layout.Score, bit for bit lib/record.lua value's).
func articleScore(posted int64, weight float64, up, down int64) float64 {
	return layout.Score(posted, weight, up, down)
}

// Value returns the value by which o ranks an article posted at posted
// (whole seconds) with vote weight weight (the [WithVoteWeight] it was
// posted with) and up upvotes and down downvotes: its score in ScoreDesc
// and ScoreAsc, posted + weight × (up − down); its post time in Unix
// seconds in TimeDesc and TimeAsc; the formulas above in the others. It
// is the value the store keeps for the article in the order's sorted set
// (docs/LAYOUT.md, "Keys"), as its scripts work it out (lua/lib/record.lua
// value): equal bit for bit in the score, time and Top orders, and to
// about 1e-12 in Hot, Best and Controversial, whose log10, sqrt and pow
// Redis's Lua takes from its C library. An Order outside the constants
// gets NaN.
func (o Order) Value(posted time.Time, weight float64, up, down int64) float64 {
	if !o.Valid() {
		return math.NaN()
	}
	name, _ := o.ordering()
	return layout.Value(name, posted.Unix(), weight, up, down)
}

// optional reports whether o is kept only where enabled ([WithOrders]).
func (o Order) optional() bool { return o >= Top && o <= Controversial }
