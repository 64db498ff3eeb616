package wire

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// AppendJSON writes what json.Marshal writes, for every kind of sample.
func TestRunRequestAppendJSON(t *testing.T) {
	ev := EventSample{Events: [][2]int{{0, 3}, {2, 9}, {7, 0}, {10, 99}, {100, 999}, {1000, 9999}, {10000, 123456}, {-1, -10}, {-100, -99999}}, Timesteps: 8}
	var nilEvents *EventSample
	changed := ev.Pack()
	changed.Events = `"<changed after Pack>"`
	raster, err := EventSample{Events: [][2]int{{0, 3}, {2, 9}, {7, 0}}, Timesteps: 8}.Raster(10)
	if err != nil {
		t.Fatal(err)
	}
	changedRaster := raster
	changedRaster.Raster = "<changed>"
	for _, r := range []RunRequest{
		{},
		{Inputs: []any{}},
		{Inputs: []any{ev, &ev, nilEvents, EventSample{}, ev.Pack(), []float32{1, 0.5, -2}, [][]float32{{1}, {0}}, nil,
			PackedEventSample{Events: "not \"base64\" <&>\u2028", Timesteps: 2}, changed, raster, changedRaster},
			Timesteps: 8, Record: []string{"spikes", "membrane"}, Model: "a<b>&c", Seed: -3},
		{Inputs: []any{ev}, Seed: 1},
	} {
		want, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON([]byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "x"+string(want) {
			t.Errorf("AppendJSON wrote\n%s\njson.Marshal writes\n%s", got[1:], want)
		}
	}
	if _, err := (&RunRequest{Inputs: []any{make(chan int)}}).AppendJSON(nil); err == nil {
		t.Error("a sample json cannot write was accepted")
	}
}

// A batch large enough to be written in parts is written as json.Marshal
// writes it, and a sample json cannot write fails it from any part.
func TestRunRequestAppendJSONInParts(t *testing.T) {
	r := RunRequest{Timesteps: 100}
	for k := range 7 {
		ev := EventSample{Timesteps: 100}
		for j := range 20_000 {
			ev.Events = append(ev.Events, [2]int{j % 100, (j * (k + 3)) % 700})
		}
		r.Inputs = append(r.Inputs, ev, []float32{float32(k)})
	}
	want, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < parallelJSON {
		t.Fatalf("%d bytes: too few to be written in parts", len(want))
	}
	got, err := r.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("AppendJSON wrote %d bytes, json.Marshal %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	r.Inputs[len(r.Inputs)-1] = make(chan int)
	if _, err := r.AppendJSON(nil); err == nil {
		t.Fatal("a sample json cannot write, in the last part, was accepted")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Raster sets one bit an event, least significant first, and refuses an
// event outside its steps or inputs.
func TestEventSampleRaster(t *testing.T) {
	r, err := EventSample{Events: [][2]int{{0, 0}, {0, 2}, {1, 1}, {2, 2}, {2, 2}}, Timesteps: 3}.Raster(3)
	if err != nil {
		t.Fatal(err)
	}
	// bits 0, 2, 4 and 8: 0b00010101, 0b00000001
	if want := base64.StdEncoding.EncodeToString([]byte{0x15, 0x01}); r.Raster != want || r.Timesteps != 3 {
		t.Errorf("raster %q, want %q", r.Raster, want)
	}
	for _, ev := range []EventSample{
		{Events: [][2]int{{3, 0}}, Timesteps: 3},
		{Events: [][2]int{{0, 3}}, Timesteps: 3},
		{Events: [][2]int{{-1, 0}}, Timesteps: 3},
		{Timesteps: 0},
	} {
		if _, err := ev.Raster(3); err == nil {
			t.Errorf("%+v made a raster of 3 inputs", ev)
		}
	}
}
