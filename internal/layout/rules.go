package layout

import (
	"fmt"
	"strconv"
	"strings"
)

// The rules record, at Rules ("{prefix}:rules"; voting.Rules,
// Store.SetRules), holds the numbers of the rules that are on as words,
// one a rule, separated by a space, in RuleNames' order: a rule's name,
// "=" and its numbers, RuleArity of them, comma-separated, spans in whole
// milliseconds ("karma=1,-1 votelimit=10,60000"). A rule on without
// numbers of its own is its bare name ("votelimit"): what a process
// opened as recorded sends its scripts for it (voting.Identity
// .StoreOptions), and what the record reads as where neither the store
// nor the process has numbers for it. Layout 5's identity wrote its
// rules' words the same. lib/rules.lua reads the words (ruleWords,
// ruleNumbers) and writes the record (mergeRules); a test of the package
// voting holds the two to this codec.

// RuleArity is how many numbers each rule has in its word, by its place
// in RuleNames.
var RuleArity = [len(RuleNames)]int{2, 2, 2, 2, 1, 1, 1, 1}

// RuleIndex returns the place of the rule name in RuleNames; ok is false
// for a name no rule has.
func RuleIndex(name string) (i int, ok bool) {
	for i, r := range RuleNames {
		if r == name {
			return i, true
		}
	}
	return -1, false
}

// RuleWord is one word of the rules record: a rule's name and its
// numbers, none for a bare name.
type RuleWord struct {
	Name    string
	Numbers []int64
}

// String returns w as the record writes it: "votelimit=10,60000", or
// the bare name.
func (w RuleWord) String() string {
	if len(w.Numbers) == 0 {
		return w.Name
	}
	b := append([]byte(w.Name), '=')
	for i, n := range w.Numbers {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(b)
}

// FormatRules returns the rules record of words, in their order.
func FormatRules(words []RuleWord) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = w.String()
	}
	return strings.Join(s, " ")
}

// ParseRuleWord parses one word of the rules record: a rule of
// RuleNames, bare or with its RuleArity numbers. Anything else is an
// error that wraps ErrMalformed.
func ParseRuleWord(word string) (RuleWord, error) {
	name, value, hasValue := strings.Cut(word, "=")
	i, ok := RuleIndex(name)
	if !ok {
		return RuleWord{}, fmt.Errorf("%w: unknown rule %q", ErrMalformed, word)
	}
	w := RuleWord{Name: name}
	if !hasValue {
		return w, nil
	}
	for _, f := range strings.Split(value, ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return RuleWord{}, fmt.Errorf("%w: rule %q is not numbers", ErrMalformed, word)
		}
		w.Numbers = append(w.Numbers, n)
	}
	if len(w.Numbers) != RuleArity[i] {
		return RuleWord{}, fmt.Errorf("%w: rule %q has %d numbers, not %d", ErrMalformed, word, len(w.Numbers), RuleArity[i])
	}
	return w, nil
}

// ParseRules parses a rules record into its words, in their order
// (ParseRuleWord); its first word that is none is the error.
func ParseRules(text string) ([]RuleWord, error) {
	var words []RuleWord
	for _, f := range strings.Fields(text) {
		w, err := ParseRuleWord(f)
		if err != nil {
			return nil, err
		}
		words = append(words, w)
	}
	return words, nil
}
