package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/votekit/voting"
)

// The moderators' commands: a user's votes, who voted, taking a user's
// votes back, suspensions and the vote events, each through the
// package's methods on a store opened with the recorded options
// (recorded), so that its writes are the store's own.

// modPage is how many entries a command reads per call.
const modPage = 500

// moderated opens the store with its recorded options.
func (e *env) moderated() (*voting.Store, error) {
	st, _, _, err := e.recorded()
	return st, err
}

// moderatedArg reads the arguments of the command name, which takes one
// (returned: a user, an id) and no flags, and opens the store
// (moderated).
func (e *env) moderatedArg(name string, args []string) (*voting.Store, string, error) {
	fs, err := subFlags(e, name, args, 1, nil)
	if err != nil {
		return nil, "", err
	}
	st, err := e.moderated()
	return st, fs.Arg(0), err
}

// cmdVotesBy prints a user's standing votes, newest first, a JSON object
// a line (Store.VotesBy).
func cmdVotesBy(e *env, args []string) error {
	st, user, err := e.moderatedArg("votes-by", args)
	if err != nil {
		return err
	}
	return printWalk(e, func(cursor string) ([]voting.UserVote, string, error) {
		return st.VotesBy(e.ctx, user, cursor, modPage)
	})
}

// printWalk prints every item of a cursor-paged read, read a page at a
// time from the cursor "" until read returns "", a JSON object a line.
func printWalk[T any](e *env, read func(cursor string) ([]T, string, error)) error {
	enc := json.NewEncoder(e.stdout)
	cursor := ""
	for {
		list, next, err := read(cursor)
		if err != nil {
			return err
		}
		for _, v := range list {
			if err := enc.Encode(v); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		cursor = next
	}
}

// cmdVoters prints the standing voters of an article, or of a comment
// with -comment, a JSON object a line (Store.Voters, CommentVoters).
func cmdVoters(e *env, args []string) error {
	var comment *bool
	fs, err := subFlags(e, "voters", args, 1, func(fs *flag.FlagSet) {
		comment = fs.Bool("comment", false, "ID is a comment's")
	})
	if err != nil {
		return err
	}
	st, err := e.moderated()
	if err != nil {
		return err
	}
	read := st.Voters
	if *comment {
		read = st.CommentVoters
	}
	return printWalk(e, func(cursor string) ([]voting.Voter, string, error) {
		return read(e.ctx, fs.Arg(0), cursor, modPage)
	})
}

// cmdReverse takes back every standing vote of a user (Store.ReverseVotes),
// in bounded steps, with its progress on stderr; interrupted, it is run
// again to resume, and a second run takes back nothing more.
func cmdReverse(e *env, args []string) error {
	st, user, err := e.moderatedArg("reverse", args)
	if err != nil {
		return err
	}
	// ReverseVotes loops over its bounded steps until the log is empty;
	// it is called in slices of a second, each resuming where the last
	// stopped, so that the progress shows between them. A step whose
	// reply a slice's end cuts off is applied but counted in no slice.
	start, total := time.Now(), 0
	for {
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		n, err := st.ReverseVotes(ctx, user)
		cancel()
		total += n
		if e.tty {
			fmt.Fprintf(e.stderr, "\rreverse %s: %d taken back", user, total)
		}
		if err == nil {
			break
		}
		if errors.Is(err, context.DeadlineExceeded) && e.ctx.Err() == nil {
			continue
		}
		if e.tty {
			fmt.Fprintln(e.stderr)
		}
		if !errors.Is(err, voting.ErrNotAllowed) && !errors.Is(err, voting.ErrInvalidArgument) { // no rerun mends those
			fmt.Fprintf(e.stderr, "votectl: reverse %s: %d taken back before the error; run it again to resume\n", user, total)
		}
		return err
	}
	if e.tty {
		fmt.Fprintln(e.stderr)
	}
	fmt.Fprintf(e.stdout, "reverse %s: %d votes taken back in %v\n", user, total, time.Since(start).Round(time.Millisecond))
	return nil
}

// cmdSuspend suspends a user (Store.Suspend).
func cmdSuspend(e *env, args []string) error {
	var mode *string
	var d *time.Duration
	fs, err := subFlags(e, "suspend", args, 1, func(fs *flag.FlagSet) {
		mode = fs.String("mode", "refuse", "`refuse` (the user's votes, posts and comments get ErrNotAllowed) or shadow (votes accepted, counted nowhere)")
		d = fs.Duration("for", 24*time.Hour, "how long, from now on the store's clock (this machine's): a `duration`, e.g. 72h")
	})
	if err != nil {
		return err
	}
	m := map[string]voting.Suspension{"refuse": voting.Refuse, "shadow": voting.Shadow}[*mode]
	if m == 0 {
		return usagef("suspend: -mode %q: refuse or shadow", *mode)
	}
	if *d <= 0 {
		return usagef("suspend: -for %v is not positive", *d)
	}
	// A store that records no identity (a new one, or a mistyped
	// -prefix) would record votectl's defaults with the suspension, and
	// refuse its service's options: the service records them first.
	st, _, ok, err := e.recorded()
	if err != nil {
		return err
	}
	if !ok {
		return usagef("suspend: the store records no identity: record it first (votectl options, with its service's flags, or the service's first call)")
	}
	until := e.now().Add(*d)
	if err := st.Suspend(e.ctx, fs.Arg(0), m, until); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "suspended %s (%v) until %s\n", fs.Arg(0), m, until.UTC().Format(time.RFC3339))
	return nil
}

// cmdUnsuspend ends a user's suspension (Store.Unsuspend).
func cmdUnsuspend(e *env, args []string) error {
	st, user, err := e.moderatedArg("unsuspend", args)
	if err != nil {
		return err
	}
	if err := st.Unsuspend(e.ctx, user); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "unsuspended %s\n", user)
	return nil
}

// cmdEvents prints the vote events, a JSON object a line, from the
// oldest kept or after -after; -follow waits for more until interrupted.
func cmdEvents(e *env, args []string) error {
	var follow *bool
	var after *string
	var every *time.Duration
	if _, err := subFlags(e, "events", args, 0, func(fs *flag.FlagSet) {
		follow = fs.Bool("follow", false, "wait for more events, until interrupted")
		after = fs.String("after", "", "the `ID` of the event to start after (default: the oldest kept)")
		every = fs.Duration("every", time.Second, "with -follow, how often to look for more")
	}); err != nil {
		return err
	}
	if *every <= 0 {
		return usagef("events: -every %v is not positive", *every)
	}
	st, err := e.moderated()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(e.stdout)
	cursor := *after
	for {
		list, next, err := st.VoteEvents(e.ctx, cursor, modPage)
		if err != nil {
			if *follow && e.ctx.Err() != nil {
				return nil
			}
			return err
		}
		for _, ev := range list {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		cursor = next
		if len(list) == modPage {
			continue
		}
		if !*follow {
			return nil
		}
		select {
		case <-e.ctx.Done():
			return nil
		case <-time.After(*every):
		}
	}
}
