package voting_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/votekit/voting"
	"github.com/votekit/voting/testkit/storetest"
)

// TestStoretest runs testkit/storetest, the behavioural suite the
// goredis module runs over its adapter, over redigo pools on the three
// backends: the suite holds to what the store does here.
func TestStoretest(t *testing.T) {
	voting.ForEachPoolBackend(t, func(t *testing.T, name string,
		pool func(testing.TB, string) voting.Pool,
		do func(testing.TB, string, string, ...interface{}) (interface{}, error),
		trips func() int64, conns func(string) (int, int)) {
		b := storetest.Backend{Name: name, Pool: pool, Do: do, Trips: trips, Real: name != "miniredis", Conns: conns}
		t.Run("Behaviour", func(t *testing.T) { storetest.Behaviour(t, b) })
		t.Run("RoundTrips", func(t *testing.T) { storetest.RoundTrips(t, b) })
		t.Run("ScriptFlush", func(t *testing.T) { storetest.ScriptFlush(t, b) })
		t.Run("ContextDeadline", func(t *testing.T) { storetest.ContextDeadline(t, b) })
	})
}

// TestStoretestCoversStore keeps the suite's list of methods complete:
// every method of Store but Drop.
func TestStoretestCoversStore(t *testing.T) {
	var want []string
	typ := reflect.TypeOf(&voting.Store{})
	for i := 0; i < typ.NumMethod(); i++ {
		// Drop takes a round trip per SCAN step, Check several commands,
		// Recorded a GET, CheckIdentity a GET and a TYPE, Identity none:
		// the suite's methods take one script each.
		if name := typ.Method(i).Name; name != "Drop" && name != "Check" && name != "Recorded" && name != "CheckIdentity" && name != "Identity" {
			want = append(want, name)
		}
	}
	got := storetest.MethodNames()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("storetest calls %v, Store has %v (less Drop)", got, want)
	}
}
