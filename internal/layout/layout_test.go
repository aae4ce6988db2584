package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lib returns the text of lua/lib/, every file.
func lib(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("../../lua/lib/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("lua/lib: %v, %d files", err, len(files))
	}
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}

// luaLocals returns the values of the Lua locals names declares in one
// statement, "local A, B = 1, 2", as written.
func luaLocals(t *testing.T, src string, names ...string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^local ` + strings.Join(names, `, `) + ` = (.*)$`)
	m := re.FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("lua/lib declares no local %s", strings.Join(names, ", "))
	}
	value := strings.TrimSpace(regexp.MustCompile(`\s*--.*$`).ReplaceAllString(m[1], ""))
	if len(names) == 1 {
		return []string{value}
	}
	v := strings.Split(value, ",")
	for i := range v {
		v[i] = strings.TrimSpace(v[i])
	}
	if len(v) != len(names) {
		t.Fatalf("local %s = %s: %d values", strings.Join(names, ", "), m[1], len(v))
	}
	return v
}

// TestLuaAgrees: the numbers lua/lib keeps as locals are this package's.
func TestLuaAgrees(t *testing.T) {
	src := lib(t)
	want := func(what, got string, n int64) {
		t.Helper()
		if got != strconv.FormatInt(n, 10) {
			t.Errorf("%s: lua/lib says %s, internal/layout %d", what, got, n)
		}
	}
	v := luaLocals(t, src, "OK", "NOT_FOUND", "CLOSED", "DUPLICATE", "BUILDING", "LIMIT", "CORRUPT")
	for i, n := range []int64{StatusOK, StatusNotFound, StatusClosed, StatusDuplicate, StatusBuilding, StatusLimit, StatusCorrupt} {
		want("status "+strconv.Itoa(i), v[i], n)
	}
	v = luaLocals(t, src, "NOT_ALLOWED", "RATE_LIMITED")
	want("NOT_ALLOWED", v[0], StatusNotAllowed)
	want("RATE_LIMITED", v[1], StatusRateLimited)
	want("INVALID", luaLocals(t, src, "INVALID")[0], StatusInvalid)
	v = luaLocals(t, src, "COUNTS", "COUNT_DIGITS", "MAX_COUNT")
	want("COUNT_DIGITS", v[1], CountDigits)
	want("MAX_COUNT", v[2], MaxCount)
	if v[0] != "'%010d %010d'" || CountDigits != 10 {
		t.Errorf("COUNTS %s is not two counts of CountDigits (%d) digits", v[0], CountDigits)
	}
	want("TOP_BASE", luaLocals(t, src, "TOP_BASE")[0], TopBase)
	buckets := luaLocals(t, src, "BUCKETS")[0]
	var list []string
	for _, n := range BucketSizes {
		list = append(list, strconv.FormatInt(n, 10))
	}
	if buckets != "{"+strings.Join(list, ", ")+"}" {
		t.Errorf("BUCKETS: lua/lib says %s, internal/layout %v", buckets, BucketSizes)
	}
	quoted := func(list []string) string { return "{'" + strings.Join(list, "', '") + "'}" }
	if got := luaLocals(t, src, "ORDERS")[0]; got != quoted(OptionalOrders) {
		t.Errorf("ORDERS: lua/lib says %s, internal/layout %q", got, OptionalOrders)
	}
	if got := luaLocals(t, src, "CORDERINGS")[0]; got != quoted(CommentOrderings) {
		t.Errorf("CORDERINGS: lua/lib says %s, internal/layout %q", got, CommentOrderings)
	}
	// The members: lib/base.lua's and lib/tree.lua's encodings.
	if !strings.Contains(src, "local function member(id) return string.char("+strconv.Itoa(MemberBase)+" + #id) .. id end") ||
		!strings.Contains(src, "local function topMember(id) return string.char("+strconv.Itoa(TopMemberBase)+" + #id) .. id end") {
		t.Errorf("lua/lib encodes members otherwise than Member and TopMember")
	}
}

func TestMembers(t *testing.T) {
	for _, id := range []string{"1", "9", "10", "1234567890"} {
		for _, m := range []string{Member(id), TopMember(id)} {
			if got, ok := IDOf(m); !ok || got != id {
				t.Errorf("IDOf(%q) = %q, %v", m, got, ok)
			}
		}
	}
	if Member("9") >= Member("10") {
		t.Errorf("members do not sort by id")
	}
	for _, m := range []string{"", "a", "b1", "a0", "b01", "ax", "c12"} {
		if _, ok := IDOf(m); ok {
			t.Errorf("IDOf(%q) is an id", m)
		}
	}
}
