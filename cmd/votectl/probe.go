package main

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/votekit/voting"
)

// libraryName learns the name of this library version's Functions
// library from the package itself: a Store on a pool whose connections
// answer its first FCALL with an error, sending nothing to Redis, while
// noting the function it calls ("<library>_<script>").
func libraryName(e *env) (string, error) {
	p := &probePool{}
	st, err := voting.New(p, voting.WithKeyPrefix(e.prefix))
	if err != nil {
		return "", err
	}
	st.Count(e.ctx) // fails by design
	if p.fn == "" {
		return "", errors.New("could not learn this version's library name")
	}
	i := strings.LastIndexByte(p.fn, '_')
	return p.fn[:i], nil
}

var errProbe = redis.Error("votectl: probe")

type probePool struct{ fn string }

func (p *probePool) Get() redis.Conn { return probeConn{p} }

type probeConn struct{ p *probePool }

func (c probeConn) Close() error { return nil }
func (c probeConn) Err() error   { return nil }
func (c probeConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if (cmd == "FCALL" || cmd == "FCALL_RO") && len(args) > 0 && c.p.fn == "" {
		c.p.fn, _ = args[0].(string)
	}
	return nil, errProbe
}
func (c probeConn) Send(string, ...interface{}) error { return errProbe }
func (c probeConn) Flush() error                      { return errProbe }
func (c probeConn) Receive() (interface{}, error)     { return nil, errProbe }
