package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	ilayout "github.com/votekit/voting/internal/layout"
)

// Every read over the store is in bounded steps: SCAN, ZSCAN, HSCAN and
// SSCAN with COUNT step, and MGET and pipelines of at most step keys, so
// that no command runs long (~10 ms) whatever the store's size.
const step = 500

// do runs one command on a pooled connection under e's context.
func (e *env) do(cmd string, args ...interface{}) (interface{}, error) {
	c, err := e.pool.GetContext(e.ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, e.ctx, cmd, args...)
}

// pipeline sends cmds on one connection and returns their replies; a
// reply that is a Redis error is returned in place.
type cmd struct {
	name string
	args []interface{}
}

func (e *env) pipeline(cmds []cmd) ([]interface{}, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	c, err := e.pool.GetContext(e.ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	for _, x := range cmds {
		if err := c.Send(x.name, x.args...); err != nil {
			return nil, err
		}
	}
	if err := c.Flush(); err != nil {
		return nil, err
	}
	out := make([]interface{}, len(cmds))
	for i := range cmds {
		r, err := redis.ReceiveContext(c, e.ctx)
		if _, ok := err.(redis.Error); ok {
			r, err = err, nil
		}
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// inventory is every key of the store, by family, from one SCAN.
type inventory struct {
	keys map[string][]string // family -> names after the family's prefix, sorted
	n    int
}

func (inv *inventory) names(fam string) []string { return inv.keys[fam] }

func (inv *inventory) has(fam, name string) bool {
	list := inv.keys[fam]
	i := sort.SearchStrings(list, name)
	return i < len(list) && list[i] == name
}

// ids returns a family's names that are ids, in numeric order.
func (inv *inventory) ids(fam string) []string {
	var out []string
	for _, n := range inv.keys[fam] {
		if canonicalID(n) {
			out = append(out, n)
		}
	}
	sortIDs(out)
	return out
}

// scanStore is scan for the commands that read a store: one without
// any key is a usage error, as a prefix mistyped.
func (e *env) scanStore() (*inventory, error) {
	inv, err := e.scan()
	if err == nil && inv.n == 0 {
		return nil, usagef("no store under prefix %q (no key matches %s)", e.prefix, e.l.pattern())
	}
	return inv, err
}

// scan lists every key of the store, SCAN COUNT step at a time.
func (e *env) scan() (*inventory, error) {
	inv := &inventory{keys: map[string][]string{}}
	p := e.progress("scanning keys", 0)
	cursor := "0"
	for {
		reply, err := redis.Values(e.do("SCAN", cursor, "MATCH", e.l.pattern(), "COUNT", step))
		if err != nil {
			return nil, fmt.Errorf("SCAN: %w", err)
		}
		var found []string
		if _, err := redis.Scan(reply, &cursor, &found); err != nil {
			return nil, err
		}
		for _, k := range found {
			if fam, name, ok := e.l.family(k); ok {
				inv.keys[fam] = append(inv.keys[fam], name)
				inv.n++
			}
		}
		p.add(len(found))
		if cursor == "0" {
			break
		}
	}
	p.done()
	for f, list := range inv.keys {
		sort.Strings(list)
		// SCAN may return a key twice.
		out := list[:0]
		for i, k := range list {
			if i == 0 || k != list[i-1] {
				out = append(out, k)
			}
		}
		inv.keys[f] = out
	}
	return inv, nil
}

// empty reports whether the store has no key, and one it has.
func (e *env) empty() (bool, string, error) {
	cursor := "0"
	for {
		reply, err := redis.Values(e.do("SCAN", cursor, "MATCH", e.l.pattern(), "COUNT", step))
		if err != nil {
			return false, "", fmt.Errorf("SCAN: %w", err)
		}
		var found []string
		if _, err := redis.Scan(reply, &cursor, &found); err != nil {
			return false, "", err
		}
		if len(found) > 0 {
			return false, found[0], nil
		}
		if cursor == "0" {
			return true, "", nil
		}
	}
}

// scanAll walks a hash, set or zset with HSCAN, SSCAN or ZSCAN, calling
// fn with each batch: field/value or member/score pairs (sets: members).
func (e *env) scanAll(command, key string, fn func(items []string) error) error {
	cursor := "0"
	for {
		reply, err := redis.Values(e.do(command, key, cursor, "COUNT", step))
		if err != nil {
			return fmt.Errorf("%s %s: %w", command, key, err)
		}
		var items []string
		if _, err := redis.Scan(reply, &cursor, &items); err != nil {
			return err
		}
		if err := fn(items); err != nil {
			return err
		}
		if cursor == "0" {
			return nil
		}
	}
}

// zsetAll returns a zset's members and scores (ZSCAN: members may come
// twice; the last wins).
func (e *env) zsetAll(key string) (map[string]float64, error) {
	out := map[string]float64{}
	err := e.scanAll("ZSCAN", key, func(items []string) error {
		for i := 0; i+1 < len(items); i += 2 {
			v, err := strconv.ParseFloat(items[i+1], 64)
			if err != nil {
				return fmt.Errorf("%s: score %q", key, items[i+1])
			}
			out[items[i]] = v
		}
		return nil
	})
	return out, err
}

func (e *env) hashAll(key string) (map[string]string, error) {
	out := map[string]string{}
	err := e.scanAll("HSCAN", key, func(items []string) error {
		for i := 0; i+1 < len(items); i += 2 {
			out[items[i]] = items[i+1]
		}
		return nil
	})
	return out, err
}

func (e *env) setAll(key string) ([]string, error) {
	seen := map[string]bool{}
	err := e.scanAll("SSCAN", key, func(items []string) error {
		for _, m := range items {
			seen[m] = true
		}
		return nil
	})
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, err
}

// logChunk is how much of a vote log one read takes (GETRANGE): a
// user's log of 100,000 votes, about 2 MB, is read in steps that run no
// longer than the other reads' (step).
const logChunk = 64 << 10

// maxLogLine bounds what journal takes for one line: far more than the
// longest line the store writes (about 40 bytes), so that a value of no
// log, without newlines, is read in chunks all the same.
const maxLogLine = 256

// logLine is one line of a vote log, as journal reads it.
type logLine struct {
	e    ilayout.LogEntry
	off  int64  // the offset of its first byte
	ok   bool   // false for a line the store never writes
	text string // for ok false: the line's first bytes, without its newline
}

// journal reads the vote log at key (a string of lines, ilayout.LogEntry),
// logChunk bytes a read (GETRANGE), and calls fn with each line, oldest
// first, until fn returns an error, which it returns. Bytes after the
// last newline, which the store never leaves, are a line of ok false; so
// is one longer than maxLogLine, whose rest is skipped. A log gone is
// no line.
func (e *env) journal(key string, fn func(l logLine) error) error {
	var carry []byte // the start of a line the last read cut
	var at int64     // the offset of the next read
	skip := false    // skipping the rest of a line too long
	for {
		b, err := redis.Bytes(e.do("GETRANGE", key, at, at+logChunk-1))
		if err != nil {
			return fmt.Errorf("GETRANGE %s: %w", key, err)
		}
		start := at - int64(len(carry)) // the offset of buf's first byte
		buf := append(carry, b...)
		at += int64(len(b))
		if skip {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				buf = nil
			} else {
				buf, start, skip = buf[i+1:], start+int64(i)+1, false
			}
		}
		var failed error
		rest := ilayout.LogLines(buf, start, func(le ilayout.LogEntry, off int64, ok bool) {
			if failed != nil {
				return
			}
			l := logLine{e: le, off: off, ok: ok}
			if !ok {
				text := buf[off-start:]
				l.text = cut(string(text[:bytes.IndexByte(text, '\n')]))
			}
			failed = fn(l)
		})
		if failed != nil {
			return failed
		}
		end := len(b) < logChunk
		if len(rest) > 0 && !skip && (end || len(rest) > maxLogLine) {
			if err := fn(logLine{off: at - int64(len(rest)), text: cut(string(rest))}); err != nil {
				return err
			}
			rest, skip = nil, !end
		}
		if end {
			return nil
		}
		carry = append([]byte(nil), rest...)
	}
}

// cut shortens s, a value read for a message, to its first 64 bytes.
func cut(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// mget reads string keys step at a time; a missing key is nil.
func (e *env) mget(keys []string, fn func(i int, v []byte)) error {
	for at := 0; at < len(keys); at += step {
		end := min(at+step, len(keys))
		args := make([]interface{}, end-at)
		for i, k := range keys[at:end] {
			args[i] = k
		}
		vals, err := redis.Values(e.do("MGET", args...))
		if err != nil {
			return fmt.Errorf("MGET: %w", err)
		}
		for i, v := range vals {
			b, _ := v.([]byte)
			fn(at+i, b)
		}
	}
	return nil
}

// progress reports long work on stderr when it is a terminal: a bar
// (when the total is known) and a rate, rewritten in place.
type progress struct {
	e          *env
	what       string
	total, n   int
	start, out time.Time
	w          io.Writer
}

func (e *env) progress(what string, total int) *progress {
	p := &progress{e: e, what: what, total: total, start: time.Now()}
	if e.tty {
		p.w = e.stderr
	}
	return p
}

func (p *progress) add(n int) {
	p.n += n
	if p.w == nil || time.Since(p.out) < 200*time.Millisecond {
		return
	}
	p.out = time.Now()
	p.print()
}

func (p *progress) print() {
	rate := float64(p.n) / max(time.Since(p.start).Seconds(), 1e-3)
	if p.total > 0 {
		const width = 30
		done := min(width*p.n/p.total, width)
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d %.0f/s ", p.what, strings.Repeat("#", done), strings.Repeat(".", width-done), p.n, p.total, rate)
		return
	}
	fmt.Fprintf(p.w, "\r%s %d %.0f/s ", p.what, p.n, rate)
}

func (p *progress) done() {
	if p.w != nil {
		p.print()
		fmt.Fprintln(p.w)
	}
}
