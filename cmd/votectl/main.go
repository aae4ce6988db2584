// Command votectl is the operator's tool of a voting store: it inspects,
// checks and repairs, exports and imports a store, its comments with
// its articles, imports the layout of "Redis in Action", shows and
// changes the store's recorded shared options, and lists the store's
// Functions libraries.
//
//	votectl -redis ADDR -prefix PREFIX info
//	votectl -redis ADDR -prefix PREFIX article ID
//	votectl -redis ADDR -prefix PREFIX user NAME
//	votectl -redis ADDR -prefix PREFIX check [-repair] [-karma UP,DOWN] [-vote-cost UP,DOWN]
//	votectl -redis ADDR -prefix PREFIX export > backup.jsonl
//	votectl -redis ADDR -prefix PREFIX import [-resume] < backup.jsonl
//	votectl -redis ADDR -prefix PREFIX import-book [-book-prefix P] [-resume]
//	votectl -redis ADDR -prefix PREFIX options [-dry-run] [-orders top,hot -karma 1,-1 -vote-cost 1,6 -min-karma 0,30 -vote-limit 100/24h -post-interval 15m -comment-interval 30s -repost-after 48h -edit-window 15m -user-pages -unique-links -vote-log -vote-events 100000]
//	votectl -redis ADDR functions [-prune]
//	votectl -redis ADDR -prefix PREFIX votes-by USER
//	votectl -redis ADDR -prefix PREFIX voters [-comment] ID
//	votectl -redis ADDR -prefix PREFIX reverse USER
//	votectl -redis ADDR -prefix PREFIX suspend USER -mode refuse|shadow -for DURATION
//	votectl -redis ADDR -prefix PREFIX unsuspend USER
//	votectl -redis ADDR -prefix PREFIX events [-follow] [-after ID]
//	votectl help [COMMAND]
//
// -redis takes host:port or a redis:// URL (default localhost:6379).
// votectl -h, votectl help and votectl COMMAND -h print the usage and
// every flag on stdout and exit 0. Exit status: 0 ok, 1 check found
// problems, 2 bad input, usage or a Redis error, with one line on stderr
// saying which (and the usage, for a flag or command votectl does not
// know). Work over the whole
// store runs in bounded steps (no command reads more than a few hundred
// entries) and shows its progress on stderr when stderr is a terminal
// (-quiet turns it off). The README's "votectl" section shows the output.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// Exit statuses.
const (
	exitOK       = 0
	exitProblems = 1
	exitError    = 2
)

// errProblems is returned by check when an invariant breaks: exit 1.
var errProblems = errors.New("problems found")

// errHelp is returned by a command asked for its usage (-h), which it
// printed on stdout: exit 0.
var errHelp = errors.New("help requested")

// usageError is bad input: exit 2, with the message, then usage where
// the input was a flag or command votectl does not know.
type usageError struct{ msg, usage string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...interface{}) error {
	return usageError{msg: fmt.Sprintf(format, args...)}
}

// env is what every command gets.
type env struct {
	ctx    context.Context
	pool   *redis.Pool
	l      layout
	prefix string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	quiet  bool
	tty    bool // stderr is a terminal: progress bars
	now    func() time.Time
}

