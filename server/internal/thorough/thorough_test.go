package thorough

import "testing"

func TestEnabled(t *testing.T) {
	for value, want := range map[string]bool{"": false, "0": false, "false": false, "no": false, "1": true, "true": true} {
		t.Setenv(Env, value)
		if got := Enabled(); got != want {
			t.Errorf("%s=%q: Enabled() = %v, want %v", Env, value, got, want)
		}
	}
}

func TestRequireSkipsUnlessEnabled(t *testing.T) {
	t.Setenv(Env, "")
	t.Run("off", func(t *testing.T) {
		Require(t, "a planted-bug run")
		t.Fatal("Require did not skip with the variable unset")
	})
	t.Setenv(Env, "1")
	ran := false
	t.Run("on", func(t *testing.T) {
		Require(t, "a planted-bug run")
		ran = true
	})
	if !ran {
		t.Error("Require skipped with the variable set")
	}
}
