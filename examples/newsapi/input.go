package main

// maxLink is the longest link the service takes, in bytes: the length
// browsers and crawlers agree on. The store would keep up to
// voting.MaxLinkLen.
const maxLink = 2048

// checkArticle applies the service's own rule to an article's link, at
// its edge: at most maxLink bytes. The store checks the rest, and
// refuses with voting.ErrInvalidArgument, a 400: a blank or over-long
// title, or one with a control character, a bidi control or a line
// separator; a link that is not an http or https URL with a host and no
// user info.
func checkArticle(link string) error {
	if len(link) > maxLink {
		return invalid("invalid argument: link is longer than %d bytes", maxLink)
	}
	return nil
}
