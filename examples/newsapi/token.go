package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/votekit/voting"
)

// The service's bearer tokens. A token is a JSON Web Token (RFC 7519) in
// its compact form, signed with HMAC-SHA256 (HS256), with exactly three
// claims:
//
//	base64url(`{"alg":"HS256","typ":"JWT"}`) "." base64url(claims) "." base64url(HMAC-SHA256(secret, the first two parts and their dot))
//	claims: {"sub": "alice", "role": "user", "exp": 1735732800}
//
// base64url is RFC 4648's URL alphabet without padding. sub is the
// user's name, valid as the store's user names; role is "user" or
// "moderator"; exp is the Unix second the token expires at. A token
// with any other header, claim or encoding is refused, so that each
// token has one spelling and a reader meets no field it would ignore.

// role is what a token lets its user do beyond acting as themselves.
type role string

// The roles a token may carry.
const (
	// roleUser acts as themselves only.
	roleUser role = "user"
	// roleModerator may also delete others' articles and comments and
	// change the groups of others' articles.
	roleModerator role = "moderator"
)

// parseRole returns the role named s.
func parseRole(s string) (role, error) {
	switch r := role(s); r {
	case roleUser, roleModerator:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not user or moderator", s)
}

// claims are what a token says: who, with which role, until when.
type claims struct {
	Sub  string `json:"sub"`
	Role role   `json:"role"`
	Exp  *int64 `json:"exp"` // a pointer, so that a missing exp is told from 0
}

// tokenHeader is the one JOSE header the service writes and takes.
var tokenHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// maxToken is the longest token the service reads: the longest name,
// every byte escaped, fits in it.
const maxToken = 4096

// Why a token is refused; verify's errors wrap one of these. None of
// them carries the token or the secret.
var (
	errTokenMalformed = errors.New("the token is malformed")
	errTokenAlg       = errors.New("the token is not signed with HS256")
	errTokenSignature = errors.New("the token's signature is wrong")
	errTokenExpired   = errors.New("the token has expired")
)

// sign returns the token of c, signed with key. It checks c as verify
// would, expiry aside: a token it returns is one verify takes until exp.
func sign(key secret, c claims) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signed := tokenHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(key, signed)), nil
}

// verify returns the claims of token if key signed it and it has not
// expired at now. Its errors wrap errTokenMalformed, errTokenAlg,
// errTokenSignature or errTokenExpired.
func verify(key secret, token string, now time.Time) (claims, error) {
	if len(token) > maxToken {
		return claims{}, fmt.Errorf("%w: longer than %d bytes", errTokenMalformed, maxToken)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}, fmt.Errorf("%w: it must be three base64url parts joined by dots", errTokenMalformed)
	}
	var raw [3][]byte
	for i, p := range parts {
		// Strict: no padding, no stray bits, no line breaks, so that
		// one token has one spelling.
		b, err := base64.RawURLEncoding.Strict().DecodeString(p)
		if err != nil || strings.ContainsAny(p, "\r\n") {
			return claims{}, fmt.Errorf("%w: part %d is not base64url without padding", errTokenMalformed, i+1)
		}
		raw[i] = b
	}
	var h struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
	}
	if err := decodeStrict(raw[0], &h); err != nil {
		return claims{}, fmt.Errorf("%w: its header is not a JSON object of alg and typ", errTokenMalformed)
	}
	// The algorithm is the service's, never the token's choice: "none"
	// or another MAC is refused before any signature is read.
	if h.Alg != "HS256" || h.Typ != "" && h.Typ != "JWT" {
		return claims{}, errTokenAlg
	}
	if !hmac.Equal(raw[2], mac(key, parts[0]+"."+parts[1])) {
		return claims{}, errTokenSignature
	}
	var c claims
	if err := decodeStrict(raw[1], &c); err != nil {
		return claims{}, fmt.Errorf("%w: its claims are not a JSON object of sub, role and exp", errTokenMalformed)
	}
	if err := c.check(); err != nil {
		return claims{}, fmt.Errorf("%w: %v", errTokenMalformed, err)
	}
	if now.Unix() >= *c.Exp {
		return claims{}, errTokenExpired
	}
	return c, nil
}

// check reports what is wrong with c, if anything, expiry aside.
func (c claims) check() error {
	if err := checkUserName(c.Sub); err != nil {
		return err
	}
	if _, err := parseRole(string(c.Role)); err != nil {
		return err
	}
	if c.Exp == nil {
		return errors.New("exp is missing")
	}
	return nil
}

// mac is the HMAC-SHA256 of s under key.
func mac(key secret, s string) []byte {
	m := hmac.New(sha256.New, key)
	io.WriteString(m, s)
	return m.Sum(nil)
}

// decodeStrict decodes the JSON object b into v, refusing unknown
// fields and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the object")
	}
	return nil
}

// checkUserName applies the store's rule for the user names its writes
// take (voting.CheckUserName), in words without the library's prefix: a
// token names a user the store takes, so that a credential never fails
// later as a bad argument.
func checkUserName(s string) error {
	if err := voting.CheckUserName(s); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), voting.ErrInvalidArgument.Error()+": "))
	}
	return nil
}
