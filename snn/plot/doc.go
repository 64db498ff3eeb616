// Package plot draws what an snn.Recorder kept: spike rasters and membrane
// traces, as PNG, SVG or PDF, with gonum/plot.
//
// # Overview
//
// Raster draws one dot per spike: time in milliseconds across, neuron
// index up, one colour per node, the nodes stacked in bands from the
// bottom. RasterEvents does the same from spike events gathered any other
// way. Traces draws one line per recorded neuron of a state variable
// (membrane potential v by default), with the firing threshold and the
// spikes marked if asked.
//
// Both return a Figure: the gonum plot, open to changes (titles, axis
// ranges, extra plotters), and its size. Figure.Save picks the format from
// the file's extension; Figure.Encode writes to any io.Writer.
//
//	rec, _ := snn.NewRecorder(sim, nil) // every spiking node
//	for range 300 {
//		rec.Step(input)
//	}
//	fig, _ := plot.Raster(rec, nil)
//	fig.Save("raster.png")
//
// # Invariants
//
// A spike recorded at simulator step s is drawn at s × dt: the end of the
// step, when the threshold was crossed (see snn.SpikeEvent). Traces are
// drawn at the same times, so a membrane sample that was reset by a spike
// lies under that spike's mark.
//
// The package keeps no state: the same recording gives the same picture.
package plot
