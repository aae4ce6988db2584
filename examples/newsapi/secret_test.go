package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSecret writes content to a file of the test's and returns its
// path.
func writeSecret(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The service takes its secret from one place, of at least minSecret
// bytes; its errors name where to give one and never hold it.
func TestSecretKey(t *testing.T) {
	const long = "0123456789abcdef0123456789abcdef-long-enough"
	short := strings.Repeat("s", minSecret-1)
	for _, tc := range []struct {
		name  string
		flags secretFlags
		want  string // the key, or "" for an error
		err   string // what the error says
	}{
		{"env", secretFlags{env: secret(long)}, long, ""},
		{"file", secretFlags{file: writeSecret(t, long)}, long, ""},
		{"file with a line break", secretFlags{file: writeSecret(t, long+"\n")}, long, ""},
		{"file with a CRLF", secretFlags{file: writeSecret(t, long+"\r\n")}, long, ""},
		{"file with two line breaks", secretFlags{file: writeSecret(t, long+"\n\n")}, long + "\n", ""},
		{"exactly minSecret", secretFlags{env: secret(long[:minSecret])}, long[:minSecret], ""},
		{"insecure dev", secretFlags{insecureDev: true}, devSecret, ""},
		{"none", secretFlags{}, "", "no secret to sign tokens with: give -secret-file PATH or set NEWSAPI_SECRET (at least 32 bytes), or, for a trial on your own machine only, -insecure-dev"},
		{"short env", secretFlags{env: secret(short)}, "", "NEWSAPI_SECRET: the secret is 31 bytes; it must have at least 32"},
		{"short file", secretFlags{file: writeSecret(t, short+"\n")}, "", "the secret is 31 bytes; it must have at least 32"},
		{"empty file", secretFlags{file: writeSecret(t, "")}, "", "the secret is 0 bytes"},
		{"missing file", secretFlags{file: "/nonexistent/newsapi.secret"}, "", "-secret-file /nonexistent/newsapi.secret: no such file or directory"},
		{"a directory", secretFlags{file: t.TempDir()}, "", "is a directory"},
		{"big file", secretFlags{file: writeSecret(t, strings.Repeat(long, maxSecretFile))}, "", "the file is over 4096 bytes"},
		{"env and file", secretFlags{env: secret(long), file: writeSecret(t, long)}, "", "give the secret one way only: -secret-file, NEWSAPI_SECRET or -insecure-dev"},
		{"env and dev", secretFlags{env: secret(long), insecureDev: true}, "", "one way only"},
		{"file and dev", secretFlags{file: writeSecret(t, long), insecureDev: true}, "", "one way only"},
	} {
		key, err := tc.flags.key()
		switch {
		case tc.want != "" && (err != nil || string(key) != tc.want):
			t.Errorf("%s: key() = %q, %v; want %q", tc.name, key, err, tc.want)
		case tc.want == "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: key() = %v, want an error with %q", tc.name, err, tc.err)
		case err != nil && (strings.Contains(err.Error(), short) || strings.Contains(err.Error(), long[:minSecret])):
			t.Errorf("%s: the error %q holds the secret", tc.name, err)
		}
	}
}

// A secret printed by mistake shows nothing of itself.
func TestSecretHidden(t *testing.T) {
	const text = "a secret that must not be printed, anywhere"
	hex := fmt.Sprintf("%x", text)
	for _, format := range []string{"%v", "%s", "%x", "%X", "%q", "%#v", "%+v"} {
		if got := fmt.Sprintf(format, secret(text)); strings.Contains(got, "printed") || strings.Contains(strings.ToLower(got), hex) {
			t.Errorf("Sprintf(%q, a secret) = %q", format, got)
		}
	}
}
