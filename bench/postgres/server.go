package postgres

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql
)

// binDirs are where PostgreSQL's programs are looked for besides PATH:
// Debian keeps them out of it, per major version.
var binDirs, _ = filepath.Glob("/usr/lib/postgresql/*/bin")

// Server is a PostgreSQL cluster of this process's own: made by initdb in
// a temporary directory, listening on a free loopback port and on a
// socket in that directory, stopped by Stop. It never touches a cluster
// it did not make.
type Server struct {
	Dir  string // the temporary directory: the data directory and the socket
	Port int
	DSN  string // for database/sql with the "pgx" driver

	pgCtl, data string
	asUser      []string // runuser's arguments when run as root, which initdb refuses
}

// ErrNotInstalled is Start's error where initdb, pg_ctl or postgres is
// missing.
var ErrNotInstalled = errors.New("PostgreSQL is not installed (Debian: apt-get install postgresql)")

// program finds a PostgreSQL program on PATH or in binDirs, newest
// first.
func program(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for i := len(binDirs) - 1; i >= 0; i-- {
		if p := filepath.Join(binDirs[i], name); fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no %s", ErrNotInstalled, name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Start makes and starts a cluster with the given postgres settings
// ("shared_buffers=256MB"). Run as root, it runs PostgreSQL as the user
// postgres, which the Debian package makes, with runuser.
func Start(settings ...string) (*Server, error) {
	initdb, err := program("initdb")
	if err != nil {
		return nil, err
	}
	pgCtl, err := program("pg_ctl")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "voting-postgres-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, pgCtl: pgCtl, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			os.RemoveAll(dir)
			return nil, errors.New("run as root without runuser: initdb will not run as root")
		}
		s.asUser = []string{runuser, "-u", "postgres", "--"}
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("chown postgres %s: %v: %s", dir, err, out)
		}
	}
	if out, err := s.command(initdb, "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := []string{"-p " + strconv.Itoa(s.Port), "-k " + dir, "-c listen_addresses=127.0.0.1"}
	for _, o := range settings {
		opts = append(opts, "-c "+o)
	}
	if out, err := s.command(pgCtl, "-D", s.data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60",
		"-o", strings.Join(opts, " "), "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v: %s%s", err, out, log)
	}
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
	return s, nil
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	if s.asUser != nil {
		return exec.Command(s.asUser[0], append(append(s.asUser[1:], name), args...)...)
	}
	return exec.Command(name, args...)
}

// Open opens a database/sql pool of at most conns connections.
func (s *Server) Open(conns int) (*sql.DB, error) {
	db, err := sql.Open("pgx", s.DSN)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxLifetime(time.Hour)
	return db, db.Ping()
}

// Stop stops the server (fast shutdown) and removes its directory.
func (s *Server) Stop() error {
	out, err := s.command(s.pgCtl, "-D", s.data, "-m", "fast", "-w", "stop").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	if rmErr := os.RemoveAll(s.Dir); err == nil {
		err = rmErr
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
