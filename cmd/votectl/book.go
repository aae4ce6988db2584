package main

import (
	"flag"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
	"github.com/votekit/voting/internal/restore"
)

// The layout of "Redis in Action" (section 1.3) and its ports, under a
// prefix P ("" in the book): P+"article:" the id counter; P+"article:ID"
// hashes of title, link, poster, time and votes (upvotes); P+"score:" and
// P+"time:" zsets of "article:ID"; P+"voted:ID" sets of the voters, kept
// a week; P+"group:NAME" sets of "article:ID". The book's post_article
// stores time.time(), a float, which redis-py writes as Python's repr
// ("1794637728.0", "1794637728.4259844"), and its ports time(), an
// integer: import-book takes both (bookTime).
const (
	bookWeek   = 7 * 86400
	bookWeight = 432
)

func cmdImportBook(e *env, args []string) error {
	var bp *string
	var resume *bool
	if _, err := subFlags(e, "import-book", args, 0, func(fs *flag.FlagSet) {
		bp = fs.String("book-prefix", "", "the `prefix` of the book's keys (article:ID, score:, time:, voted:ID, group:NAME)")
		resume = fs.Bool("resume", false, "finish an interrupted import-book")
	}); err != nil {
		return err
	}
	arts, seq, warnings, err := readBook(e, *bp)
	if err != nil {
		return err
	}
	if err := e.target(*resume); err != nil {
		return err
	}
	now := e.now().UnixMilli()
	p := e.progress("importing the book's articles", len(arts))
	for _, a := range arts {
		if err := e.putArticle(a, now); err != nil {
			return fmt.Errorf("%w; the import is unfinished: run the same import-book with -resume", err)
		}
		p.add(1)
	}
	p.done()
	if err := e.putEntries([]restore.Entry{{Kind: restore.Seq, ID: seq}}); err != nil {
		return err
	}
	// The book's store has no shared option: its identity is the layout's.
	if err := e.record(voting.Identity{Layout: voting.LayoutVersion}, ""); err != nil {
		return err
	}
	if _, err := e.do("DEL", e.l.marker()); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "votectl: import-book:", w)
	}
	if !e.quiet {
		fmt.Fprintf(e.stderr, "votectl: imported %d articles of the book's layout under %q\n", len(arts), e.prefix)
	}
	return nil
}

