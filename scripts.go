package voting

import (
	_ "embed"

	"github.com/gomodule/redigo/redis"
)

// Every mutation and every read is one Lua script, so it is atomic and
// costs one round trip. The sources live in lua/, each with a header naming
// its KEYS, ARGV and reply. Read scripts are prefixed with lua/rows.lua, the
// one helper that shapes article rows for reply.go.
var (
	//go:embed lua/rows.lua
	rowsLua string
	//go:embed lua/post.lua
	postLua string
	//go:embed lua/vote.lua
	voteLua string
	//go:embed lua/article.lua
	articleLua string
	//go:embed lua/page.lua
	pageLua string
	//go:embed lua/votes.lua
	votesLua string
	//go:embed lua/group_add.lua
	groupAddLua string
	//go:embed lua/group_remove.lua
	groupRemoveLua string
	//go:embed lua/groups.lua
	groupsLua string
	//go:embed lua/group_page.lua
	groupPageLua string
	//go:embed lua/delete.lua
	deleteLua string
)

// A keyCount of -1 means the caller passes the key count as the first
// argument (redigo's convention), for scripts whose number of keys varies.
var (
	postScript        = redis.NewScript(3, postLua)
	voteScript        = redis.NewScript(3, voteLua)
	articleScript     = redis.NewScript(1, rowsLua+articleLua)
	pageScript        = redis.NewScript(2, rowsLua+pageLua)
	votesScript       = redis.NewScript(-1, votesLua)
	groupAddScript    = redis.NewScript(-1, groupAddLua)
	groupRemoveScript = redis.NewScript(-1, groupRemoveLua)
	groupsScript      = redis.NewScript(2, groupsLua)
	groupPageScript   = redis.NewScript(4, rowsLua+groupPageLua)
	deleteScript      = redis.NewScript(5, deleteLua)
)
