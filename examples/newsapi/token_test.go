package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/votekit/voting"
)

// testKey is the secret of the tests' tokens.
var testKey = secret("the tests' secret, of more than 32 bytes")

// b64 is s in base64url without padding, as tokens encode their parts.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// signParts returns header.payload signed with key by HMAC-SHA256,
// whatever the header says: a token sign would never write.
func signParts(key secret, header, payload string) string {
	signed := b64(header) + "." + b64(payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(key, signed))
}

// A token is an HS256 JSON Web Token: this one was computed apart from
// the service, with Python's hmac, so that the format stays what the
// documentation says.
func TestTokenFormat(t *testing.T) {
	const want = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsInJvbGUiOiJtb2RlcmF0b3IiLCJleHAiOjE3MzU3MzI4MDB9.NbiKVY671SDZNdNPCyZ0b0jyrsy0pjh1k7rBgtkH4d8"
	exp := int64(1735732800)
	token, err := sign(testKey, claims{Sub: "alice", Role: roleModerator, Exp: &exp})
	if err != nil || token != want {
		t.Fatalf("sign = %q, %v; want %q", token, err, want)
	}
	c, err := verify(testKey, want, time.Unix(exp-1, 0))
	if err != nil || c.Sub != "alice" || c.Role != roleModerator || *c.Exp != exp {
		t.Errorf("verify = %+v, %v", c, err)
	}
}

// sign and verify round-trip every name the store takes, both roles.
func TestTokenRoundTrip(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour).Unix()
	for _, name := range []string{"alice", "Zoë Ørsted", "a b", `quote"back\slash`, "<script>&", "名前", strings.Repeat("é", voting.MaxNameLen/2)} {
		for _, r := range []role{roleUser, roleModerator} {
			token, err := sign(testKey, claims{Sub: name, Role: r, Exp: &exp})
			if err != nil {
				t.Fatalf("sign %q %s: %v", name, r, err)
			}
			if len(token) > maxToken {
				t.Errorf("the token of %q is %d bytes, over maxToken", name, len(token))
			}
			c, err := verify(testKey, token, now)
			if err != nil || c.Sub != name || c.Role != r || *c.Exp != exp {
				t.Errorf("verify(sign(%q, %s)) = %+v, %v", name, r, c, err)
			}
		}
	}
}

