package xylo

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestRockpoolDash compares the conversion's time-constant rules with
// Rockpool's own functions, run by testdata/rockpool/gen.py:
// calc_bitshift_decay (τ → dash) for every τ/dt in (1, 2^17), powers of
// two and the half-way points included, and bitshift_to_tau (dash → τ).
// It checks the conversion's rules only; no runnable Rockpool code models
// the integer core (gen.py says why).
func TestRockpoolDash(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rockpool", "dash.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Dash []struct {
			Tau, Dt float64
			Dash    int
		} `json:"calc_bitshift_decay"`
		Tau []struct {
			Dash    uint8
			Dt, Tau float64
		} `json:"bitshift_to_tau"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, c := range ref.Dash {
		d, err := dash("n", "tau_mem", c.Tau, c.Dt)
		if c.Dash > MaxDash {
			// Rockpool's rule has no ceiling; the chip's field has 4 bits.
			if err == nil {
				t.Errorf("τ %g dt %g: Rockpool's dash %d is past the chip's %d, but dash gave %d", c.Tau, c.Dt, c.Dash, MaxDash, d)
			}
			refused++
			continue
		}
		if err != nil || int(d) != c.Dash {
			t.Errorf("τ %g dt %g: dash %d (%v), Rockpool %d", c.Tau, c.Dt, d, err, c.Dash)
		}
	}
	for _, c := range ref.Tau {
		if got := tauEff(c.Dash, c.Dt); math.Abs(got-c.Tau) > 1e-12*c.Tau {
			t.Errorf("dash %d dt %g: tauEff %g, Rockpool's bitshift_to_tau %g", c.Dash, c.Dt, got, c.Tau)
		}
	}
	t.Logf("%d time constants give Rockpool's dash (%d of them past 4 bits, refused); %d dash → τ equal to 1e-12", len(ref.Dash), refused, len(ref.Tau))
	if len(ref.Dash) < 1000 || refused == 0 {
		t.Errorf("the vectors no longer cover the range (%d cases, %d past 4 bits)", len(ref.Dash), refused)
	}
}
