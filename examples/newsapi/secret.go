package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// The secret that signs and checks the service's tokens (token.go): read
// from -secret-file or NEWSAPI_SECRET, or with -insecure-dev a fixed
// development secret that everyone can read in this file.

// secretEnv is the environment variable that may hold the secret.
const secretEnv = "NEWSAPI_SECRET"

// minSecret is the shortest secret the service takes, in bytes: as long
// as HMAC-SHA256's output, so that the key is not what gives way first.
const minSecret = 32

// maxSecretFile is the largest -secret-file the service reads: a secret
// file is a line; anything bigger is likely the wrong file.
const maxSecretFile = 4096

// devSecret is the secret of -insecure-dev. It is public: anyone can
// mint a token a service started with -insecure-dev takes, for any user
// and role.
const devSecret = "newsapi-insecure-dev-secret-public-never-use-in-production"

// devWarning is what the service and the token command say under
// -insecure-dev.
const devWarning = "WARNING: -insecure-dev: tokens are signed with a fixed, public development secret: " +
	"anyone can act as any user, moderators included. Never use it in production; give -secret-file or " + secretEnv + "."

// secret is a signing key. Its String and GoString hide it, so that a
// secret printed by mistake (%v, %s, %x, %q, %#v) shows nothing of it;
// fmt cannot call them on an unexported field of a struct, so structs
// that hold one are never printed either.
type secret []byte

func (secret) String() string   { return "[secret]" }
func (secret) GoString() string { return "[secret]" }

// secretFlags say where the secret comes from.
type secretFlags struct {
	file        string // -secret-file
	env         secret // the value of NEWSAPI_SECRET, as main read it
	insecureDev bool   // -insecure-dev
}

// register defines -secret-file and -insecure-dev on fs.
func (f *secretFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "secret-file", "", fmt.Sprintf("read the secret that signs tokens from the file at `PATH`: at least %d bytes, "+
		"one trailing newline dropped (e.g. made by openssl rand -hex 32); or set %s", minSecret, secretEnv))
	fs.BoolVar(&f.insecureDev, "insecure-dev", false, "for trials on your own machine only: sign tokens with a fixed, public development "+
		"secret, so that anyone can act as anyone, and log a warning; never in production")
}

// key returns the secret f names. It refuses none, more than one, and
// one shorter than minSecret bytes; its errors never hold the secret.
func (f secretFlags) key() (secret, error) {
	given := 0
	for _, set := range []bool{f.file != "", len(f.env) > 0, f.insecureDev} {
		if set {
			given++
		}
	}
	switch {
	case given == 0:
		return nil, fmt.Errorf("no secret to sign tokens with: give -secret-file PATH or set %s (at least %d bytes), "+
			"or, for a trial on your own machine only, -insecure-dev", secretEnv, minSecret)
	case given > 1:
		return nil, fmt.Errorf("give the secret one way only: -secret-file, %s or -insecure-dev", secretEnv)
	case f.insecureDev:
		return secret(devSecret), nil
	}
	where, key := secretEnv, f.env
	if f.file != "" {
		where = "-secret-file " + f.file
		var err error
		if key, err = readSecretFile(f.file); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	if len(key) < minSecret {
		return nil, fmt.Errorf("%s: the secret is %d bytes; it must have at least %d (openssl rand -hex 32 makes one of 64)", where, len(key), minSecret)
	}
	return key, nil
}

// readSecretFile returns the contents of the file at path, without one
// trailing line break. Its errors say what went wrong, never what the
// file holds.
func readSecretFile(path string) (secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, reason(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, reason(err)
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("the file is over %d bytes: a secret file holds the secret alone", maxSecretFile)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r")), nil
}

// reason is the reason of a file's error without the operation and path
// that an *os.PathError repeats: the caller names the file already.
func reason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