// verify refuses a token that is malformed, tampered with, signed by
// another key or another algorithm, without exp, or expired, each with
// its reason.
func TestTokenRefused(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	exp := now.Unix() + 3600
	good, err := sign(testKey, claims{Sub: "alice", Role: roleUser, Exp: &exp})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	const header = `{"alg":"HS256","typ":"JWT"}`
	payload := fmt.Sprintf(`{"sub":"alice","role":"user","exp":%d}`, exp)
	for _, tc := range []struct {
		name, token string
		want        error
	}{
		// Tampered with: the signature is of other bytes.
		{"tampered payload", parts[0] + "." + b64(`{"sub":"bob","role":"user","exp":`+fmt.Sprint(exp)+`}`) + "." + parts[2], errTokenSignature},
		{"tampered role", parts[0] + "." + b64(`{"sub":"alice","role":"moderator","exp":`+fmt.Sprint(exp)+`}`) + "." + parts[2], errTokenSignature},
		{"tampered exp", parts[0] + "." + b64(fmt.Sprintf(`{"sub":"alice","role":"user","exp":%d}`, exp+1)) + "." + parts[2], errTokenSignature},
		{"tampered signature", parts[0] + "." + parts[1] + "." + b64("0123456789abcdef0123456789abcdef"), errTokenSignature},
		{"short signature", parts[0] + "." + parts[1] + "." + parts[2][:20], errTokenSignature},
		{"no signature", parts[0] + "." + parts[1] + ".", errTokenSignature},
		{"another key", signParts(secret("another key, of at least thirty-two bytes"), header, payload), errTokenSignature},
		// Not base64url without padding.
		{"padding", parts[0] + "." + parts[1] + "." + parts[2] + "=", errTokenMalformed},
		{"standard alphabet", parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+", errTokenMalformed},
		{"bad character", parts[0] + ".!" + parts[1] + "." + parts[2], errTokenMalformed},
		{"line break", parts[0] + "." + parts[1][:4] + "\n" + parts[1][4:] + "." + parts[2], errTokenMalformed},
		{"stray bits", parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-1] + "9", errTokenMalformed},
		// Not three parts.
		{"empty", "", errTokenMalformed},
		{"two parts", parts[0] + "." + parts[1], errTokenMalformed},
		{"four parts", good + "." + parts[2], errTokenMalformed},
		{"too long", good + strings.Repeat("A", maxToken), errTokenMalformed},
		// The algorithm is HS256, always.
		{"alg none", b64(`{"alg":"none","typ":"JWT"}`) + "." + parts[1] + ".", errTokenAlg},
		{"alg HS512", signParts(testKey, `{"alg":"HS512","typ":"JWT"}`, payload), errTokenAlg},
		{"alg lower case", signParts(testKey, `{"alg":"hs256","typ":"JWT"}`, payload), errTokenAlg},
		{"alg missing", signParts(testKey, `{"typ":"JWT"}`, payload), errTokenAlg},
		{"typ other", signParts(testKey, `{"alg":"HS256","typ":"JWS"}`, payload), errTokenAlg},
		{"header with kid", signParts(testKey, `{"alg":"HS256","typ":"JWT","kid":"1"}`, payload), errTokenMalformed},
		{"header not JSON", signParts(testKey, `HS256`, payload), errTokenMalformed},
		// Signed, but claims the service would never write.
		{"exp missing", signParts(testKey, header, `{"sub":"alice","role":"user"}`), errTokenMalformed},
		{"exp null", signParts(testKey, header, `{"sub":"alice","role":"user","exp":null}`), errTokenMalformed},
		{"exp a string", signParts(testKey, header, `{"sub":"alice","role":"user","exp":"1"}`), errTokenMalformed},
		{"exp a fraction", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice","role":"user","exp":%d.5}`, exp)), errTokenMalformed},
		{"sub missing", signParts(testKey, header, fmt.Sprintf(`{"role":"user","exp":%d}`, exp)), errTokenMalformed},
		{"sub blank", signParts(testKey, header, fmt.Sprintf(`{"sub":"  ","role":"user","exp":%d}`, exp)), errTokenMalformed},
		{"sub not printable", signParts(testKey, header, fmt.Sprintf(`{"sub":"a\u200bb","role":"user","exp":%d}`, exp)), errTokenMalformed},
		{"sub with a trailing space", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice ","role":"user","exp":%d}`, exp)), errTokenMalformed},
		{"sub with a leading NBSP", signParts(testKey, header, fmt.Sprintf(`{"sub":"\u00a0alice","role":"user","exp":%d}`, exp)), errTokenMalformed},
		{"sub too long", signParts(testKey, header, fmt.Sprintf(`{"sub":"%s","role":"user","exp":%d}`, strings.Repeat("a", voting.MaxNameLen+1), exp)), errTokenMalformed},
		{"role unknown", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice","role":"admin","exp":%d}`, exp)), errTokenMalformed},
		{"role missing", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice","exp":%d}`, exp)), errTokenMalformed},
		{"unknown claim", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice","role":"user","exp":%d,"iat":1}`, exp)), errTokenMalformed},
		{"claims an array", signParts(testKey, header, `["alice"]`), errTokenMalformed},
		{"data after the claims", signParts(testKey, header, payload+"{}"), errTokenMalformed},
		// Expired: exp is the first second it is refused.
		{"expired", signParts(testKey, header, fmt.Sprintf(`{"sub":"alice","role":"user","exp":%d}`, now.Unix())), errTokenExpired},
		{"long expired", signParts(testKey, header, `{"sub":"alice","role":"user","exp":0}`), errTokenExpired},
	} {
		c, err := verify(testKey, tc.token, now)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: verify = %+v, %v; want %v", tc.name, c, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), string(testKey)) {
			t.Errorf("%s: the error %q holds the secret", tc.name, err)
		}
	}
	if _, err := verify(testKey, good, now.Add(time.Hour-time.Second)); err != nil {
		t.Errorf("a token a second before it expires: %v", err)
	}
	if _, err := verify(testKey, good, now.Add(time.Hour)); !errors.Is(err, errTokenExpired) {
		t.Errorf("a token at its exp: %v", err)
	}
}

// sign refuses the claims verify would refuse.
func TestSignRefuses(t *testing.T) {
	exp := int64(1)
	for _, c := range []claims{
		{Sub: "alice", Role: roleUser},
		{Sub: "", Role: roleUser, Exp: &exp},
		{Sub: " ", Role: roleUser, Exp: &exp},
		{Sub: strings.Repeat("u", voting.MaxNameLen+1), Role: roleUser, Exp: &exp},
		{Sub: "tab\there", Role: roleUser, Exp: &exp},
		{Sub: "alice", Role: "admin", Exp: &exp},
		{Sub: "alice", Exp: &exp},
	} {
		if token, err := sign(testKey, c); err == nil {
			t.Errorf("sign(%+v) = %q", c, token)
		}
	}
}
