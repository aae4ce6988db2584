module github.com/votekit/voting

go 1.22

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/gomodule/redigo v1.9.3
)

require github.com/yuin/gopher-lua v1.1.1 // indirect
