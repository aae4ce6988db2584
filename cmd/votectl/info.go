package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
	ilayout "github.com/votekit/voting/internal/layout"
)

// shownOptions are the shared options as the store's data shows them:
// info and options print them beside the recorded ones, as a
// cross-check.
type shownOptions struct {
	orders                        []string
	karma, userPages, uniqueLinks bool
}

func (e *env) shownOptions(inv *inventory) shownOptions {
	o := shownOptions{orders: []string{}}
	for _, ord := range optionalOrders {
		if inv.has(famBy, ord) {
			o.orders = append(o.orders, ord)
		}
	}
	o.karma = len(inv.names(famKarma)) > 0
	o.userPages = len(inv.names(famSubmitted))+len(inv.names(famUpvoted)) > 0
	o.uniqueLinks = len(inv.names(famLink)) > 0
	return o
}

func (o shownOptions) String() string {
	orders := "none"
	if len(o.orders) > 0 {
		orders = strings.Join(o.orders, ",")
	}
	return fmt.Sprintf("orders %s, karma %s, user pages %s, links kept %s", orders, onOff(o.karma), onOff(o.userPages), onOff(o.uniqueLinks))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// memorySample is how many keys of a family info weighs with MEMORY
// USAGE; the family's total is extrapolated from them.
const memorySample = 200

func cmdInfo(e *env, args []string) error {
	inv, err := scanFlags(e, "info", args, nil)
	if err != nil {
		return err
	}
	w := e.stdout
	fmt.Fprintf(w, "store %q: %d keys\n", e.prefix, inv.n)
	st, id, ok, err := e.recorded()
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(w, "identity recorded: %s (this votectl reads layout %d)\n", id, voting.LayoutVersion)
		if r := e.rulesOf(st); r != "" {
			fmt.Fprintf(w, "rules: %s\n", r)
		}
	} else {
		fmt.Fprintf(w, "identity recorded: none (an empty store, or one written before layouts were recorded)\n")
	}
	fmt.Fprintf(w, "options the data shows: %s\n", e.shownOptions(inv))
	if err := e.commentsReadable(inv); err != nil {
		fmt.Fprintf(w, "WARNING: %v\n", err)
	}
	if inv.has(famOther, importMarker) {
		fmt.Fprintf(w, "WARNING: an unfinished import (%s): run import -resume\n", e.l.marker())
	}
	fmt.Fprintf(w, "%-12s %10s %14s\n", "family", "keys", "memory")
	var total int64
	for _, fam := range familyOrder {
		names := inv.names(fam)
		if len(names) == 0 {
			continue
		}
		sample := names
		if len(sample) > memorySample {
			// An even spread over the sorted names.
			sample = make([]string, memorySample)
			for i := range sample {
				sample[i] = names[i*len(names)/memorySample]
			}
		}
		cmds := make([]cmd, len(sample))
		for i, n := range sample {
			key := e.l.key(fam, n)
			if fam == famOther {
				key = e.l.tag + n // a key of no family: its name is all after the tag
			}
			cmds[i] = cmd{"MEMORY", []interface{}{"USAGE", key}}
		}
		replies, err := e.pipeline(cmds)
		if err != nil {
			return err
		}
		var sum int64
		for _, r := range replies {
			n, _ := redis.Int64(r, nil)
			sum += n
		}
		est := sum * int64(len(names)) / int64(len(sample))
		total += est
		approx := ""
		if len(sample) < len(names) {
			approx = "~"
		}
		fmt.Fprintf(w, "%-12s %10d %14s\n", strings.TrimSuffix(fam, ":"), len(names), approx+bytesize(est))
	}
	fmt.Fprintf(w, "%-12s %10d %14s\n", "total", inv.n, bytesize(total))
	switch n, err := st.Count(e.ctx); {
	case errors.Is(err, voting.ErrIncompatible):
		// A store to migrate (the WARNING above): info shows it still.
		fmt.Fprintf(w, "articles: %d records (Count refused: %v)\n", len(inv.ids(famArticle)), err)
	case err != nil:
		return fmt.Errorf("counting articles: %w", err)
	default:
		fmt.Fprintf(w, "articles: %d (Count), %d records\n", n, len(inv.ids(famArticle)))
	}
	fmt.Fprintf(w, "open for voting: %d\n", len(inv.ids(famVoted)))
	h, err := st.Check(e.ctx)
	if err != nil {
		return err
	}
	if printHealth(e, h) {
		return errProblems
	}
	return nil
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func printJSON(e *env, v interface{}) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdArticle(e *env, args []string) error {
	fs, err := subFlags(e, "article", args, 1, nil)
	if err != nil {
		return err
	}
	id := fs.Arg(0)
	if !canonicalID(id) {
		return usagef("article: %q is not an id", id)
	}
	st, err := e.store()
	if err != nil {
		return err
	}
	a, err := st.Article(e.ctx, id)
	if err != nil {
		return err
	}
	groups, err := st.Groups(e.ctx, id)
	if err != nil {
		return err
	}
	rec, err := redis.String(e.do("GET", e.l.key(famArticle, id)))
	if err != nil {
		return err
	}
	r, err := ilayout.ParseRecord(rec)
	if err != nil {
		return fmt.Errorf("article %s: %v", id, err)
	}
	out := map[string]interface{}{"id": a.ID, "title": a.Title, "link": a.Link, "poster": a.Poster,
		"posted": a.Posted.Unix(), "up": a.Upvotes, "down": a.Downvotes, "score": a.Score,
		"weight": r.WeightValue(), "orders": r.OrderList(), "groups": groups, "open": false}
	votedKey := e.l.key(famVoted, id)
	if m, err := redis.String(e.do("HGET", votedKey, "")); err == nil {
		mt, err := ilayout.ParseVoteMeta(m)
		if err != nil {
			return fmt.Errorf("article %s: %v", id, err)
		}
		// The voters whose votes count are the counts, up + down; the
		// shadowed users' (Shadow), which count nowhere, are their fields.
		// A field may hold "0", a vote taken back, which is no voter, so
		// the record's length counts neither.
		h, err := e.hashAll(votedKey)
		if err != nil {
			return err
		}
		var shadow int64
		for u, v := range h {
			if u != "" && shadowVote(v) != 0 {
				shadow++
			}
		}
		out["open"], out["closes"], out["voters"] = true, mt.Closes, mt.Up+mt.Down
		if shadow > 0 {
			out["shadow_voters"] = shadow
		}
	} else if err != redis.ErrNil {
		return err
	}
	return printJSON(e, out)
}

func cmdUser(e *env, args []string) error {
	fs, err := subFlags(e, "user", args, 1, nil)
	if err != nil {
		return err
	}
	user := fs.Arg(0)
	st, err := e.store(voting.WithUserPages())
	if err != nil {
		return err
	}
	out := map[string]interface{}{"user": user}
	// Karma: the API needs WithKarma to read it; the sign is the layout's.
	karma, err := redis.Float64(e.do("ZSCORE", e.l.karma(), user))
	switch err {
	case nil:
		out["karma"] = -int64(karma)
	case redis.ErrNil:
		out["karma"] = 0
	default:
		return err
	}
	for _, page := range []struct {
		name string
		read func() ([]voting.Article, error)
	}{
		{"submitted", func() ([]voting.Article, error) { return st.Submitted(e.ctx, user, 1) }},
		{"upvoted", func() ([]voting.Article, error) { return st.Upvoted(e.ctx, user, 1) }},
	} {
		list, err := page.read()
		if err != nil {
			return fmt.Errorf("%s: %w", page.name, err)
		}
		rows := make([]map[string]interface{}, len(list))
		for i, a := range list {
			rows[i] = map[string]interface{}{"id": a.ID, "title": a.Title, "link": a.Link, "poster": a.Poster,
				"posted": a.Posted.Unix(), "up": a.Upvotes, "down": a.Downvotes, "score": a.Score}
		}
		out[page.name] = rows
	}
	return printJSON(e, out)
}

// cmdFunctions lists the voting libraries on the server, and which is
// this library version's; -prune deletes the others.
func cmdFunctions(e *env, args []string) error {
	prune, err := boolFlag(e, "functions", args, "prune", "delete the voting libraries of other versions")
	if err != nil {
		return err
	}
	reply, err := redis.Values(e.do("FUNCTION", "LIST", "LIBRARYNAME", "voting_*"))
	if err != nil {
		return fmt.Errorf("FUNCTION LIST (the server needs Redis 7 Functions): %w", err)
	}
	var names []string
	for _, lib := range reply {
		fields, _ := redis.Values(lib, nil)
		for i := 0; i+1 < len(fields); i += 2 {
			if k, _ := redis.String(fields[i], nil); k == "library_name" {
				n, _ := redis.String(fields[i+1], nil)
				if strings.HasPrefix(n, "voting_") {
					names = append(names, n)
				}
			}
		}
	}
	sort.Strings(names)
	ours, err := libraryName(e)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "this votectl's library: %s\n", ours)
	for _, n := range names {
		mark := "other version"
		if n == ours {
			mark = "this version"
		}
		if prune && n != ours {
			if _, err := e.do("FUNCTION", "DELETE", n); err != nil {
				return fmt.Errorf("FUNCTION DELETE %s: %w", n, err)
			}
			mark = "deleted"
		}
		fmt.Fprintf(e.stdout, "%s  %s\n", n, mark)
	}
	if len(names) == 0 {
		fmt.Fprintln(e.stdout, "no voting library loaded")
	}
	return nil
}
