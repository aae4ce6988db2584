package voting

// keys names every Redis key of one store; nothing else in the package
// builds a key name. Every name starts with "{prefix}:", a Redis Cluster
// hash tag, so all keys of a store live in one hash slot and one script may
// touch any of them. The layout:
//
//	{p}:seq                     string  last issued article id
//	{p}:by:<ordering>           zset    member -> the article's value in an ordering
//	{p}:top:<size>:<n>          zset    member -> net votes, for articles posted in
//	                                    [n*size, (n+1)*size) seconds (TopSince)
//	{p}:article:<id>            hash    title, link, poster, posted, closes, weight,
//	                                    orders, up, down
//	{p}:voted:<id>              hash    user -> 1 or -1, and "" -> 0 (keeps it alive);
//	                                    expires when voting closes
//	{p}:groups:<id>             set     names of the groups the article is in
//	{p}:group:<name>            set     members of the group
//	{p}:cache:<ordering>:<name> zset    the group ∩ {p}:by:<ordering>, built in steps
//	{p}:link:<link>             string  the id of the live article with that link
//
// The orderings are score, time, top, hot, best and controversial. A
// member is an article id prefixed by its digit count as a letter ("a7",
// "b12"), so that members of equal value sort by id as numbers.
//
// Scripts that reach keys named after an id, a group, an ordering or a
// bucket receive the family prefix from here and append only that name.
// No family's fixed part is a prefix of another's, and ids are canonical
// decimals, so no id or group name can reach another family's keys.
type keys struct {
	prefix string // as given to WithKeyPrefix, without braces
	seq    string
	// The family prefixes to which a name is appended.
	by, topBucket, article, voted, groupsOf, group, cache, link string
}

func newKeys(prefix string) keys {
	tag := "{" + prefix + "}:"
	return keys{
		prefix:    prefix,
		seq:       tag + "seq",
		by:        tag + "by:",
		topBucket: tag + "top:",
		article:   tag + "article:",
		voted:     tag + "voted:",
		groupsOf:  tag + "groups:",
		group:     tag + "group:",
		cache:     tag + "cache:",
		link:      tag + "link:",
	}
}

func (k keys) articleKey(id string) string  { return k.article + id }
func (k keys) votedKey(id string) string    { return k.voted + id }
func (k keys) groupsOfKey(id string) string { return k.groupsOf + id }
func (k keys) groupKey(name string) string  { return k.group + name }

// orderingKey returns the zset of an ordering ("score", "time", "top", ...).
func (k keys) orderingKey(ordering string) string { return k.by + ordering }

// cacheKey returns the cached page of a group in an ordering. Both
// directions of one ordering share a cache.
func (k keys) cacheKey(group, ordering string) string { return k.cache + ordering + ":" + group }

// pattern returns a SCAN pattern that matches every key of the store and
// nothing else: the prefix's glob characters are escaped.
func (k keys) pattern() string {
	p := make([]byte, 0, 2*len(k.prefix)+4)
	p = append(p, '{')
	for i := 0; i < len(k.prefix); i++ {
		switch c := k.prefix[i]; c {
		case '*', '?', '[', ']', '\\':
			p = append(p, '\\', c)
		default:
			p = append(p, c)
		}
	}
	return string(append(p, "}:*"...))
}
