package layout

import "math"

// The orderings a store keeps a sorted set of (By + name for articles,
// Kids + "<name>:<parent>" for comments), each item at its Value.
var (
	// Orderings are the articles': score and time always, the optional
	// orders (WithOrders) where enabled.
	Orderings = []string{"score", "time", "top", "hot", "best", "controversial"}
	// OptionalOrders are the orders a store keeps where enabled, in the
	// identity's and the records' order (lib/base.lua ORDERS).
	OptionalOrders = Orderings[2:]
	// CommentOrderings are the orderings of a comment's replies besides
	// Best and Top's (lib/tree.lua CORDERINGS).
	CommentOrderings = []string{"hot", "controversial", "score"}
)

// Score is an article's score, posted + weight × (up − down), in the
// float64 steps of lib/record.lua value: the product is rounded on its
// own, never fused into the sum, so the two are equal bit for bit.
func Score(posted int64, weight float64, up, down int64) float64 {
	return float64(posted) + float64(weight*float64(up-down))
}

// Value is the value by which an ordering ranks an item posted at posted
// (Unix s) with vote weight weight and up and down votes, as lib/record.lua
// value works it out: equal bit for bit in score, time and top, and to
// about 1e-12 in hot, best and controversial, whose log10, sqrt and pow
// Redis's Lua takes from its C library. With s = up − down and n = up +
// down: top is s; hot is Reddit's sign(s)·log10(max(|s|, 1)) + (posted −
// 1134028003)/45000; best the lower bound of the Wilson score interval of
// up/n at z = 1.281551565545 (80%), 0 with no votes; controversial
// n^(min(up, down)/max(up, down)) when up and down are both above 0, else
// 0. An unknown ordering gets NaN.
func Value(ordering string, posted int64, weight float64, up, down int64) float64 {
	u, d := float64(up), float64(down)
	s := u - d
	switch ordering {
	case "score":
		return Score(posted, weight, up, down)
	case "time":
		return float64(posted)
	case "top":
		return s
	case "hot":
		sign := 0.0
		if s > 0 {
			sign = 1
		} else if s < 0 {
			sign = -1
		}
		return float64(sign*math.Log10(math.Max(math.Abs(s), 1))) + float64(posted-1134028003)/45000
	case "best":
		n := u + d
		if n == 0 {
			return 0
		}
		z := 1.281551565545 // a variable: Lua's z*z is a float64 product, not an exact constant
		q := u / n
		return (q + z*z/(2*n) - float64(z*math.Sqrt((float64(q*(1-q))+z*z/(4*n))/n))) / (1 + z*z/n)
	case "controversial":
		if up <= 0 || down <= 0 {
			return 0
		}
		b := d / u
		if up < down {
			b = u / d
		}
		return math.Pow(u+d, b)
	}
	return math.NaN()
}
