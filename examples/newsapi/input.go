package main

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxLink is the longest link the service takes, in bytes: the length
// browsers and crawlers agree on. The store would keep up to
// voting.MaxLinkLen.
const maxLink = 2048

// checkArticle applies the service's own rules to an article's title and
// link, at its edge (the store keeps bytes as given): a title of valid
// UTF-8 without control characters; no link, or an http or https URL of
// at most maxLink bytes with a host, no spaces and no user name or
// password. The store checks the rest (a blank or over-long title).
func checkArticle(title, link string) error {
	switch {
	case !utf8.ValidString(title):
		return invalid("invalid argument: title is not valid UTF-8")
	case strings.ContainsFunc(title, unicode.IsControl):
		return invalid("invalid argument: title contains a control character (such as a line break or tab)")
	}
	if link == "" {
		return nil
	}
	const want = "it must be an http or https URL such as https://example.com/page, or empty"
	if len(link) > maxLink {
		return invalid("invalid argument: link is longer than %d bytes", maxLink)
	}
	if !utf8.ValidString(link) || strings.ContainsFunc(link, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return invalid("invalid argument: link contains a space, a control character or invalid UTF-8; %s", want)
	}
	u, err := url.Parse(link)
	if err != nil || !u.IsAbs() {
		return invalid("invalid argument: link is not a URL; %s", want)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return invalid("invalid argument: link's scheme %q is not http or https; %s", u.Scheme, want)
	}
	if u.Host == "" || u.Hostname() == "" {
		return invalid("invalid argument: link has no host; %s", want)
	}
	if u.User != nil {
		return invalid("invalid argument: link has a user name or password, which the service does not take")
	}
	return nil
}