// readBook reads and checks the book's whole layout; it writes nothing.
func readBook(e *env, bp string) ([]*importArticle, string, []string, error) {
	times, err := e.zsetAll(bp + "time:")
	if err != nil {
		return nil, "", nil, err
	}
	if len(times) == 0 {
		return nil, "", nil, usagef("no book layout: %q is empty or missing", bp+"time:")
	}
	scores, err := e.zsetAll(bp + "score:")
	if err != nil {
		return nil, "", nil, err
	}
	var ids []string
	for m := range times {
		id, ok := strings.CutPrefix(m, "article:")
		if !ok || !canonicalID(id) {
			return nil, "", nil, usagef("%s: member %q is not article:ID; nothing was written", bp+"time:", m)
		}
		ids = append(ids, id)
	}
	sortIDs(ids)
	groups := map[string][]string{}
	cursor := "0"
	for {
		reply, err := redis.Values(e.do("SCAN", cursor, "MATCH", globEscape(bp)+"group:*", "COUNT", step))
		if err != nil {
			return nil, "", nil, err
		}
		var found []string
		if _, err := redis.Scan(reply, &cursor, &found); err != nil {
			return nil, "", nil, err
		}
		for _, k := range found {
			g := strings.TrimPrefix(k, bp+"group:")
			members, err := e.setAll(k)
			if err != nil {
				return nil, "", nil, err
			}
			if err := checkName("group name", g); err != nil {
				return nil, "", nil, usagef("%s: %v; nothing was written", k, err)
			}
			for _, m := range members {
				id := strings.TrimPrefix(m, "article:")
				if _, ok := times[m]; !ok {
					return nil, "", nil, usagef("%s: member %q is no article of %s; nothing was written", k, m, bp+"time:")
				}
				groups[id] = append(groups[id], g)
			}
		}
		if cursor == "0" {
			break
		}
	}
	var out []*importArticle
	var warnings []string
	now := e.now().Unix()
	for at := 0; at < len(ids); at += step {
		chunk := ids[at:min(at+step, len(ids))]
		cmds := make([]cmd, len(chunk))
		for i, id := range chunk {
			cmds[i] = cmd{"HMGET", []interface{}{bp + "article:" + id, "title", "link", "poster", "time", "votes"}}
		}
		replies, err := e.pipeline(cmds)
		if err != nil {
			return nil, "", nil, err
		}
		for i, id := range chunk {
			key := bp + "article:" + id
			f, err := redis.Values(replies[i], nil)
			if err != nil {
				return nil, "", nil, fmt.Errorf("HMGET %s: %w", key, err)
			}
			var s [5]string
			for j, name := range []string{"title", "link", "poster", "time", "votes"} {
				b, ok := f[j].([]byte)
				if !ok {
					return nil, "", nil, usagef("%s: no field %q; nothing was written", key, name)
				}
				s[j] = string(b)
			}
			t, posted, ok := bookTime(s[3])
			if !ok {
				return nil, "", nil, usagef("%s: time %q is not a Unix time in seconds (a decimal number, its whole seconds from %d to %d); nothing was written",
					key, s[3], int64(-maxExact), int64(maxExact))
			}
			votes, err := strconv.ParseInt(s[4], 10, 64)
			if err != nil || ilayout.CheckCount("votes", votes) != nil {
				return nil, "", nil, usagef("%s: votes %q is not a whole number from 0 to %d; nothing was written", key, s[4], int64(ilayout.MaxCount))
			}
			if err := checkName("poster", s[2]); err != nil {
				return nil, "", nil, usagef("%s: %v; nothing was written", key, err)
			}
			m := "article:" + id
			if times[m] != t {
				return nil, "", nil, usagef("%s: time %s, but %s holds %v; nothing was written", key, s[3], bp+"time:", times[m])
			}
			a := &importArticle{id: id, groups: groups[id], r: record{Up: votes, Posted: posted,
				Weight: formatWeight(bookWeight), Poster: s[2], Title: s[0], Link: s[1]}}
			score, ok := scores[m]
			switch {
			case !ok:
				return nil, "", nil, usagef("%s: article %s missing; nothing was written", bp+"score:", id)
			case math.Abs(score-(t+bookWeight*float64(votes))) > bookSlack:
				warnings = append(warnings, fmt.Sprintf("article %s: the book's score %v is not time+432*votes = %v; the store keeps %v",
					id, score, t+bookWeight*float64(votes), recordValue(a.r, "score")))
			}
			if posted+bookWeek > now {
				a.closes, a.expMs = posted+bookWeek, (posted+bookWeek)*1000
				voters, err := e.setAll(bp + "voted:" + id)
				if err != nil {
					return nil, "", nil, err
				}
				up := 1
				for _, u := range voters {
					if err := checkName("voter", u); err != nil {
						return nil, "", nil, usagef("%s: %v; nothing was written", bp+"voted:"+id, err)
					}
					a.votes = append(a.votes, line{User: u, Vote: &up})
				}
				if int64(len(voters)) != votes {
					warnings = append(warnings, fmt.Sprintf("article %s: %d voters in %s, but votes is %d; the store keeps votes",
						id, len(voters), bp+"voted:"+id, votes))
				}
			}
			out = append(out, a)
		}
	}
	seq, err := redis.String(e.do("GET", bp+"article:"))
	if err == redis.ErrNil {
		seq = ids[len(ids)-1]
	} else if err != nil {
		return nil, "", nil, fmt.Errorf("GET %s: %w", bp+"article:", err)
	}
	if !canonicalID(seq) || lessID(seq, ids[len(ids)-1]) {
		return nil, "", nil, usagef("%s holds %q, not an id at least the highest article's; nothing was written", bp+"article:", seq)
	}
	return out, seq, warnings, nil
}

// bookSlack is how far the book's score may be from time+432*votes,
// summed in floats (the book's ZINCRBY adds 432 a vote to a float time),
// before import-book warns of it: far below a vote's 432.
const bookSlack = 1e-3

// bookDecimal is a decimal number as the book and its ports write a
// time: an integer (time()), or Python's repr of a float (time.time(),
// as redis-py sends it), which has a fraction and, past 1e16, an
// exponent.
var bookDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// bookTime reads the book's time field: the time as written (t) and its
// whole Unix second (posted), which the store keeps, as its score
// formula counts Unix seconds; ok is false for anything else, such as
// "nan", "inf", a hexadecimal float, or a second past maxExact.
func bookTime(s string) (t float64, posted int64, ok bool) {
	if !bookDecimal.MatchString(s) {
		return 0, 0, false
	}
	t, err := strconv.ParseFloat(s, 64)
	sec := math.Floor(t)
	if err != nil || sec < -maxExact || sec > maxExact {
		return 0, 0, false
	}
	return t, int64(sec), true
}

func globEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte(`*?[]\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