const usage = `usage: votectl [-redis ADDR] [-prefix PREFIX] [-quiet] COMMAND [ARGS]

commands:
  info                      layout, options, counts and memory per key family
  article ID                one article as JSON: fields, groups, open voters
  user NAME                 karma, submitted and upvoted pages as JSON
  check [-repair]           the store's invariants; exit 1 when any breaks
  export                    the whole store as JSON lines on stdout
  import [-resume]          JSON lines from stdin into an empty store
  import-book [-book-prefix P] [-resume]  the book's layout on the same server into an empty store
  options [-dry-run] [-karma 1,-1 ...]  show the recorded shared options, or change those given (Reconfigure)
  functions [-prune]        the voting Functions libraries on the server
  votes-by USER             a user's standing votes (WithVoteLog), JSON lines
  voters [-comment] ID      the standing voters of an article or comment, JSON lines
  reverse USER              take back every vote of a user, resumable, progress on stderr
  suspend USER -mode refuse|shadow -for DURATION  suspend a user
  unsuspend USER            end a user's suspension
  events [-follow]          the vote events (WithVoteEvents), JSON lines
  help [COMMAND]            this usage, or a command's flags

votectl COMMAND -h lists the command's flags.

flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// run runs votectl with args and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) int {
	fs := flag.NewFlagSet("votectl", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the error and the usage are printed below
	fs.Usage = func() {}
	addr := fs.String("redis", "localhost:6379", "the Redis at `addr` (host:port or redis:// URL)")
	prefix := fs.String("prefix", voting.DefaultKeyPrefix, "the store's key `prefix`")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp) || err == nil && fs.Arg(0) == "help" && fs.NArg() == 1:
		printUsage(stdout)
		return exitOK
	case err != nil:
		fmt.Fprintln(stderr, "votectl:", err)
		printUsage(stderr)
		return exitError
	case fs.NArg() == 0:
		printUsage(stderr)
		return exitError
	}
	cmd, cmdArgs := fs.Arg(0), fs.Args()[1:]
	if cmd == "help" {
		// help COMMAND: the command's usage, as COMMAND -h prints it.
		cmd, cmdArgs = fs.Arg(1), []string{"-h"}
	}
	if *prefix == "" || len(*prefix) > voting.MaxPrefixLen || strings.ContainsAny(*prefix, "{}") {
		fmt.Fprintf(stderr, "votectl: bad -prefix %q: non-empty, at most %d bytes, no braces\n", *prefix, voting.MaxPrefixLen)
		return exitError
	}
	e := &env{ctx: ctx, prefix: *prefix, l: newLayout(*prefix), stdin: stdin, stdout: stdout, stderr: stderr,
		quiet: *quiet, tty: tty && !*quiet, now: time.Now}
	a := *addr
	e.pool = &redis.Pool{MaxIdle: 2, IdleTimeout: time.Minute, DialContext: func(ctx context.Context) (redis.Conn, error) {
		opts := []redis.DialOption{redis.DialConnectTimeout(5 * time.Second),
			redis.DialReadTimeout(30 * time.Second), redis.DialWriteTimeout(30 * time.Second)}
		if strings.Contains(a, "://") {
			return redis.DialURLContext(ctx, a, opts...)
		}
		return redis.DialContext(ctx, "tcp", a, opts...)
	}}
	defer e.pool.Close()
	err = dispatch(e, cmd, cmdArgs)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errProblems):
		return exitProblems
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintln(stderr, "votectl:", u.msg)
		if u.usage != "" {
			fmt.Fprint(stderr, u.usage)
		}
	} else {
		fmt.Fprintln(stderr, "votectl:", redact(err.Error(), a))
	}
	return exitError
}

// commands are votectl's commands, by name.
var commands = map[string]func(e *env, args []string) error{
	"info": cmdInfo, "article": cmdArticle, "user": cmdUser, "check": cmdCheck,
	"export": cmdExport, "import": cmdImport, "import-book": cmdImportBook,
	"options": cmdOptions, "functions": cmdFunctions,
	"votes-by": cmdVotesBy, "voters": cmdVoters, "reverse": cmdReverse,
	"suspend": cmdSuspend, "unsuspend": cmdUnsuspend, "events": cmdEvents,
}

// synopses are each command's arguments and what it does, for its
// usage (subFlags).
var synopses = map[string]string{
	"info":    "info\n\nThe store's layout, options, counts and memory per key family, and the server's health.",
	"article": "article ID\n\nOne article as JSON: its fields, groups and, while voting is open, its voters whose votes count (shadow_voters: those of shadowed users, which count nowhere).",
	"user":    "user NAME\n\nA user's karma, submitted and upvoted pages as JSON.",
	"check": "check [-repair] [-karma UP,DOWN] [-vote-cost UP,DOWN]\n\n" +
		"The store's invariants, a problem a line; exit 1 when any breaks.",
	"export":      "export > backup.jsonl\n\nThe whole store as JSON lines on stdout.",
	"import":      "import [-resume] < backup.jsonl\n\nJSON lines from stdin into an empty store.",
	"import-book": "import-book [-book-prefix P] [-resume]\n\nThe book's layout on the same server into an empty store.",
	"options": "options [-dry-run] [FLAGS]\n\n" +
		"Without flags, the store's recorded identity and the options its data shows, as JSON.\n" +
		"With flags, it changes the options the flags name, keeps the others as recorded, and\n" +
		"records the result by Reconfigure (resumable: run it again after an interruption),\n" +
		"printing the record before and after; -dry-run prints what it would record, and changes\n" +
		"nothing. A flag's value off (or an empty value) turns its option off, as =false does a\n" +
		"switch's: -karma off, -orders off, -user-pages=false. The processes then need the new\n" +
		"options: the running ones get ErrIncompatible on every write until restarted with them.",
	"functions": "functions [-prune]\n\nThe voting Functions libraries on the server, and which is this votectl's.",
	"votes-by":  "votes-by USER\n\nThe user's standing votes, newest first, a JSON object a line (WithVoteLog).",
	"voters":    "voters [-comment] ID\n\nThe standing voters of an article (or comment), a JSON object a line.",
	"reverse": "reverse USER\n\nTakes back every standing vote of the user (WithVoteLog), in bounded steps, with\n" +
		"its progress on stderr; run it again after an interruption to resume.",
	"suspend":   "suspend USER [-mode refuse|shadow] [-for DURATION]\n\nSuspends the user until now plus DURATION.",
	"unsuspend": "unsuspend USER\n\nEnds the user's suspension.",
	"events":    "events [-follow] [-after ID]\n\nThe vote events (WithVoteEvents), a JSON object a line; -follow waits for more.",
}

func dispatch(e *env, cmd string, args []string) error {
	if run, ok := commands[cmd]; ok {
		return run(e, args)
	}
	return usagef("unknown command %q (commands: info, article, user, check, export, import, import-book, options, functions, "+
		"votes-by, voters, reverse, suspend, unsuspend, events; votectl -h lists them)", cmd)
}

// subFlags parses a command's own flags; n is the number of positional
// arguments it takes. Asked for its usage (-h), it prints the command's
// synopsis and flags on stdout and returns errHelp; a flag it does not
// know gets a usageError with them.
func subFlags(e *env, name string, args []string, n int, define func(fs *flag.FlagSet)) (*flag.FlagSet, error) {
	fs := flag.NewFlagSet("votectl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if define != nil {
		define(fs)
	}
	help := func() string {
		var b strings.Builder
		fmt.Fprintf(&b, "usage: votectl [-redis ADDR] [-prefix PREFIX] [-quiet] %s\n", synopses[name])
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			b.WriteString("\nflags:\n")
			fs.SetOutput(&b)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		return b.String()
	}
	if err := fs.Parse(interspersed(fs, args)); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, help())
		return nil, errHelp
	} else if err != nil {
		return nil, usageError{msg: fmt.Sprintf("%s: %v", name, err), usage: help()}
	}
	if fs.NArg() != n {
		return nil, usagef("%s takes %d argument(s), got %d: %q", name, n, fs.NArg(), fs.Args())
	}
	return fs, nil
}

// boolFlag parses the flags of the command name, which takes no argument
// and one flag, the bool flag named (usage), and returns its value.
func boolFlag(e *env, name string, args []string, named, usage string) (bool, error) {
	var v *bool
	if _, err := subFlags(e, name, args, 0, func(fs *flag.FlagSet) { v = fs.Bool(named, false, usage) }); err != nil {
		return false, err
	}
	return *v, nil
}

// scanFlags parses the flags of a command that reads the whole store and
// takes no argument (subFlags), then scans the store (scanStore).
func scanFlags(e *env, name string, args []string, define func(fs *flag.FlagSet)) (*inventory, error) {
	if _, err := subFlags(e, name, args, 0, define); err != nil {
		return nil, err
	}
	return e.scanStore()
}

// redact hides the password of a redis:// URL in a message.
func redact(msg, addr string) string {
	if i, j := strings.Index(addr, "://"), strings.LastIndex(addr, "@"); i >= 0 && j > i {
		return strings.ReplaceAll(msg, addr, addr[:i+3]+"...@"+addr[j+1:])
	}
	return msg
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// store returns a Store of the package on e's prefix, for the reads the
// API has.
func (e *env) store(opts ...voting.Option) (*voting.Store, error) {
	return voting.New(e.pool, append([]voting.Option{voting.WithKeyPrefix(e.prefix)}, opts...)...)
}

// interspersed returns args with the flags fs defines first, each with
// its value, then the other arguments in their order, so that an
// argument may come before a command's flags: "suspend bob -mode shadow
// -for 1h" parses as "suspend -mode shadow -for 1h bob". A word that
// names no flag of fs ("-1", "-h") stays where it was among the others,
// and so does everything from "--" on.
func interspersed(fs *flag.FlagSet, args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, _, valued := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if !strings.HasPrefix(a, "-") || f == nil {
			rest = append(rest, a)
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !valued && !(ok && b.IsBoolFlag()) {
			if i+1 == len(args) { // its value missing: left for Parse to say so where it stood
				rest = append(rest, a)
				continue
			}
			flags = append(flags, a)
			i++
			a = args[i]
		}
		flags = append(flags, a)
	}
	return append(flags, rest...)
}
